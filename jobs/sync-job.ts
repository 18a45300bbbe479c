import type { JobsOptions } from "bullmq";
import { type EntityRef, refKey } from "../src/scim/scim-types.js";

/** A sync job's data: a reference, never a payload (no personal data, no secrets). */
export type SyncJobData = EntityRef;

export const SYNC_JOB_NAME = "sync";
export const LIFECYCLE_JOB_NAME = "flush";
/** The one lifecycle flush: at most one runs, and one more is kept while it runs. */
export const LIFECYCLE_DEDUP_ID = "lifecycle-flush";

export interface SyncJobTuning {
  /** Attempts of a sync job before its entity is dead-lettered. Default 8. */
  attempts?: number;
  /** First retry delay (exponential, with jitter). Default 1000 ms. */
  backoffMs?: number;
}

/** Finished jobs are trimmed (invariant 6). */
export const REMOVE_ON_COMPLETE = { count: 1_000 };
export const REMOVE_ON_FAIL = { count: 5_000 };

/**
 * Options of a sync job. `deduplication.keepLastIfActive`: while a job of this entity waits, an
 * add is ignored (the waiting job reads the latest state anyway); while one is active, one more is
 * kept and runs right after, so a change that lands during a sync is never lost (invariant 2) and
 * at most one sync per entity runs at a time (invariant 3).
 */
export function syncJobOptions(ref: EntityRef, tuning: SyncJobTuning = {}): JobsOptions {
  return {
    deduplication: { id: refKey(ref), keepLastIfActive: true },
    attempts: tuning.attempts ?? 8,
    backoff: { type: "exponential", delay: tuning.backoffMs ?? 1_000, jitter: 0.5 },
    removeOnComplete: REMOVE_ON_COMPLETE,
    removeOnFail: REMOVE_ON_FAIL,
  };
}

/**
 * Options of a sweeper re-enqueue: plain deduplication. A waiting or running job of the entity
 * already covers it (a change during a running sync enqueued its own follow-up), so the sweeper
 * never stacks follow-ups behind running jobs.
 */
export function sweepJobOptions(ref: EntityRef, tuning: SyncJobTuning = {}): JobsOptions {
  return { ...syncJobOptions(ref, tuning), deduplication: { id: refKey(ref) } };
}

export function lifecycleJobOptions(delayMs: number): JobsOptions {
  return {
    deduplication: { id: LIFECYCLE_DEDUP_ID, keepLastIfActive: true },
    delay: delayMs,
    attempts: 50,
    backoff: { type: "fixed", delay: 1_000 },
    removeOnComplete: REMOVE_ON_COMPLETE,
    removeOnFail: REMOVE_ON_FAIL,
  };
}

export function isSyncJobData(data: unknown): data is SyncJobData {
  if (!data || typeof data !== "object") return false;
  const d = data as Record<string, unknown>;
  return (
    typeof d["source"] === "string" &&
    (d["kind"] === "user" || d["kind"] === "group") &&
    typeof d["id"] === "string"
  );
}
