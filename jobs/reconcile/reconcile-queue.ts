import { type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "../../src/config/config-schema.js";
import type { Logger } from "../../src/observability/logger.js";
import { QUEUE_NAMES } from "../queue-names.js";
import type { ReconcileDeps } from "./reconcile-ports.js";
import { applyConfirmedRun, runReconcile } from "./reconcile-runner.js";

/** A reconcile job carries a run id (on demand, or a confirmed run to apply) or, when scheduled, a source. */
export type ReconcileJobData =
  | { runId: string; phase: "run" | "apply" }
  | { source: string; scheduled: true };

const SCHEDULER_PREFIX = "reconcile-";
const KEEP = { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } };

export interface ReconcileQueue {
  queue: Queue<ReconcileJobData>;
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
}): ReconcileQueue {
  const queue = new Queue<ReconcileJobData>(options.name ?? QUEUE_NAMES.reconcile, {
    connection: options.connection,
    prefix: options.prefix,
  });
  queue.on("error", (err) =>
    options.logger.warn({ err: err.message, queue: queue.name }, "reconcile queue error"),
  );
  let closing: Promise<void> | undefined;
  return {
    queue,
    async enqueue(runId, phase) {
      // Ids hold no ':' (BullMQ custom ids); one job per run and phase.
      await queue.add(phase, { runId, phase }, { jobId: `${phase}-${runId}`, attempts: 1, ...KEEP });
    },
    async schedule(config) {
      const wanted = new Set(Object.keys(config.sources).map((source) => `${SCHEDULER_PREFIX}${source}`));
      for (const source of Object.keys(config.sources)) {
        await queue.upsertJobScheduler(
          `${SCHEDULER_PREFIX}${source}`,
          { pattern: config.reconcile.schedule },
          { name: "scheduled", data: { source, scheduled: true }, opts: { attempts: 1, ...KEEP } },
        );
      }
      for (const scheduler of await queue.getJobSchedulers()) {
        if (scheduler.key.startsWith(SCHEDULER_PREFIX) && !wanted.has(scheduler.key)) {
          await queue.removeJobScheduler(scheduler.key);
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

/** Processes one reconcile job. Exported for tests. */
export async function processReconcileJob(deps: ReconcileDeps, data: ReconcileJobData): Promise<string> {
  if ("scheduled" in data) {
    if (!Object.hasOwn(deps.config.sources, data.source)) return "unknown source";
    const latest = await deps.runs.list({ source: data.source, offset: 0, limit: 1 });
    const busy = latest.items[0];
    if (busy && (busy.state === "running" || busy.state === "queued")) return "skipped: a run is in progress";
    const run = await deps.runs.createRun({ source: data.source, dryRun: false, trigger: "schedule" });
    return (await runReconcile(deps, run.runId))?.state ?? "gone";
  }
  const run =
    data.phase === "apply" ? await applyConfirmedRun(deps, data.runId) : await runReconcile(deps, data.runId);
  return run?.state ?? "gone";
}

export function startReconcileWorker(options: {
  connection: Redis;
  prefix: string;
  deps: ReconcileDeps;
  name?: string;
  /** Runs at once in this process. Default 2. */
  concurrency?: number;
}): Worker<ReconcileJobData> {
  const log = options.deps.logger.child({ module: "reconcile-worker" });
  const worker = new Worker<ReconcileJobData>(
    options.name ?? QUEUE_NAMES.reconcile,
    (job: Job<ReconcileJobData>) => processReconcileJob(options.deps, job.data),
    { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency ?? 2 },
  );
  worker.on("error", (err) => log.warn({ err: err.message }, "reconcile worker error"));
  worker.on("failed", (job, err) => log.error({ jobId: job?.id, err: err.message }, "reconcile job failed"));
  return worker;
}
