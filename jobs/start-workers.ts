import { type Processor, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "../src/config/config-schema.js";
import type { DirectoryStore } from "../src/directory/directory-types.js";
import type { Logger } from "../src/observability/logger.js";
import { RateLimitedLog } from "../src/observability/rate-limited-log.js";
import type { Registry } from "../src/observability/metrics.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import type { PlatformClient } from "../src/platform/platform-types.js";
import { AttributeDefinitions } from "../src/sync/attribute-definitions.js";
import { handOnDueChecks } from "../src/sync/late-writes.js";
import { RedisSyncStateStore } from "../src/sync/redis-sync-state-store.js";
import { classifyFailure } from "../src/sync/sync-error.js";
import type { SyncContext } from "../src/sync/sync-context.js";
import { HeldJobs, closeWithin, gatePlatform } from "./job-hand-back.js";
import { countJobOutcomes, failedOutcome } from "./job-metrics.js";
import { createLifecycleProcessor } from "./lifecycle-processor.js";
import { QUEUE_NAMES } from "./queue-names.js";
import { createQueueStatus } from "./queue-status.js";
import {
  LIFECYCLE_JOB_NAME,
  SYNC_JOB_NAME,
  type SyncJobData,
  type SyncJobTuning,
  lifecycleJobOptions,
  sweepJobOptions,
  isSyncJobData,
} from "./sync-job.js";
import { syncMetrics } from "./sync-metrics.js";
import { createSyncProcessor } from "./sync-processor.js";

export interface WorkerTuning extends SyncJobTuning {
  /** Queue names (tests use their own). Default QUEUE_NAMES. */
  names?: { sync?: string; lifecycle?: string; reconcile?: string; resync?: string };
  /** BullMQ lock duration: a crashed worker's jobs run again after it. Default 30 s. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval. Default 15 s. */
  stalledIntervalMs?: number;
  /** Rate-limited loops of one job before it burns an attempt. Default 20. */
  maxRateLimitLoops?: number;
  /** At most one `queue error` / `worker error` line per queue this often, in ms. Default 30 s. */
  errorLogIntervalMs?: number;
}

export interface StartWorkersOptions {
  config: Config;
  /** ioredis with maxRetriesPerRequest: null (BullMQ's blocking commands need it). */
  connection: Redis;
  directory: DirectoryStore;
  platform: PlatformClient;
  budget: RequestBudget;
  logger: Logger;
  registry: Registry;
  tuning?: WorkerTuning;
}

export interface RunningWorkers {
  /**
   * Stops taking jobs and lets running ones finish within config.server.shutdownTimeoutMs. Jobs
   * still running then are frozen (their next platform call never starts) and handed back to the
   * queue's wait list, so that the next worker runs them at once instead of after their lock
   * expires (lockDurationMs, then the stalled check). Safe twice.
   */
  close(): Promise<void>;
  state: RedisSyncStateStore;
  /** Runs one sweep now (tests; the interval runs it every config.sync.sweepIntervalMs). */
  sweep(): Promise<void>;
}

/**
 * Starts the sync and lifecycle workers of this process and the sweeper of dirty entities
 * (a crash between a store write and its enqueue is recovered by it: invariant 2).
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, connection, directory, platform, budget, registry } = options;
  const tuning = options.tuning ?? {};
  const logger = options.logger.child({ module: "sync" });
  const prefix = config.redis.prefix;
  const names = { ...QUEUE_NAMES, ...tuning.names };
  const jobTuning: SyncJobTuning = {
    attempts: tuning.attempts ?? config.sync.attempts,
    backoffMs: tuning.backoffMs,
  };

  // During a Redis outage every queue and worker handle emits `error` about ten times a second:
  // the first of an outage is written, then at most one line per 30 s with the count left out.
  const errorLog = new RateLimitedLog(logger, { intervalMs: tuning.errorLogIntervalMs });
  const syncQueue = new Queue<SyncJobData>(names.sync, { connection, prefix });
  const lifecycleQueue = new Queue(names.lifecycle, { connection, prefix });
  for (const q of [syncQueue, lifecycleQueue]) {
    q.on("error", (err) =>
      errorLog.warn(`queue ${q.name}`, { err: err.message, queue: q.name }, "queue error"),
    );
  }
  const status = createQueueStatus({ connection, prefix, directory, names });
  const metrics = syncMetrics(registry, () => status.depthCounts());
  const state = new RedisSyncStateStore(connection, prefix);

  // The processors' platform: frozen on a forced close, so that a job handed back to the queue is
  // no longer worked on here while another worker runs it (one sync per entity: invariant 3).
  const gate = gatePlatform(platform);
  const ctx: SyncContext = {
    config,
    directory,
    platform: gate.platform,
    state,
    attributes: new AttributeDefinitions(gate.platform, (name, err) =>
      logger.warn(
        { attribute: name, code: classifyFailure(err).code },
        "an attribute definition's displayName could not be updated on the platform; its values are written all the same",
      ),
    ),
    logger,
    scheduleLifecycle: async () => {
      await lifecycleQueue.add(LIFECYCLE_JOB_NAME, {}, lifecycleJobOptions(0));
    },
  };
  let stopping = false;
  const workerOptions = {
    connection,
    prefix,
    lockDuration: tuning.lockDurationMs ?? 30_000,
    stalledInterval: tuning.stalledIntervalMs ?? 15_000,
    maxStalledCount: 3,
    // Never limits by count (the platform's budget paces the calls), but BullMQ's moveToActive
    // honours the queue's manual rate limit (rateLimited: queue.rateLimit + RateLimitError) only
    // when a limiter is set: without one, the other fetches took jobs while the queue was paused,
    // left them unprocessed (their locks unrenewed) until the pause ended, and the locks expired:
    // "Missing lock for job … moveJobFromActiveToWait", the job run twice, attempts spent.
    limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1_000 },
  };
  // The jobs this process runs, with their lock tokens: what a forced close hands back.
  const held = new HeldJobs();
  const holding = <D, R>(processor: Processor<D, R>): Processor<D, R> => held.wrap(processor);
  const syncWorker = new Worker<SyncJobData, string>(
    names.sync,
    holding(
      createSyncProcessor({
        ctx,
        queue: syncQueue,
        budget,
        metrics,
        logger,
        maxRateLimitLoops: tuning.maxRateLimitLoops,
        lockDurationMs: workerOptions.lockDuration,
      }),
    ),
    { ...workerOptions, concurrency: config.sync.concurrency },
  );
  const lifecycleWorker = new Worker(
    names.lifecycle,
    holding(
      createLifecycleProcessor({
        ctx,
        queue: lifecycleQueue,
        budget,
        metrics,
        logger,
        windowMs: config.sync.lifecycleBatchWindowMs,
        maxAttempts: jobTuning.attempts ?? 8,
        stopping: () => stopping,
        lockDurationMs: workerOptions.lockDuration,
      }),
    ),
    { ...workerOptions, concurrency: 1 },
  );
  for (const w of [syncWorker, lifecycleWorker]) {
    countJobOutcomes(w, registry);
    w.on("error", (err) =>
      errorLog.warn(`worker ${w.name}`, { err: err.message, queue: w.name }, "worker error"),
    );
    w.on("failed", (job, err) => {
      if (job && failedOutcome(job, err) === "dead_lettered") {
        // The reason (which may name a user) is in the dead letter; the log line carries no personal data.
        // The entity (bridge ids only) leads from the line to its status and dead letter.
        const ref = isSyncJobData(job.data) ? job.data : undefined;
        logger.warn({ queue: w.name, jobId: job.id, error: err.name, ref }, "job failed for good");
      }
    });
  }

  const sweep = async () => {
    const dirty = await directory.listDirty(Date.now() - config.sync.sweepAfterMs, 1_000);
    await Promise.all(
      dirty.map(({ ref }) => syncQueue.add(SYNC_JOB_NAME, { ...ref }, sweepJobOptions(ref, jobTuning))),
    );
    if ((await state.countLifecycle()) > 0) await ctx.scheduleLifecycle();
    // Entities whose platform writes got no answer a while ago: read them on the platform again.
    await handOnDueChecks(ctx, Date.now());
  };
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping || stopping) return;
    sweeping = true;
    sweep()
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, "sweep failed"))
      .finally(() => {
        sweeping = false;
      });
  }, config.sync.sweepIntervalMs);
  timer.unref();
  // A batch left by a crashed process is flushed again.
  await ctx.scheduleLifecycle().catch(() => {});

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      stopping = true;
      clearInterval(timer);
      if (!(await closeWithin([syncWorker, lifecycleWorker], config.server.shutdownTimeoutMs))) {
        // First no job here makes a further platform call, then each goes back to wait with its
        // lock token. A call already sent may still land: to the next run that is a write whose
        // answer was lost, which every sync step survives (it finds the object and adopts it).
        gate.freeze();
        await held.handBack(logger, "workers did not finish in time; handing their jobs back");
        // The workers stay closing (their frozen jobs never finish); the process exits anyway.
      }
      await Promise.all([syncQueue.close(), lifecycleQueue.close(), status.close()]).catch(() => {});
    })();
    return closing;
  };
  return { close, state, sweep };
}
