/**
 * The composition root: builds every part of a bridge process from a Config, in order, and closes
 * them in reverse. The one place (with src/cli) that imports routes/ and jobs/.
 */
import { type Server, createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import type { Config } from "./config/config-schema.js";
import { RedisDirectoryStore } from "./directory/redis-directory-store.js";
import { type Logger, createLogger } from "./observability/logger.js";
import { createMetricsRegistry, type Registry } from "./observability/metrics.js";
import { matchesFilter } from "./scim/filter-eval.js";
import { createApp } from "../routes/app.js";
import { createHealthRouter } from "../routes/health.js";
import { createHooksRouter } from "../routes/hooks/hooks-router.js";
import { httpMetricsMiddleware } from "../routes/middleware/http-metrics.js";
import { intakeRateLimiter } from "../routes/middleware/intake-rate-limiter.js";
import { createMetricsRouter } from "../routes/middleware/metrics-router.js";
import { createRequestLogger } from "../routes/middleware/request-logger.js";
import { securityHeaders } from "../routes/middleware/security-headers.js";
import { recordScimOperation, setQueueDepthReader } from "./observability/bridge-metrics.js";
import { createQueueStatus, createSyncQueue, startWorkers } from "../jobs/index.js";
import { HttpPlatformClient } from "./platform/client/http-platform-client.js";
import { RedisRequestBudget } from "./platform/client/request-budget.js";

export type Role = "all" | "api" | "worker";

export interface BridgeOptions {
  role?: Role;
  logger?: Logger;
  registry?: Registry;
  /** Listen on config.server.port (default true); tests pass false and use `app` or port 0. */
  listen?: boolean;
}

export interface RunningBridge {
  config: Config;
  /** Base URL of the HTTP server, when listening. */
  url?: string;
  app?: ReturnType<typeof createApp>;
  directory: RedisDirectoryStore;
  registry: Registry;
  logger: Logger;
  /**
   * True when no entity is dirty and no job waits, runs or is delayed (ARCHITECTURE.md, admin
   * status `idle`). Dead-lettered entities do not hold it false.
   */
  isIdle(): Promise<boolean>;
  /** Graceful: readiness goes false, the server stops taking requests, workers finish, Redis closes. */
  close(): Promise<void>;
}

/** ioredis for the intake: no offline queue, one retry, so a Redis outage answers 503 at once. */
export function createStoreRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
  });
}

/** ioredis for BullMQ workers: BullMQ requires maxRetriesPerRequest null for blocking commands. */
export function createQueueRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: false });
}

export async function startBridge(config: Config, options: BridgeOptions = {}): Promise<RunningBridge> {
  const role = options.role ?? "all";
  const logger = options.logger ?? createLogger(config.logLevel);
  const registry = options.registry ?? createMetricsRegistry();
  const prefix = config.redis.prefix;
  const closers: Array<() => Promise<unknown>> = [];
  let ready = false;

  const storeRedis = createStoreRedis(config.redis.url);
  storeRedis.on("error", (err) => logger.warn({ err: err.message }, "redis (store) error"));
  await storeRedis.connect();
  closers.push(() => storeRedis.quit().catch(() => storeRedis.disconnect()));

  const queueRedis = createQueueRedis(config.redis.url);
  queueRedis.on("error", (err) => logger.warn({ err: err.message }, "redis (queue) error"));
  closers.push(() => queueRedis.quit().catch(() => queueRedis.disconnect()));

  // The producer shares the intake's fail-fast connection: an outage between a store write and
  // its enqueue fails the enqueue at once (the dirty marker stays for the sweeper), never hangs.
  const syncQueue = createSyncQueue({ connection: storeRedis, prefix, logger });
  closers.push(() => syncQueue.close());

  const directory = new RedisDirectoryStore({
    redis: storeRedis,
    prefix,
    notify: syncQueue.notify,
    logger,
    matchesFilter,
  });
  const status = createQueueStatus({ connection: storeRedis, prefix, directory });
  closers.push(() => status.close());
  setQueueDepthReader(registry, () => status.queueCounts());

  let workers: { close(): Promise<void> } | undefined;
  if (role === "all" || role === "worker") {
    const budget = new RedisRequestBudget({
      redis: storeRedis,
      prefix,
      requestsPerSecond: config.platform.requestsPerSecond,
    });
    const platform = new HttpPlatformClient({
      baseUrl: config.platform.baseUrl,
      token: config.platform.token,
      allowInsecureHttp: config.platform.allowInsecureHttp,
      timeoutMs: config.platform.timeoutMs,
      maxRetries: config.platform.maxRetries,
      budget,
      registry,
      logger: logger.child({ module: "platform" }),
    });
    closers.push(async () => platform.close());
    workers = await startWorkers({
      config,
      connection: queueRedis,
      directory,
      platform,
      budget,
      logger,
      registry,
    });
    closers.push(() => workers!.close());
  }

  let server: Server | undefined;
  let url: string | undefined;
  const intakeLimit = intakeRateLimiter({
    redis: storeRedis,
    prefix,
    requestsPerSecond: (source) => config.sources[source]?.rateLimit.requestsPerSecond,
    registry,
    logger,
  });
  const scimLogger = logger.child({ module: "scim" });
  const app = createApp({
    logger,
    middleware: [securityHeaders(), createRequestLogger(logger), httpMetricsMiddleware(registry)],
    health: createHealthRouter({
      redis: storeRedis,
      isReady: () => ready,
      workersRunning: workers ? () => ready : undefined,
    }),
    metrics: createMetricsRouter(registry),
    hooks:
      role === "worker"
        ? undefined
        : createHooksRouter({
            config,
            directory,
            redis: storeRedis,
            prefix,
            logger,
            registry,
            beforeHandlers: [intakeLimit],
          }),
    scim:
      role === "worker"
        ? undefined
        : {
            config,
            directory,
            logger: scimLogger,
            beforeHandlers: [intakeLimit],
            onOperation: (op) => recordScimOperation(registry, op),
          },
  });
  if (options.listen ?? true) {
    const tls = config.server.tls;
    server = tls
      ? createHttpsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, app)
      : createServer(app);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(config.server.port, config.server.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const host =
      config.server.host === "0.0.0.0" || config.server.host === "::" ? "127.0.0.1" : config.server.host;
    url = `${tls ? "https" : "http"}://${host}:${address.port}`;
  }
  ready = true;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      ready = false;
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeIdleConnections();
        });
      }
      for (const closer of closers.reverse()) {
        await closer().catch((err: unknown) => logger.warn({ err }, "error while closing"));
      }
    })();
    return closing;
  };

  return { config, url, app, directory, registry, logger, isIdle: () => status.isIdle(), close };
}
