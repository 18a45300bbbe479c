/**
 * Benchmark child process: a whole bridge (`startBridge`, as `scim-bridge start` builds it from
 * SCIM_BRIDGE_CONFIG) plus a tiny control endpoint on 127.0.0.1 that answers the bridge's
 * `isIdle()` and the Redis commands it has sent.
 *
 * Plain JavaScript on the built bridge (`dist/`, what `npm start` and the image run), so that the
 * process's peak RSS and CPU are the bridge's own: under tsx, the loader's worker thread added about
 * 45 MB of RSS to an idle bridge (172 MB against 127 MB, measured 2026-11-26). bench-processes.ts
 * builds `dist/` first when it is older than the sources.
 *
 *   SCIM_BRIDGE_CONFIG=... node bench/sync/bridge-host.mjs --role all --control-port N
 *
 * BENCH_SYNC_EXPERIMENT=no-budget replaces RedisRequestBudget.acquire with a no-op (no shared
 * platform rate limit): an experiment to measure what the budget costs, never a recorded figure.
 *
 *   GET /idle          {"idle": boolean}
 *   GET /redis-stats   Redis commands this process has sent so far, by command name, scripts by
 *                      their first key (counted by wrapping ioredis' sendCommand, which pipelines
 *                      and scripts go through too)
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startBridge } from "../../dist/src/bridge.js";
import { loadConfigFile } from "../../dist/src/config/load-config.js";
import { createLogger } from "../../dist/src/observability/logger.js";
import { RedisRequestBudget } from "../../dist/src/platform/client/request-budget.js";

const { values } = parseArgs({
  options: { role: { type: "string", default: "all" }, "control-port": { type: "string" } },
});
const file = process.env.SCIM_BRIDGE_CONFIG;
if (!file || !values["control-port"]) {
  process.stderr.write("bridge-host: SCIM_BRIDGE_CONFIG and --control-port are required\n");
  process.exit(2);
}
/** @type {Record<string, number>} */
const redisCommands = {};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (...args) {
  const command = args[0];
  let name = command.name ?? "unknown";
  // Scripts are told apart by their first key (prefix and ids left out).
  if ((name === "eval" || name === "evalsha") && command.args && command.args.length > 2) {
    const key = String(command.args[2])
      .replace(/^\{[^}]*\}:?/, "")
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "*")
      .replace(/\d+/g, "#");
    name = `${name} ${key.slice(0, 60)}`;
  }
  redisCommands[name] = (redisCommands[name] ?? 0) + 1;
  return sendCommand.apply(this, args);
};

if (process.env.BENCH_SYNC_EXPERIMENT === "no-budget") {
  RedisRequestBudget.prototype.acquire = async () => {};
}

const config = loadConfigFile(file, process.env);
const logger = createLogger(config.logLevel);
const bridge = await startBridge(config, { role: values.role, logger });

const control = createServer((req, res) => {
  if (req.url === "/redis-stats") {
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(redisCommands));
    return;
  }
  if (req.url !== "/idle") {
    res.writeHead(404).end();
    return;
  }
  bridge.isIdle().then(
    (idle) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ idle })),
    (err) => res.writeHead(500).end(String(err)),
  );
});
control.listen(Number(values["control-port"]), "127.0.0.1");

const stop = () => {
  control.close();
  bridge.close().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
