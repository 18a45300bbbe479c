import { DelayedError, type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { queuedPhase } from "../../src/admin/operation-store.js";
import type { Config } from "../../src/config/config-schema.js";
import { recordReconcileRun } from "../../src/observability/bridge-metrics.js";
import type { Logger } from "../../src/observability/logger.js";
import { RateLimitedLog } from "../../src/observability/rate-limited-log.js";
import { failureLogFields } from "./failure-log-fields.js";
import type { HeldJobs } from "../job-hand-back.js";
import { whileHeld } from "../job-lease.js";
import { countJobOutcomes } from "../job-metrics.js";
import { QUEUE_NAMES } from "../queue-names.js";
import type { ReconcileDeps } from "./reconcile-ports.js";
import { applyConfirmedRun, isSettling, runReconcile, settleRun } from "./reconcile-runner.js";
import { sleep } from "./repair-settlement.js";

/** A reconcile job carries a run id (on demand, or a confirmed run to apply) or, when scheduled, a source. */
export type ReconcileJobData =
  | { runId: string; phase: "run" | "apply" }
  | { source: string; scheduled: true };

const SCHEDULER_PREFIX = "reconcile-";
/** A run still queued or running after this long no longer holds scheduled runs back. */
const STUCK_AFTER_MS = 6 * 60 * 60 * 1000;
const KEEP = { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } };

export interface ReconcileQueue {
  queue: Queue<ReconcileJobData>;
  /**
   * The job schedulers live on a queue of their own (`<name>-schedule`): a scheduler always keeps
   * its next run delayed there, which must not hold the bridge's `idle` false. A scheduled job only
   * creates a run and enqueues it on the reconcile queue, where it counts as work.
   */
  scheduleQueue: Queue<ReconcileJobData>;
  enqueue(runId: string, phase: "run" | "apply"): Promise<void>;
  /**
   * One BullMQ job scheduler per source on `reconcile.schedule` (upsertJobScheduler), and
   * schedulers of sources no longer configured removed.
   */
  schedule(config: Config): Promise<void>;
  close(): Promise<void>;
}

export function createReconcileQueue(options: {
  connection: Redis;
  prefix: string;
  logger: Logger;
  /** Tests use their own. Default QUEUE_NAMES.reconcile. */
  name?: string;
  /** During a Redis outage, at most one `error` line per handle this often (ms). Default 30000. */
  errorLogIntervalMs?: number;
}): ReconcileQueue {
  const queue = new Queue<ReconcileJobData>(options.name ?? QUEUE_NAMES.reconcile, {
    connection: options.connection,
    prefix: options.prefix,
  });
  const scheduleQueue = new Queue<ReconcileJobData>(`${queue.name}-schedule`, {
    connection: options.connection,
    prefix: options.prefix,
  });
  // A Redis outage makes each handle emit `error` about ten times a second: the first is written
  // at once, then one line per 30 s with the count left out (`suppressed`).
  const errorLog = new RateLimitedLog(options.logger, { intervalMs: options.errorLogIntervalMs });
  for (const q of [queue, scheduleQueue]) {
    q.on("error", (err) =>
      errorLog.warn(`queue ${q.name}`, { err: err.message, queue: q.name }, "reconcile queue error"),
    );
  }
  let closing: Promise<void> | undefined;
  return {
    queue,
    scheduleQueue,
    async enqueue(runId, phase) {
      // Ids hold no ':' (BullMQ custom ids); one job per run and phase.
      await queue.add(phase, { runId, phase }, { jobId: `${phase}-${runId}`, attempts: 1, ...KEEP });
    },
    async schedule(config) {
      const wanted = new Set(Object.keys(config.sources).map((source) => `${SCHEDULER_PREFIX}${source}`));
      for (const source of Object.keys(config.sources)) {
        await scheduleQueue.upsertJobScheduler(
          `${SCHEDULER_PREFIX}${source}`,
          { pattern: config.reconcile.schedule },
          { name: "scheduled", data: { source, scheduled: true }, opts: { attempts: 1, ...KEEP } },
        );
      }
      for (const scheduler of await scheduleQueue.getJobSchedulers()) {
        if (scheduler.key.startsWith(SCHEDULER_PREFIX) && !wanted.has(scheduler.key)) {
          await scheduleQueue.removeJobScheduler(scheduler.key);
        }
      }
    },
    close() {
      closing ??= queue
        .close()
        .catch((err: unknown) => options.logger.warn({ err }, "closing the reconcile queue failed"));
      return closing;
    },
  };
}

