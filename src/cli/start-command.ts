import { parseArgs } from "node:util";
import type { Config } from "../config/config-schema.js";
import { ConfigError, buildConfig, loadConfigFile } from "../config/load-config.js";
import { type Role, startBridge } from "../bridge.js";
import { createLogger } from "../observability/logger.js";
import { createPlatformEmulator } from "../platform/emulator/platform-emulator.js";
import { Redis } from "ioredis";

export const SANDBOX_SOURCE_TOKEN = "sandbox-demo-token";
export const SANDBOX_ADMIN_TOKEN = "sandbox-admin-token";
export const SANDBOX_PLATFORM_TOKEN = "sandbox-platform-token";
export const SANDBOX_PREFIX = "{scim-bridge-sandbox}";

const ROLES: readonly Role[] = ["all", "api", "worker"];

/** Deletes the sandbox's own keys: its emulator starts empty, so its memory of applied state must too. */
async function clearSandboxKeys(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(
        cursor,
        "MATCH",
        `${SANDBOX_PREFIX.replace(/[{}]/g, "\\$&")}*`,
        "COUNT",
        1000,
      );
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/**
 * The local sandbox: no configuration file, so the bridge runs with the built-in platform
 * emulator, one demo source and an admin token, all printed at start.
 */
async function startSandbox(
  env: NodeJS.ProcessEnv,
): Promise<{ config: Config; close(): Promise<void>; banner: string }> {
  const emulator = createPlatformEmulator({ token: SANDBOX_PLATFORM_TOKEN });
  const platformUrl = await emulator.start({
    port: Number(env.SANDBOX_PLATFORM_PORT ?? 0),
    host: "127.0.0.1",
  });
  const config = buildConfig(
    {
      platform: {
        baseUrl: platformUrl,
        token: SANDBOX_PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 200,
      },
      admin: { tokens: [SANDBOX_ADMIN_TOKEN] },
      redis: { prefix: SANDBOX_PREFIX },
      server: { port: 8080, host: "127.0.0.1" },
      reconcile: { schedule: "*/30 * * * *" },
      sync: { sweepIntervalMs: 2_000, sweepAfterMs: 5_000 },
      sources: {
        demo: {
          tokens: [SANDBOX_SOURCE_TOKEN],
          attributes: {
            department: {
              from: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department",
              type: "string",
            },
          },
        },
      },
    },
    { REDIS_URL: env.REDIS_URL, PORT: env.PORT, LOG_LEVEL: env.LOG_LEVEL },
  );
  await clearSandboxKeys(config.redis.url);
  const banner = [
    "scim-bridge sandbox (no SCIM_BRIDGE_CONFIG set)",
    `  platform emulator:  ${platformUrl}   (state: GET ${platformUrl}/_emulator/state)`,
    `  demo source:        /scim/v2/demo   token: ${SANDBOX_SOURCE_TOKEN}`,
    `  admin API:          /admin/v1       token: ${SANDBOX_ADMIN_TOKEN}`,
  ].join("\n");
  return { config, close: () => emulator.close(), banner };
}

export async function runStart(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { role: { type: "string", default: "all" }, config: { type: "string" } },
  });
  const role = values.role as Role;
  if (!ROLES.includes(role)) {
    process.stderr.write(`start: --role must be one of ${ROLES.join(", ")}\n`);
    return 2;
  }
  const file = values.config ?? process.env.SCIM_BRIDGE_CONFIG;
  let config: Config;
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  try {
    if (file) {
      config = loadConfigFile(file, process.env);
    } else {
      sandbox = await startSandbox(process.env);
      config = sandbox.config;
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }

  const logger = createLogger(config.logLevel);
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  try {
    bridge = await startBridge(config, { role, logger });
  } catch (err) {
    // Exit at once, whatever client is still retrying: the orchestrator restarts the process.
    logger.fatal({ err: (err as Error).message }, "scim-bridge could not start");
    process.exit(1);
  }
  if (sandbox) process.stdout.write(`${sandbox.banner}\n  bridge:             ${bridge.url}\n`);
  logger.info({ role, url: bridge.url, sources: Object.keys(config.sources) }, "scim-bridge started");

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, "shutting down");
      // bridge.close() bounds each step (drain, requests and jobs in flight, Redis); this is the
      // last resort if one of them hangs anyway.
      const limitMs = shutdownLimitMs(config);
      setTimeout(() => {
        logger.error({ limitMs }, "shutdown timed out; exiting");
        process.exit(1);
      }, limitMs).unref();
      bridge
        .close()
        .then(() => sandbox?.close())
        .catch((err: unknown) => logger.warn({ err }, "error while shutting down"))
        .finally(resolve);
    };
    // A second signal during shutdown gets the default action (the process ends at once).
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  logger.info("shut down");
  // Everything is closed; a handle left open by a library must not hold the exit.
  setTimeout(() => {
    logger.warn("open handles after shutdown; exiting");
    process.exit(0);
  }, 1_000).unref();
  return 0;
}

/** How long a shutdown may take in all before the process gives up and exits 1. */
export function shutdownLimitMs(config: Config): number {
  return (config.server.drainDelayMs ?? 0) + config.server.shutdownTimeoutMs + 5_000;
}
