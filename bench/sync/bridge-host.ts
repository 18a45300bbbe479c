/**
 * Benchmark child process: a whole bridge (`startBridge`, as `scim-bridge start` builds it from
 * SCIM_BRIDGE_CONFIG) plus a tiny control endpoint on 127.0.0.1 that answers the bridge's
 * `isIdle()`, for as long as the admin API's `GET /admin/v1/status` is not mounted by startBridge.
 *
 *   SCIM_BRIDGE_CONFIG=... node --import tsx bench/sync/bridge-host.ts --role all --control-port N
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
import { Redis } from "ioredis";
import { parseArgs } from "node:util";
import { type Role, startBridge } from "../../src/bridge.js";
import { loadConfigFile } from "../../src/config/load-config.js";
import { RedisRequestBudget } from "../../src/platform/client/request-budget.js";
import { createLogger } from "../../src/observability/logger.js";

const { values } = parseArgs({
  options: { role: { type: "string", default: "all" }, "control-port": { type: "string" } },
});
const file = process.env.SCIM_BRIDGE_CONFIG;
if (!file || !values["control-port"]) {
  process.stderr.write("bridge-host: SCIM_BRIDGE_CONFIG and --control-port are required\n");
  process.exit(2);
}
const redisCommands: Record<string, number> = {};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis["sendCommand"]>) {
  const command = args[0] as { name?: string; args?: unknown[] };
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
const bridge = await startBridge(config, { role: values.role as Role, logger });

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
    (err: unknown) => res.writeHead(500).end(String(err)),
  );
});
control.listen(Number(values["control-port"]), "127.0.0.1");

const stop = () => {
  control.close();
  bridge.close().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