/**
 * A scheduled tick: creates a run for the source and enqueues it (skipped while one is in progress).
 * A run still `queued` is enqueued again (one job per run and phase: a no-op while its job exists),
 * so that a run whose record was written by a process killed before its enqueue (here, or an
 * admin's trigger) is taken at the next tick instead of holding every tick back as "in progress".
 * `requeueResyncs` does the same for the source's resyncs (jobs/resync/resync-queue.ts), best effort.
 */
export async function processScheduledTick(
  deps: ReconcileDeps,
  source: string,
  enqueue: ReconcileQueue["enqueue"],
  requeueResyncs?: (source: string) => Promise<unknown>,
): Promise<string> {
  if (!Object.hasOwn(deps.config.sources, source)) return "unknown source";
  // Best effort: a failure here (logged) must not keep the source's reconciliation from its tick.
  await requeueResyncs?.(source).catch((err: unknown) =>
    deps.logger.warn(
      { source, ...failureLogFields(err) },
      "reconcile tick: the source's queued resyncs could not be enqueued again (the next tick tries again)",
    ),
  );
  // Any run of the source in progress, not only the newest: a dry run an operator started while a
  // run waits for its repairs to settle is newer, and done.
  for await (const page of deps.runs.pages({ source })) {
    const busy = page.find(
      (run) =>
        (run.state === "running" || run.state === "queued") &&
        Date.now() - Date.parse(run.createdAt) < STUCK_AFTER_MS,
    );
    if (busy) {
      if (busy.state === "queued") await enqueue(busy.runId, queuedPhase(busy));
      return "skipped: a run is in progress";
    }
  }
  const run = await deps.runs.createRun({ source, dryRun: false, trigger: "schedule" });
  await enqueue(run.runId, "run");
  return run.runId;
}

/**
 * Processes one job of the reconcile queue. Exported for tests. A run whose applied repairs are
 * tracked (deps.settle) stays `running` until they settle: its job is put back delayed between two
 * passes (no worker waits, and no outcome is counted per pass) and comes back here, where the
 * next pass runs. Without a job (tests) it waits in place.
 */
export async function processReconcileJob(
  deps: ReconcileDeps,
  data: ReconcileJobData,
  job?: Job,
  token?: string,
  /** The lock duration of the worker that took `job` (its lease extends the lock by it). */
  lockDurationMs?: number,
): Promise<string> {
  if ("scheduled" in data) return "ignored: scheduled ticks run on the schedule queue";
  if (!job || token === undefined) return processRun(deps, data);
  return whileHeld(
    { job, token, lockDurationMs },
    deps.logger.child({ module: "reconcile", runId: data.runId }),
    "reconcile: the run's job is no longer this process's; stopped here",
    (lease) => processRun({ ...deps, lease }, data, job, token),
  );
}

async function processRun(
  deps: ReconcileDeps,
  data: { runId: string; phase: "run" | "apply" },
  job?: Job,
  token?: string,
): Promise<string> {
  const current = await deps.runs.get(data.runId);
  let run = isSettling(current)
    ? await settleRun(deps, data.runId)
    : data.phase === "apply"
      ? await applyConfirmedRun(deps, data.runId)
      : await runReconcile(deps, data.runId);
  while (isSettling(run)) {
    const tickMs = deps.settle?.tickMs ?? 1000;
    if (job) {
      await job.moveToDelayed(Date.now() + tickMs, token);
      throw new DelayedError();
    }
    await sleep(tickMs);
    run = await settleRun(deps, data.runId);
  }
  return run?.state ?? "gone";
}

