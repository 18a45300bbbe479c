/**
 * Integration harness of the sync pipeline: the real directory in Redis (driven directly, as the
 * SCIM routes would), the real workers, the HTTP platform client and the strict emulator.
 */
import type { Job } from "bullmq";
import { Redis } from "ioredis";
import { createQueueStatus } from "../../../jobs/queue-status.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { reconcileSyncState } from "../../../jobs/reconcile/sync-state-adapter.js";
import { type RunningWorkers, type WorkerTuning, startWorkers } from "../../../jobs/start-workers.js";
import type { SyncJobData } from "../../../jobs/sync-job.js";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import { createSyncProcessor } from "../../../jobs/sync-processor.js";
import { createSyncQueue } from "../../../jobs/sync-queue.js";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { type Logger, createLogger } from "../../../src/observability/logger.js";
import { type Registry, createMetricsRegistry } from "../../../src/observability/metrics.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget, type RequestBudget } from "../../../src/platform/client/request-budget.js";
import type { FaultRule } from "../../../src/platform/emulator/fault-injector.js";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import {
  type EntityRef,
  SCHEMA_GROUP,
  SCHEMA_USER,
  type ScimUser,
  refKey,
} from "../../../src/scim/scim-types.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { type LifecycleFlushOptions, flushLifecycle } from "../../../src/sync/lifecycle-flusher.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";

export const TOKEN = "platform-test-token";

export interface JobsHarnessOptions {
  sources?: ConfigInput["sources"];
  sync?: Partial<NonNullable<ConfigInput["sync"]>>;
  faults?: FaultRule[];
  tuning?: WorkerTuning;
  /** Start workers at once (default true). */
  workers?: boolean;
  budget?: RequestBudget;
  seed?: number;
  /** The platform client's longest in-call Retry-After sleep (its default: 60 s). */
  maxRetryAfterMs?: number;
  /** The workers' and directory's logger (default: silent, or TEST_LOG_LEVEL). */
  logger?: Logger;
  /** The platform client's timeout and retries (default 2,000 ms and 3). */
  platform?: { timeoutMs?: number; maxRetries?: number };
}

