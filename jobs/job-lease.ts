import type { Job } from "bullmq";
import { OperationNotHeld } from "../src/admin/operation-not-held.js";
import type { OperationHolder } from "../src/admin/operation-store.js";
import type { Logger } from "../src/observability/logger.js";

/**
 * This process no longer holds the job it was running: a forced close handed it back to the queue
 * (HeldJobs.handBack, job-hand-back.ts), or its lock ran out and the stalled check moved it on. The
 * next holder runs it again from its start; this process stops where it is, quietly: it records
 * no failure (the run or resync is not over) and writes nothing more of it.
 */
export class JobHandedOn extends Error {
  constructor(jobId: string | undefined) {
    super(`job ${jobId ?? "?"} is no longer held by this process`);
    this.name = "JobHandedOn";
  }
}

/** What a run's or resync's processor answers for a job this process no longer holds. */
export const HANDED_ON = "handed_on";

/**
 * Whether the error says the job was handed on: JobHandedOn (a lease check), or OperationNotHeld
 * (a record write refused because the job's lock was no longer this process's).
 */
export function isJobHandedOn(err: unknown): err is JobHandedOn | OperationNotHeld {
  return err instanceof JobHandedOn || err instanceof OperationNotHeld;
}

/**
 * What a run or resync checks before each chunk of its Redis-only work (a platform call of a frozen
 * job never returns, but Redis work would go on in the closing process while the next process runs
 * the same job: two fan-outs, two writers of the same record).
 */
export interface JobLease {
  /** Throws JobHandedOn when this process no longer holds the job. */
  check(): Promise<void>;
  /**
   * The job's lock key and this process's token: what a write of the run's or resync's record
   * passes (OperationStore.transition), so that the write and the check that the job is still held
   * are one step. A check and a write that follows it are two: the job may be handed on between.
   * jobLease always gives it; a lease without it (tests) writes unguarded.
   */
  readonly holder?: OperationHolder;
}

/**
 * BullMQ's default lock duration of a worker (WorkerOptions.lockDuration): the lease of a job
 * taken with no worker's options at hand (tests that take jobs themselves). Workers pass their own
 * (`worker.opts.lockDuration`, startReconcileWorker and startResyncWorker).
 */
export const DEFAULT_LOCK_DURATION_MS = 30_000;

/**
 * The lease of a job taken with `token`: held while its lock key still holds that token. Checking
 * extends the lock by `lockDurationMs`, the lock duration of the worker that took the job (as the
 * worker's lock renewal does; BullMQ's extendLock answers 0 once the lock is gone or another
 * holder's). A Redis failure here is no answer: the work that follows meets it and fails as it
 * would have.
 */
export function jobLease(job: Job, token: string, lockDurationMs = DEFAULT_LOCK_DURATION_MS): JobLease {
  return {
    // BullMQ's lock key of a job (its extendLock: the job's key + ":lock"), holding the token.
    holder: { lockKey: `${job.queueQualifiedName}:${job.id}:lock`, token },
    async check() {
      let extended: number;
      try {
        extended = await job.extendLock(token, lockDurationMs);
      } catch {
        return;
      }
      if (extended !== 1) throw new JobHandedOn(job.id);
    },
  };
}

/**
 * When a job's run started, for lockLost: when the job last moved to active (BullMQ's processedOn),
 * or now when that is unknown or in the future (another host's clock).
 */
export function jobStartedAt(job: Job | undefined): number {
  return Math.min(Date.now(), job?.processedOn ?? Number.POSITIVE_INFINITY);
}

/**
 * Whether a queue job's run may have lost its job: its process frozen past the lock duration (a
 * long GC pause, a stopped VM or container) while BullMQ's stalled check gave the job to another
 * run. Checked by extending the lock, as the worker's renewal would, once the run is old enough for
 * its lock to have run out (`startedAt`: jobStartedAt; before half the lock
 * duration it cannot have). A Redis failure here is no answer (false): the work goes on and meets it.
 */
export async function lockLost(
  job: Job,
  token: string | undefined,
  startedAt: number,
  lockDurationMs: number,
): Promise<boolean> {
  if (token === undefined || Date.now() - startedAt < lockDurationMs / 2) return false;
  try {
    return (await job.extendLock(token, lockDurationMs)) !== 1;
  } catch {
    return false;
  }
}

/** A job as its worker took it: the job, its lock token, and the worker's lock duration (if known). */
export interface TakenJob {
  job: Job;
  token: string;
  /** The worker's lockDuration. Default DEFAULT_LOCK_DURATION_MS. */
  lockDurationMs?: number;
}

/**
 * Runs `work` under the lease of a taken job. A job handed on meanwhile (JobHandedOn) ends here
 * with one warn line on `log` and HANDED_ON: nothing is recorded, since the run or resync is not
 * over and its job did not fail; the next holder runs it again.
 */
export async function whileHeld(
  taken: TakenJob,
  log: Logger,
  message: string,
  work: (lease: JobLease) => Promise<string>,
): Promise<string> {
  const { job, token, lockDurationMs } = taken;
  try {
    return await work(jobLease(job, token, lockDurationMs));
  } catch (err) {
    if (!isJobHandedOn(err)) throw err;
    log.warn({ jobId: job.id }, message);
    return HANDED_ON;
  }
}

/**
 * Records a run's or resync's failure (`record`: the write of its record, refused once the job is
 * no longer this holder's), then tells it at error level (`tell`). A write refused because the job
 * was handed on (OperationNotHeld) tells nothing and throws on: the failure met a job whose next
 * holder runs it again (a platform call cut off by the forced close that handed it back, say), no
 * human has to act, and whileHeld ends it with its one warn line. A write that fails otherwise
 * (Redis) still tells the failure, then throws.
 */
export async function recordFailure<T>(record: () => Promise<T>, tell: () => void): Promise<T> {
  let recorded: T;
  try {
    recorded = await record();
  } catch (err) {
    if (!isJobHandedOn(err)) tell();
    throw err;
  }
  tell();
  return recorded;
}