/**
 * Ends a run still `queued` or `running` as `failed` (its job failed for good), counted in
 * reconcile_runs_total like any run that failed: the counter is what shows a failed run.
 */
async function failUnfinishedRun(deps: ReconcileDeps, runId: string, message: string): Promise<void> {
  const run = await deps.runs.get(runId);
  if (run?.state !== "queued" && run?.state !== "running") return;
  const failed = {
    ...run,
    state: "failed" as const,
    error: `the run's job failed: ${message}`,
    finishedAt: new Date().toISOString(),
  };
  if (!(await deps.runs.transition(failed, [run.state]))) return;
  if (deps.registry) recordReconcileRun(deps.registry, run.source, failed.state);
  await deps.runs.dropOwnedKeys(runId);
}

/** Starts the workers of the reconcile queue and of its schedule queue. */
export function startReconcileWorker(options: {
  connection: Redis;
  prefix: string;
  deps: ReconcileDeps;
  queue: ReconcileQueue;
  /** Runs at once in this process. Default 2. */
  concurrency?: number;
  /** During a Redis outage, at most one `error` line per worker this often (ms). Default 30000. */
  errorLogIntervalMs?: number;
  /** Holds the runs' jobs while they run, for a forced close to hand back (admin-jobs.ts). */
  held?: HeldJobs;
  /** The run worker's BullMQ lockDuration (its runs' leases extend their locks by it). Default BullMQ's, 30 s. */
  lockDurationMs?: number;
  /** At each scheduled tick, enqueues the source's resyncs still `queued` again (requeueQueuedResyncs). */
  requeueResyncs?: (source: string) => Promise<unknown>;
}): Worker[] {
  const log = options.deps.logger.child({ module: "reconcile-worker" });
  const errorLog = new RateLimitedLog(log, { intervalMs: options.errorLogIntervalMs });
  // The lease takes the worker's own lock duration (one source: its options, BullMQ's default in them).
  const processor = (job: Job<ReconcileJobData>, token?: string): Promise<string> =>
    processReconcileJob(options.deps, job.data, job, token, worker.opts.lockDuration);
  const worker: Worker<ReconcileJobData> = new Worker<ReconcileJobData>(
    options.queue.queue.name,
    options.held ? options.held.wrap(processor) : processor,
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 2,
      ...(options.lockDurationMs === undefined ? {} : { lockDuration: options.lockDurationMs }),
    },
  );
  const ticker = new Worker<ReconcileJobData>(
    options.queue.scheduleQueue.name,
    async (job: Job<ReconcileJobData>) =>
      "scheduled" in job.data
        ? processScheduledTick(options.deps, job.data.source, options.queue.enqueue, options.requeueResyncs)
        : "ignored",
    { connection: options.connection, prefix: options.prefix, concurrency: 1 },
  );
  for (const w of [worker, ticker]) {
    // deps.registry: counts the jobs of both queues (jobs_total, job_duration_seconds).
    if (options.deps.registry) countJobOutcomes(w, options.deps.registry);
    w.on("error", (err) =>
      errorLog.warn(`worker ${w.name}`, { err: err.message, queue: w.name }, "reconcile worker error"),
    );
    w.on("failed", (job, err) =>
      log.error({ jobId: job?.id, ...failureLogFields(err) }, "reconcile job failed"),
    );
  }
  // A job that failed for good (it stalled again and again, Redis failed under it) leaves its run
  // `queued` or `running`: the run says it failed instead of running forever.
  worker.on("failed", (job, err) => {
    const data = job?.data;
    if (!data || !("runId" in data)) return;
    void failUnfinishedRun(options.deps, data.runId, err.message).catch((e: unknown) =>
      log.warn({ runId: data.runId, err: (e as Error).message }, "reconcile: could not mark the run failed"),
    );
  });
  return [worker, ticker];
}
