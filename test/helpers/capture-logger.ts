import { Writable } from "node:stream";
import { createLogger } from "../../src/observability/logger.js";

/** A logger at `info` whose lines are parsed into `lines`, for tests that read what was logged. */
export function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("info", {}, sink) };
}
