/**
 * The bridge under test, in its own process: `startBridge(config, {role: "api"})` (sync jobs are
 * enqueued, never processed). Reads its config (JSON) from BENCH_BRIDGE_CONFIG, answers
 * `{ready: url}` over IPC, answers `{cpu: true}` with its `process.cpuUsage()`, and closes on
 * `{stop: true}` or when the parent goes away.
 *
 * BENCH_EXPERIMENT (comma-separated) tries a change outside the intake's own files, to measure it
 * before proposing it: `autopipeline` turns on ioredis enableAutoPipelining on every client of the
 * process; `asynclog` gives the bridge a logger writing through an asynchronous, buffered pino
 * destination instead of synchronous stdout writes.
 */
import { Redis } from "ioredis";
import { pino } from "pino";
import { startBridge } from "../../src/bridge.js";
import { configSchema } from "../../src/config/config-schema.js";
import { createLogger } from "../../src/observability/logger.js";

const raw = process.env.BENCH_BRIDGE_CONFIG;
if (!raw) throw new Error("BENCH_BRIDGE_CONFIG is not set");
const config = configSchema.parse(JSON.parse(raw));
const experiments = new Set((process.env.BENCH_EXPERIMENT ?? "").split(",").filter(Boolean));

if (experiments.has("autopipeline")) {
  const connect = Redis.prototype.connect;
  Redis.prototype.connect = function (this: Redis, ...args: Parameters<Redis["connect"]>) {
    this.options.enableAutoPipelining = true;
    return connect.apply(this, args);
  };
}
const destinations: Record<string, () => ReturnType<typeof pino.destination>> = {
  asynclog: () => pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  synclog: () => pino.destination({ dest: 1, sync: true }),
  syncbuflog: () => pino.destination({ dest: 1, sync: true, minLength: 4096 }),
};
const chosen = Object.keys(destinations).find((name) => experiments.has(name));
const logger = chosen ? createLogger(config.logLevel, {}, destinations[chosen]?.()) : undefined;

const bridge = await startBridge(config, { role: "api", logger });

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await bridge.close();
  process.exit(0);
};
process.on("message", (message: { stop?: boolean; cpu?: boolean }) => {
  if (message?.cpu) process.send?.({ cpuUsage: process.cpuUsage() });
  if (message?.stop) void stop();
});
process.on("disconnect", () => void stop());
process.send?.({ ready: bridge.url });
