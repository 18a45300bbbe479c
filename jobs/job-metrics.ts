import type { Job, Worker } from "bullmq";
import { bridgeMetrics } from "../src/observability/bridge-metrics.js";
import type { Registry } from "../src/observability/metrics.js";

export type JobOutcome = "completed" | "retried" | "dead_lettered";

/**
 * What became of a job that failed: retried while it has attempts left, dead-lettered (kept in the
 * queue's failed set) once they are spent or when the error is an UnrecoverableError. The same
 * rule as BullMQ's Job.shouldRetryJob; `attemptsMade` already counts the failed attempt.
 */
export function failedOutcome(job: Job, err: Error): JobOutcome {
  const spent = job.attemptsMade >= (job.opts.attempts ?? 1);
  return spent || err.name === "UnrecoverableError" ? "dead_lettered" : "retried";
}

/**
 * Counts every job a worker finishes in `jobs_total{queue,outcome}` and its processing time in
 * `job_duration_seconds{queue,outcome}`, from the worker's own completed and failed events (the
 * one place for both metrics, whatever the queue). Rate-limited and delayed jobs are moved back
 * without either event: they are not an outcome.
 */
export function countJobOutcomes(worker: Worker, registry: Registry): void {
  const metrics = bridgeMetrics(registry);
  const record = (job: Job, outcome: JobOutcome) => {
    const labels = { queue: worker.name, outcome };
    metrics.jobs.inc(labels);
    if (job.processedOn) {
      const seconds = Math.max(0, (job.finishedOn ?? Date.now()) - job.processedOn) / 1000;
      metrics.jobDuration.observe(labels, seconds);
    }
  };
  worker.on("completed", (job) => record(job, "completed"));
  worker.on("failed", (job, err) => {
    if (job) record(job, failedOutcome(job, err));
  });
}
