import { DelayedError, type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "../../src/observability/logger.js";
import { RateLimitedLog } from "../../src/observability/rate-limited-log.js";
import type { Registry } from "../../src/observability/metrics.js";
import type { HeldJobs } from "../job-hand-back.js";
import { whileHeld } from "../job-lease.js";
import { countJobOutcomes } from "../job-metrics.js";
import { failureLogFields } from "../reconcile/failure-log-fields.js";
import { QUEUE_NAMES } from "../queue-names.js";
import { sleep } from "../reconcile/repair-settlement.js";
import { queuedPhase } from "../../src/admin/operation-store.js";
import type { ResyncStore } from "../../src/admin/resync-store.js";
import { type ResyncDeps, isResyncSettling, runResync, settleResync } from "./resync-runner.js";

export interface ResyncJobData {
  operationId: string;
  phase: "run" | "apply";
}

export interface ResyncQueue {
  queue: Queue<ResyncJobData>;
  enqueue(operationId: string, phase: "run" | "apply"): Promise<void>;
  close(): Promise<void>;
}

export function createResyncQueue(options: {
  connection: Redis;
  prefix: string;
  logger: Logger;
  name?: string;
  /** During a Redis outage, at most one `error` line this often (ms). Default 30000. */
  errorLogIntervalMs?: number;
}): ResyncQueue {
  const queue = new Queue<ResyncJobData>(options.name ?? QUEUE_NAMES.resync, {
    connection: options.connection,
    prefix: options.prefix,
  });
  // A Redis outage makes the handle emit `error` about ten times a second: the first is written
  // at once, then one line per 30 s with the count left out (`suppressed`).
  const errorLog = new RateLimitedLog(options.logger, { intervalMs: options.errorLogIntervalMs });
  queue.on("error", (err) =>
    errorLog.warn(`queue ${queue.name}`, { err: err.message, queue: queue.name }, "resync queue error"),
  );
  let closing: Promise<void> | undefined;
  return {
    queue,
    async enqueue(operationId, phase) {
      await queue.add(
        phase,
        { operationId, phase },
        {
          jobId: `${phase}-${operationId}`,
          attempts: 1,
          removeOnComplete: { count: 100 },
          removeOnFail: { count: 100 },
        },
      );
    },
    close() {
      closing ??= queue
        .close()
        .catch((err: unknown) => options.logger.warn({ err }, "closing the resync queue failed"));
      return closing;
    },
  };
}

/**
 * Enqueues again every resync of `source` still `queued`: one whose record an admin's trigger or
 * confirmation wrote in a process killed before its enqueue (AdminService.triggerResync and
 * settleResync write the record, then enqueue) would otherwise wait for ever. One job per
 * operation and phase, so a no-op while its job exists. Run at each scheduled reconciliation tick
 * of the source. Returns how many were queued.
 */
export async function requeueQueuedResyncs(
  resyncs: Pick<ResyncStore, "pages">,
  source: string,
  enqueue: ResyncQueue["enqueue"],
): Promise<number> {
  let queued = 0;
  for await (const page of resyncs.pages({ source })) {
    for (const op of page) {
      if (op.state !== "queued") continue;
      await enqueue(op.id, queuedPhase(op));
      queued++;
    }
  }
  return queued;
}

/**
 * Processes one job of the resync queue. A resync whose entities are tracked (deps.settle) stays
 * `running` until they settle: its job is put back delayed between two passes and comes back
 * here for the next one. Without a job (tests) it waits in place.
 */
export async function processResyncJob(
  deps: ResyncDeps,
  data: ResyncJobData,
  job?: Job,
  token?: string,
  /** The lock duration of the worker that took `job` (its lease extends the lock by it). */
  lockDurationMs?: number,
): Promise<string> {
  if (!job || token === undefined) return processOperation(deps, data);
  return whileHeld(
    { job, token, lockDurationMs },
    deps.logger.child({ module: "resync", operationId: data.operationId }),
    "resync: its job is no longer this process's; stopped here",
    (lease) => processOperation({ ...deps, lease }, data, job, token),
  );
}

async function processOperation(
  deps: ResyncDeps,
  data: ResyncJobData,
  job?: Job,
  token?: string,
): Promise<string> {
  const current = await deps.resyncs.get(data.operationId);
  let op = isResyncSettling(current)
    ? await settleResync(deps, data.operationId)
    : await runResync(deps, data.operationId, data.phase);
  while (isResyncSettling(op)) {
    const tickMs = deps.settle?.tickMs ?? 1000;
    if (job) {
      await job.moveToDelayed(Date.now() + tickMs, token);
      throw new DelayedError();
    }
    await sleep(tickMs);
    op = await settleResync(deps, data.operationId);
  }
  return op?.state ?? "gone";
}

async function failUnfinishedResync(deps: ResyncDeps, id: string, message: string): Promise<void> {
  const op = await deps.resyncs.get(id);
  if (op?.state !== "queued" && op?.state !== "running") return;
  await deps.resyncs.transition(
    {
      ...op,
      state: "failed",
      error: `the resync's job failed: ${message}`,
      finishedAt: new Date().toISOString(),
    },
    [op.state],
  );
}

export function startResyncWorker(options: {
  connection: Redis;
  prefix: string;
  deps: ResyncDeps;
  name?: string;
  concurrency?: number;
  /** Counts the queue's jobs (jobs_total, job_duration_seconds). */
  registry?: Registry;
  /** During a Redis outage, at most one `error` line this often (ms). Default 30000. */
  errorLogIntervalMs?: number;
  /** Holds the resyncs' jobs while they run, for a forced close to hand back (admin-jobs.ts). */
  held?: HeldJobs;
  /** The worker's BullMQ lockDuration (its resyncs' leases extend their locks by it). Default BullMQ's, 30 s. */
  lockDurationMs?: number;
}): Worker<ResyncJobData> {
  const log = options.deps.logger.child({ module: "resync-worker" });
  const errorLog = new RateLimitedLog(log, { intervalMs: options.errorLogIntervalMs });
  // The lease takes the worker's own lock duration (one source: its options, BullMQ's default in them).
  const processor = (job: Job<ResyncJobData>, token?: string): Promise<string> =>
    processResyncJob(options.deps, job.data, job, token, worker.opts.lockDuration);
  const worker: Worker<ResyncJobData> = new Worker<ResyncJobData>(
    options.name ?? QUEUE_NAMES.resync,
    options.held ? options.held.wrap(processor) : processor,
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 2,
      ...(options.lockDurationMs === undefined ? {} : { lockDuration: options.lockDurationMs }),
    },
  );
  if (options.registry) countJobOutcomes(worker, options.registry);
  worker.on("error", (err) =>
    errorLog.warn(`worker ${worker.name}`, { err: err.message, queue: worker.name }, "resync worker error"),
  );
  worker.on("failed", (job, err) => {
    log.error({ jobId: job?.id, ...failureLogFields(err) }, "resync job failed");
    // A job that failed for good leaves its resync `queued` or `running`: it says failed instead.
    const id = job?.data.operationId;
    if (id) {
      void failUnfinishedResync(options.deps, id, err.message).catch((e: unknown) =>
        log.warn({ operationId: id, err: (e as Error).message }, "resync: could not mark it failed"),
      );
    }
  });
  return worker;
}
