import { hostname } from "node:os";
import { Redis } from "ioredis";
import type { Config } from "../config/config-schema.js";
import { buildConfig } from "../config/load-config.js";

export const SANDBOX_SOURCE_TOKEN = "sandbox-demo-token";
export const SANDBOX_ADMIN_TOKEN = "sandbox-admin-token";
export const SANDBOX_PLATFORM_TOKEN = "sandbox-platform-token";
export const SANDBOX_PREFIX = "{scim-bridge-sandbox}";
/**
 * Held by the running sandbox (refreshed every LOCK_REFRESH_MS, gone LOCK_TTL_MS after a kill).
 * Outside SANDBOX_PREFIX, so that clearing the sandbox's keys keeps it.
 */
export const SANDBOX_LOCK_KEY = "scim-bridge-sandbox:running";
const LOCK_TTL_MS = 15_000;
const LOCK_REFRESH_MS = 5_000;

/** A sandbox that cannot start: the message says why and what to do; the process exits 1. */
export class SandboxError extends Error {}

export interface Sandbox {
  config: Config;
  banner: string;
  close(): Promise<void>;
}

/** Extends the lock's life only while it still holds this sandbox's token. */
const REFRESH = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** Deletes the lock only while it still holds this sandbox's token. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Deletes the sandbox's own keys: its emulator starts empty, so its memory of applied state must too. */
async function clearSandboxKeys(redis: Redis): Promise<void> {
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
}

/** The host of a Redis URL (never its password), for messages. */
function redisHost(url: string): string {
  return URL.canParse(url) ? new URL(url).host : "the configured URL";
}

/**
 * Connects to Redis once (no reconnecting: the sandbox either finds Redis now or says so and
 * exits), claims the sandbox's lock, and clears the sandbox's keys. A second sandbox on the same
 * Redis (a second `npm start`, whatever its PORT) is refused before it clears anything: clearing
 * would wipe the first one's directory while its emulator keeps its users.
 */
async function claimSandbox(url: string, owner: string): Promise<{ release(): Promise<void> }> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    connectTimeout: 3_000,
  });
  let lastError: Error | undefined;
  redis.on("error", (err: Error) => {
    // Reported by connect() (with this cause: its own error only says the connection closed).
    lastError = err;
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new SandboxError(
      `the sandbox needs Redis at ${redisHost(url)}: ${(lastError ?? (err as Error)).message}\n` +
        "No Redis yet? `bash scripts/ensure-redis.sh` installs and starts one on 127.0.0.1:6379 (or set REDIS_URL).",
    );
  }
  const token = `${owner} (pid ${process.pid} on ${hostname()}, since ${new Date().toISOString()})`;
  const claimed = await redis.set(SANDBOX_LOCK_KEY, token, "PX", LOCK_TTL_MS, "NX");
  if (claimed !== "OK") {
    const holder = await redis.get(SANDBOX_LOCK_KEY);
    redis.disconnect();
    throw new SandboxError(
      `another sandbox is running on this Redis (${redisHost(url)}): ${holder ?? "it just stopped"}.\n` +
        "Stop it first (Ctrl-C in its terminal), or give this one a Redis of its own with REDIS_URL. " +
        `A sandbox that was killed releases its claim within ${LOCK_TTL_MS / 1000} s.`,
    );
  }
  const timer = setInterval(() => {
    redis.eval(REFRESH, 1, SANDBOX_LOCK_KEY, token, LOCK_TTL_MS).catch(() => {
      // Redis away for a moment: the next refresh tries again.
    });
  }, LOCK_REFRESH_MS);
  timer.unref();
  try {
    await clearSandboxKeys(redis);
  } catch (err) {
    clearInterval(timer);
    await redis.eval(RELEASE, 1, SANDBOX_LOCK_KEY, token).catch(() => undefined);
    redis.disconnect();
    throw err;
  }
  return {
    async release() {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, SANDBOX_LOCK_KEY, token).catch(() => undefined);
      redis.disconnect();
    },
  };
}

/**
 * The local sandbox: no configuration file, so the bridge runs with the built-in platform
 * emulator, one demo source and an admin token, all printed at start.
 */
export async function startSandbox(env: NodeJS.ProcessEnv): Promise<Sandbox> {
  const redisConfig = buildSandboxConfig("http://127.0.0.1:1", env);
  const claim = await claimSandbox(redisConfig.redis.url, `sandbox on port ${redisConfig.server.port}`);
  try {
    const { createPlatformEmulator } = await import("../platform/emulator/platform-emulator.js");
    const emulator = createPlatformEmulator({ token: SANDBOX_PLATFORM_TOKEN });
    const platformUrl = await emulator.start({
      port: Number(env.SANDBOX_PLATFORM_PORT ?? 0),
      host: "127.0.0.1",
    });
    const banner = [
      "scim-bridge sandbox (no SCIM_BRIDGE_CONFIG set)",
      `  platform emulator:  ${platformUrl}   (state: GET ${platformUrl}/_emulator/state)`,
      `  demo source:        /scim/v2/demo   token: ${SANDBOX_SOURCE_TOKEN}`,
      `  admin API:          /admin/v1       token: ${SANDBOX_ADMIN_TOKEN}`,
    ].join("\n");
    return {
      config: buildSandboxConfig(platformUrl, env),
      banner,
      async close() {
        await emulator.close();
        await claim.release();
      },
    };
  } catch (err) {
    await claim.release();
    throw err;
  }
}

function buildSandboxConfig(platformUrl: string, env: NodeJS.ProcessEnv): Config {
  return buildConfig(
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
}
