/**
 * The composition root: builds every part of a bridge process from a Config, in order, and closes
 * them in reverse. The one place (with src/cli) that imports routes/ and jobs/.
 */
import type { Router } from "express";
import type { Config } from "./config/config-schema.js";
import { RedisDirectoryStore } from "./directory/redis-directory-store.js";
import { type Listener, closeGracefully, connectionCloseWhen, listen } from "./server/http-listener.js";
import {
  CLOSE_STEP_MS,
  closeRedis,
  createQueueRedis,
  createStoreRedis,
  logOutages,
  within,
} from "./server/redis-clients.js";
import { type Logger, createLogger } from "./observability/logger.js";
import { createMetricsRegistry, type Registry } from "./observability/metrics.js";
import { matchesFilter } from "./scim/filter-eval.js";
import { createApp } from "../routes/app.js";
import { createHealthRouter } from "../routes/health.js";
import { createAdminRouter } from "../routes/admin/admin-router.js";
import { createQueueBoardRouter } from "../routes/admin/queue-board-router.js";
import { createHooksRouter } from "../routes/hooks/hooks-router.js";
import { startAdminJobs } from "../jobs/reconcile/admin-jobs.js";
import { RedisSyncStateStore } from "./sync/redis-sync-state-store.js";
import { httpMetricsMiddleware } from "../routes/middleware/http-metrics.js";
import { intakeRateLimiter } from "../routes/middleware/intake-rate-limiter.js";
import { createMetricsRouter } from "../routes/middleware/metrics-router.js";
import { createRequestLogger } from "../routes/middleware/request-logger.js";
import { securityHeaders } from "../routes/middleware/security-headers.js";
import {
  recordScimOperation,
  setDeadLetterReader,
  setLateWriteReader,
  setQueueDepthReader,
} from "./observability/bridge-metrics.js";
import { Queue } from "bullmq";
import { QUEUE_NAMES, createQueueStatus, createSyncQueue, startWorkers } from "../jobs/index.js";
import { HttpPlatformClient } from "./platform/client/http-platform-client.js";
import { RedisRequestBudget } from "./platform/client/request-budget.js";
import { parseByteSize } from "./config/byte-size.js";

export { createQueueRedis, createStoreRedis };

export type Role = "all" | "api" | "worker";

export interface BridgeOptions {
  role?: Role;
  logger?: Logger;
  registry?: Registry;
  /** Listen on config.server.port (default true); tests pass false and use `app` or port 0. */
  listen?: boolean;
  /**
   * The routers mounted at /admin/v1 and /admin/queues (api and all roles). On the main port, or
   * only on `config.admin.port` when it is set.
   */
  adminRouters?: AdminRouters;
  /** The text GET /metrics answers (default: `registry`'s); a cluster worker asks its primary. */
  metricsText?: () => Promise<string>;
}

export interface AdminRouters {
  /** Mounted at /admin/v1. */
  admin?: Router;
  /** Mounted at /admin/queues (Bull Board). */
  queues?: Router;
}