export async function startJobsHarness(name: string, options: JobsHarnessOptions = {}) {
  const emulator = createPlatformEmulator({ token: TOKEN, faults: options.faults, seed: options.seed ?? 7 });
  const platformUrl = await emulator.start({ port: 0 });
  const prefix = testPrefix(name);
  const timeoutMs = options.platform?.timeoutMs ?? 2_000;
  const maxRetries = options.platform?.maxRetries ?? 3;
  const config = buildConfig({
    platform: { baseUrl: platformUrl, token: TOKEN, allowInsecureHttp: true, timeoutMs, maxRetries },
    redis: { url: TEST_REDIS_URL, prefix },
    sync: {
      concurrency: 8,
      attempts: 8,
      lifecycleBatchWindowMs: 50,
      sweepIntervalMs: 200,
      sweepAfterMs: 500,
      ...options.sync,
    },
    logLevel: "silent",
    sources: options.sources ?? { okta: { tokens: ["okta-token"] } },
  });
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? "silent");
  const storeRedis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  await storeRedis.connect();
  const queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const tuning: WorkerTuning = {
    backoffMs: 20,
    lockDurationMs: 5_000,
    stalledIntervalMs: 1_000,
    ...options.tuning,
  };
  // Like the bridge (src/bridge.ts): the producer's jobs get config.sync.attempts (tuning may override).
  const syncQueue = createSyncQueue({
    connection: queueRedis,
    prefix,
    logger,
    attempts: config.sync.attempts,
    ...tuning,
  });
  const directory = new RedisDirectoryStore({
    redis: storeRedis,
    prefix,
    notify: syncQueue.notify,
    logger,
    matchesFilter,
  });
  const budget = options.budget ?? new NoopRequestBudget();
  const platform = new HttpPlatformClient({
    baseUrl: platformUrl,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs,
    maxRetries,
    budget,
    backoff: { baseMs: 5, capMs: 50 },
    ...(options.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: options.maxRetryAfterMs } : {}),
  });
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const status = createQueueStatus({ connection: queueRedis, prefix, directory });
  const state = new RedisSyncStateStore(queueRedis, prefix);
  let workers: RunningWorkers | undefined;

  const harness = {
    emulator,
    config,
    prefix,
    directory,
    platform,
    registry,
    status,
    state,
    syncQueue,
    queueRedis,
    storeRedis,
    get workers(): RunningWorkers {
      if (!workers) throw new Error("workers not started");
      return workers;
    },
    async startWorkers(): Promise<RunningWorkers> {
      workers = await startWorkers({
        config,
        connection: queueRedis,
        directory,
        platform,
        budget,
        logger,
        registry,
        tuning,
      });
      return workers;
    },
    async stopWorkers(): Promise<void> {
      await workers?.close();
      workers = undefined;
    },
    async waitForIdle(timeoutMs = 15_000): Promise<void> {
      await waitFor(
        async () =>
          (await status.isIdle()) &&
          (await new Promise((r) => setTimeout(r, 40))) === undefined &&
          (await status.isIdle()),
        { timeoutMs, what: "the pipeline to be idle" },
      );
    },
    /** A sync context over the harness (no lifecycle flush scheduled), with `overrides`. */
    syncContext(overrides: Partial<SyncContext> = {}): SyncContext {
      return {
        config,
        directory,
        platform,
        state,
        attributes: new AttributeDefinitions(platform),
        logger: createLogger("silent"),
        scheduleLifecycle: async () => {},
        ...overrides,
      };
    },
    /**
     * The real sync processor over `ctx`, run by hand (no workers): a job's first of eight attempts
     * (a job of its own for each run, or `job`: handJob's, whose data its runs keep, as a stalled
     * job's re-run has them). Its metrics go to `metricsRegistry` (default: one of its own).
     */
    syncProcessor(
      ctx: SyncContext,
      metricsRegistry?: Registry,
    ): (ref: EntityRef, job?: Job<SyncJobData>) => Promise<string> {
      const process = createSyncProcessor({
        ctx,
        queue: syncQueue.queue,
        budget: new NoopRequestBudget(),
        metrics: syncMetrics(
          metricsRegistry ?? createMetricsRegistry({ defaultMetrics: false }),
          async () => ({}),
        ),
        logger: ctx.logger,
      });
      return (ref, job = handJob(ref)) => process(job);
    },
    /** Whether the entity has a dirty marker (however recent). */
    async isDirty(ref: EntityRef): Promise<boolean> {
      const dirty = await directory.listDirty(Date.now() + 60_000, 1_000);
      return dirty.some((entry) => refKey(entry.ref) === refKey(ref));
    },
    user(userName: string, extra: Partial<ScimUser> = {}): Omit<ScimUser, "id"> {
      return { schemas: [SCHEMA_USER], userName, active: true, ...extra };
    },
    group(displayName: string) {
      return { schemas: [SCHEMA_GROUP], displayName };
    },
    platformUsers() {
      return new Map(emulator.state().users.map((u) => [String(u["userName"]).toLowerCase(), u]));
    },
    platformGroups() {
      return new Map(emulator.state().groups.map((g) => [g.displayName, g]));
    },
    writes(): number {
      return emulator.counters().writes;
    },
    async close(): Promise<void> {
      await workers?.close();
      await syncQueue.close();
      await status.close();
      await emulator.close();
      await deleteKeys(storeRedis, prefix);
      await storeRedis.quit();
      await queueRedis.quit();
    },
  };
  if (options.workers ?? true) await harness.startWorkers();
  return harness;
}

export type JobsHarness = Awaited<ReturnType<typeof startJobsHarness>>;

/** A sync job of `ref` as a worker hands it to the processor: a first attempt of eight, its data kept. */
export function handJob(ref: EntityRef): Job<SyncJobData> {
  const job = {
    data: { ...ref } as Record<string, unknown>,
    attemptsMade: 0,
    opts: { attempts: 8 },
    async updateData(data: Record<string, unknown>) {
      job.data = data;
    },
  };
  return job as unknown as Job<SyncJobData>;
}

/**
 * Flushes the whole lifecycle batch now (no batching window), with `ctx`; a change that fails for
 * good is dropped unrecorded unless `options` says otherwise (its own deadLetter, maxAttempts).
 */
export function flushNow(ctx: SyncContext, options: Partial<LifecycleFlushOptions> = {}): Promise<number> {
  return flushLifecycle(ctx, {
    windowMs: 0,
    maxWaitMs: 0,
    maxAttempts: 3,
    stopping: () => false,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    deadLetter: async () => {},
    ...options,
  });
}

/**
 * A reconciliation's dependencies over the harness (its Redis, directory, sync state and emulator),
 * with `overrides` (a platform that hides entities, a cap): repairs are not enqueued, logs silent.
 */
export function reconcileDeps(h: JobsHarness, overrides: Partial<ReconcileDeps> = {}): ReconcileDeps {
  return {
    config: h.config,
    redis: h.storeRedis,
    platform: h.platform,
    directory: h.directory,
    state: reconcileSyncState(h.state, h.storeRedis, h.prefix),
    requestResync: async () => {},
    runs: new ReconcileRunStore(h.storeRedis, h.prefix, 10),
    logger: createLogger("silent"),
    ...overrides,
  };
}
