import { type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "../../src/observability/logger.js";
import type { Registry } from "../../src/observability/metrics.js";
import { countJobOutcomes } from "../job-metrics.js";
import { QUEUE_NAMES } from "../queue-names.js";
import { type ResyncDeps, runResync } from "./resync-runner.js";

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
}): ResyncQueue {
  const queue = new Queue<ResyncJobData>(options.name ?? QUEUE_NAMES.resync, {
    connection: options.connection,
    prefix: options.prefix,
  });
  queue.on("error", (err) =>
    options.logger.warn({ err: err.message, queue: queue.name }, "resync queue error"),
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

export function startResyncWorker(options: {
  connection: Redis;
  prefix: string;
  deps: ResyncDeps;
  name?: string;
  concurrency?: number;
  /** Counts the queue's jobs (jobs_total, job_duration_seconds). */
  registry?: Registry;
}): Worker<ResyncJobData> {
  const log = options.deps.logger.child({ module: "resync-worker" });
  const worker = new Worker<ResyncJobData>(
    options.name ?? QUEUE_NAMES.resync,
    async (job: Job<ResyncJobData>) =>
      (await runResync(options.deps, job.data.operationId, job.data.phase))?.state ?? "gone",
    { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency ?? 2 },
  );
  if (options.registry) countJobOutcomes(worker, options.registry);
  worker.on("error", (err) => log.warn({ err: err.message }, "resync worker error"));
  worker.on("failed", (job, err) => log.error({ jobId: job?.id, err: err.message }, "resync job failed"));
  return worker;
}
