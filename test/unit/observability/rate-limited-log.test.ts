import { describe, expect, it } from "vitest";
import type { Logger } from "../../../src/observability/logger.js";
import { RateLimitedLog } from "../../../src/observability/rate-limited-log.js";

function setup(intervalMs = 30_000) {
  let now = 1_000_000;
  const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  const logger = {
    warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }),
  } as unknown as Logger;
  const log = new RateLimitedLog(logger, { intervalMs, now: () => now });
  return {
    log,
    lines,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("RateLimitedLog", () => {
  it("writes the first error of an outage at once, then one line per interval with the count left out", () => {
    const { log, lines, advance } = setup();
    // A Redis outage: ten errors a second for 65 s.
    for (let i = 0; i < 650; i++) {
      log.warn("worker sync", { err: "ECONNREFUSED", queue: "sync" }, "worker error");
      advance(100);
    }
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual({ fields: { err: "ECONNREFUSED", queue: "sync" }, msg: "worker error" });
    expect(lines[1]!.fields).toEqual({ err: "ECONNREFUSED", queue: "sync", suppressed: 299 });
    expect(lines[2]!.fields).toEqual({ err: "ECONNREFUSED", queue: "sync", suppressed: 299 });
  });

  it("keeps keys apart", () => {
    const { log, lines } = setup();
    expect(log.warn("worker sync", { queue: "sync" }, "worker error")).toBe(true);
    expect(log.warn("worker lifecycle", { queue: "lifecycle" }, "worker error")).toBe(true);
    expect(log.warn("worker sync", { queue: "sync" }, "worker error")).toBe(false);
    expect(lines.map((l) => l.fields.queue)).toEqual(["sync", "lifecycle"]);
  });

  it("writes the first error of the next outage at once, with what the last one left unwritten", () => {
    const { log, lines, advance } = setup();
    log.warn("k", {}, "worker error");
    advance(1_000);
    log.warn("k", {}, "worker error");
    log.warn("k", {}, "worker error");
    // Redis is back for a while, then goes away again.
    advance(10 * 60_000);
    expect(log.warn("k", { err: "again" }, "worker error")).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[1]!.fields).toEqual({ err: "again", suppressed: 2 });
    expect(log.warn("k", {}, "worker error")).toBe(false);
  });

  it("reset() makes the next error of a key written at once", () => {
    const { log, lines } = setup();
    log.warn("k", {}, "m");
    expect(log.warn("k", {}, "m")).toBe(false);
    log.reset("k");
    expect(log.warn("k", {}, "m")).toBe(true);
    log.reset();
    expect(log.warn("k", {}, "m")).toBe(true);
    expect(lines).toHaveLength(3);
  });
});