export interface RunningBridge {
  config: Config;
  /** Base URL of the HTTP server, when listening. */
  url?: string;
  /** Base URL of the admin server, when listening and `config.admin.port` is set. */
  adminUrl?: string;
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

export async function startBridge(config: Config, options: BridgeOptions = {}): Promise<RunningBridge> {
  const role = options.role ?? "all";
  const logger = options.logger ?? createLogger(config.logLevel);
  const registry = options.registry ?? createMetricsRegistry();
  const prefix = config.redis.prefix;
  // Closed in reverse order, each within a bound: a Redis outage must not hold the shutdown.
  const closers: Array<[name: string, close: () => Promise<unknown>]> = [];
  let ready = false;

  const storeRedis = createStoreRedis(config.redis.url);
  logOutages(storeRedis, "store", logger);
  await storeRedis.connect().catch((err: unknown) => {
    storeRedis.disconnect();
    // The host only: the URL may hold a password.
    const where = URL.canParse(config.redis.url) ? new URL(config.redis.url).host : "the configured URL";
    throw new Error(`Redis at ${where} is not reachable at start: ${(err as Error).message}`, { cause: err });
  });
  closers.push(["store redis", () => closeRedis(storeRedis, 300)]);

  const queueRedis = createQueueRedis(config.redis.url);
  logOutages(queueRedis, "queue", logger);
  closers.push(["queue redis", () => closeRedis(queueRedis, 300)]);

  // The producer shares the intake's fail-fast connection: an outage between a store write and
  // its enqueue fails the enqueue at once (the dirty marker stays for the sweeper), never hangs.
  // Its jobs get config.sync.attempts, like the sweeper's re-enqueues (jobs/start-workers.ts).
  const syncQueue = createSyncQueue({
    connection: storeRedis,
    prefix,
    logger,
    attempts: config.sync.attempts,
  });
  closers.push(["sync queue", () => syncQueue.close()]);

  const directory = new RedisDirectoryStore({
    redis: storeRedis,
    prefix,
    notify: syncQueue.notify,
    logger,
    matchesFilter,
  });
  const status = createQueueStatus({ connection: storeRedis, prefix, directory });
  closers.push(["queue status", () => status.close()]);
  setQueueDepthReader(registry, () => status.depthCounts());
  setDeadLetterReader(registry, () => status.deadLettersBySource(Object.keys(config.sources)));
  setLateWriteReader(registry, async () => (await status.lateWrites()).count);

  let workers: { close(): Promise<void> } | undefined;
  let platform: HttpPlatformClient | undefined;
  if (role === "all" || role === "worker") {
    const budget = new RedisRequestBudget({
      redis: storeRedis,
      prefix,
      requestsPerSecond: config.platform.requestsPerSecond,
      // About 20 ms worth of requests may go back to back (at least 2): the budget then keeps its
      // nominal rate under load instead of losing the time each caller spends asking again.
      burst: Math.max(2, Math.floor(config.platform.requestsPerSecond / 50)),
    });
    platform = new HttpPlatformClient({
      baseUrl: config.platform.baseUrl,
      token: config.platform.token,
      allowInsecureHttp: config.platform.allowInsecureHttp,
      timeoutMs: config.platform.timeoutMs,
      maxRetries: config.platform.maxRetries,
      retryAfterCapMs: config.platform.retryAfterCapMs,
      maxAnswerBytes: parseByteSize(config.platform.maxAnswerBytes),
      budget,
      registry,
      // The client's lines carry module "platform-client" (its own child logger); one more
      // `module` here would repeat the key in every line.
      logger,
    });
    const client = platform;
    closers.push(["platform client", async () => client.close()]);
    workers = await startWorkers({
      config,
      connection: queueRedis,
      directory,
      platform,
      budget,
      logger,
      registry,
    });
  }

  const intakeLimit = intakeRateLimiter({
    redis: storeRedis,
    prefix,
    requestsPerSecond: (source) => config.sources[source]?.rateLimit.requestsPerSecond,
    registry,
    logger,
  });
  const scimLogger = logger.child({ module: "scim" });
  const middleware = [
    connectionCloseWhen(() => !ready),
    securityHeaders(),
    createRequestLogger(logger),
    httpMetricsMiddleware(registry),
  ];
  const health = createHealthRouter({
    redis: storeRedis,
    isReady: () => ready,
    workersRunning: workers ? () => workersRunning(workers!) : undefined,
  });
  // Reconciliation, resyncs and the admin API: every role runs the feature (workers run its jobs
  // and schedules, api processes serve its routes). A caller may bring its own routers (tests).
  let adminRouters: AdminRouters = {};
  // Its runs and resyncs stop with the sync workers, within the same shutdown timeout.
  let adminJobsClose: (() => Promise<void>) | undefined;
  if (options.adminRouters) {
    adminRouters = role === "worker" ? {} : options.adminRouters;
  } else {
    const adminJobs = await startAdminJobs({
      config,
      connection: queueRedis,
      redis: storeRedis,
      directory,
      syncState: new RedisSyncStateStore(storeRedis, prefix),
      queueStatus: status,
      logger,
      platform,
      registry,
    });
    adminJobsClose = () => adminJobs.close();
    closers.push(["admin jobs", () => adminJobs.close()]);
    if (role !== "worker") {
      // The board shows every queue, the lifecycle batches included (their workers may run elsewhere).
      const lifecycleQueue = new Queue(QUEUE_NAMES.lifecycle, { connection: storeRedis, prefix });
      // Connection errors are logged once per outage by the store client; keep the handle quiet.
      lifecycleQueue.on("error", (err) => logger.debug({ err: err.message }, "lifecycle queue handle error"));
      closers.push(["lifecycle queue handle", () => lifecycleQueue.close()]);
      adminRouters = {
        admin: createAdminRouter({
          service: adminJobs.service,
          principals: adminJobs.principals,
          audit: adminJobs.audit,
          logger: logger.child({ module: "admin" }),
          bodyLimit: config.server.bodyLimit,
        }),
        queues: createQueueBoardRouter({
          principals: adminJobs.principals,
          queues: [syncQueue.queue, lifecycleQueue, ...adminJobs.queues],
        }),
      };
    }
  }
  // The admin API and Bull Board (api and all roles): on the main port, or only on admin.port.
  const adminPort = config.admin.port;
  const app = createApp({
    logger,
    trustProxy: config.server.trustProxy,
    middleware,
    health,
    ...(adminPort === undefined ? adminRouters : {}),
    metrics: createMetricsRouter(registry, { text: options.metricsText }),
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
            // The same limiter and buckets as SCIM; the hooks' error handler renders its 429.
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
  const adminApp =
    adminPort === undefined || role === "worker"
      ? undefined
      : createApp({ logger, trustProxy: config.server.trustProxy, middleware, health, ...adminRouters });

  const listeners: Listener[] = [];
  if (options.listen ?? true) {
    const { host, tls } = config.server;
    listeners.push(await listen(app, { port: config.server.port, host, tls }));
    if (adminApp) listeners.push(await listen(adminApp, { port: adminPort!, host, tls }));
  }
  ready = true;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Readiness goes 503 first; answers carry Connection: close from now on.
      ready = false;
      const drainMs = listeners.length > 0 ? (config.server.drainDelayMs ?? 0) : 0;
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      // The requests in flight finish while the workers finish their jobs, each within the timeout.
      // (start-workers bounds its graceful close by the timeout, then hands the jobs still running
      // back to the queue within a second; the extra seconds cover that and the rest.)
      // With Redis away no job can record its outcome, so there is nothing to wait for: its lock
      // expires and it runs again (syncs are idempotent).
      const workersBound =
        queueRedis.status === "ready" ? config.server.shutdownTimeoutMs + 2_000 : CLOSE_STEP_MS;
      const workersStopped = Promise.all([
        workers ? within(workersBound, workers.close()) : true,
        adminJobsClose ? within(workersBound, adminJobsClose()) : true,
      ]).then((stopped) => stopped.every(Boolean));
      const finished = await Promise.all(
        listeners.map((l) => closeGracefully(l.server, config.server.shutdownTimeoutMs)),
      );
      if (finished.includes(false)) logger.warn("requests still open at the shutdown timeout were cut");
      if (!(await workersStopped)) logger.warn("the workers did not close in time; going on");
      for (const [name, closer] of closers.reverse()) {
        if (!(await within(CLOSE_STEP_MS, closer())))
          logger.warn({ part: name }, "did not close in time; going on");
      }
    })();
    return closing;
  };

  return {
    config,
    url: listeners[0]?.url,
    adminUrl: adminApp ? listeners[1]?.url : undefined,
    app,
    directory,
    registry,
    logger,
    isIdle: () => status.isIdle(),
    close,
  };
}

/** The workers check of /readyz: asks the workers themselves when they can tell (BullMQ isRunning). */
function workersRunning(workers: object): boolean {
  const isRunning = (workers as { isRunning?: () => boolean }).isRunning;
  return typeof isRunning === "function" ? isRunning.call(workers) : true;
}
