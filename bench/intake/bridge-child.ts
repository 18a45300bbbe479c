/**
 * The bridge under test, in its own process: `startBridge(config, {role: "api"})` (sync jobs are
 * enqueued, never processed). Reads its config (JSON) from BENCH_BRIDGE_CONFIG, answers
 * `{ready: url}` over IPC, answers `{cpu: true}` with its `process.cpuUsage()`, and closes on `{stop: true}` or when the parent goes away.
 */
import { configSchema } from "../../src/config/config-schema.js";
import { startBridge } from "../../src/bridge.js";

const raw = process.env.BENCH_BRIDGE_CONFIG;
if (!raw) throw new Error("BENCH_BRIDGE_CONFIG is not set");
const config = configSchema.parse(JSON.parse(raw));
const bridge = await startBridge(config, { role: "api" });

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
