import { snapshotEntity } from "../src/directory/snapshot-entity.js";
import { DelayedError, type Job, type Queue, UnrecoverableError, Worker } from "bullmq";
import type { Logger } from "../src/observability/logger.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import { type WriteWatch, WritesStopped, watchWrites } from "../src/platform/client/unanswered-writes.js";
import type { EntityRef } from "../src/scim/scim-types.js";
import { forgetAbsent } from "../src/sync/forget-absent.js";
import { checkLateWrites, writeMarker } from "../src/sync/late-writes.js";
import type { SyncContext, SyncOutcome, SyncProgress } from "../src/sync/sync-context.js";
import {
  type FailureFate,
  REDIS_UNAVAILABLE,
  classifyFailure,
  isJobControlError,
  isRedisFailure,
} from "../src/sync/sync-error.js";
import { syncGroup } from "../src/sync/sync-group.js";
import { syncUser } from "../src/sync/sync-user.js";
import { DEFAULT_LOCK_DURATION_MS, jobStartedAt, lockLost } from "./job-lease.js";
import { type SyncJobData, isSyncJobData } from "./sync-job.js";
import type { SyncMetrics } from "./sync-metrics.js";

export interface SyncProcessorDeps {
  ctx: SyncContext;
  /** The sync queue (its rate limit pauses every worker of the queue). */
  queue: Queue<SyncJobData>;
  budget: RequestBudget;
  metrics: SyncMetrics;
  logger: Logger;
  /** A job rate-limited more often than this burns an attempt after all. Default 20. */
  maxRateLimitLoops?: number;
  /** The workers' BullMQ lock duration (what a run extends its job's lock by when it checks it). Default 30 s. */
  lockDurationMs?: number;
}

/** Records a permanent failure everywhere it must show (invariant 7). */
export async function recordDeadLetter(
  deps: Pick<SyncProcessorDeps, "ctx" | "metrics" | "logger">,
  ref: EntityRef,
  fate: Pick<FailureFate, "code" | "message" | "operation">,
  attempts: number,
  generation: number | undefined,
  /** Told once the letter itself is written (what fails after it leaves the letter in place). */
  written?: { deadLettered: boolean },
): Promise<void> {
  const at = new Date().toISOString();
  const { state } = deps.ctx;
  await state.addDeadLetter({
    ref,
    reason: fate.message,
    code: fate.code,
    operation: fate.operation,
    at,
    attempts,
  });
  if (written) written.deadLettered = true;
  // Counted and logged as soon as the letter is there: a status or marker that cannot be written
  // next does not hide it.
  deps.metrics.countDeadLetter({ source: ref.source, code: fate.code, kind: ref.kind });
  deps.logger.error(
    { ref, code: fate.code, operation: fate.operation, attempts },
    "sync failed for good: dead letter",
  );
  await noteFailure(deps.ctx, ref, "dead", fate, attempts, at);
  // A dead letter does not hold the bridge busy; a later change or an admin retry syncs it again.
  if (generation !== undefined) await deps.ctx.directory.markClean(ref, generation);
}

/** Records on the entity's status why it is not synced (yet: pending, retrying; or for good: dead). */
async function noteFailure(
  ctx: SyncProcessorDeps["ctx"],
  ref: EntityRef,
  state: "pending" | "retrying" | "dead",
  fate: Pick<FailureFate, "code" | "message" | "operation">,
  attempts: number,
  at: string = new Date().toISOString(),
): Promise<void> {
  await ctx.state.setStatus({
    ...(await ctx.state.getStatus(ref)),
    ref,
    state,
    lastError: { message: fate.message, code: fate.code, operation: fate.operation, at, attempts },
  });
}

/**
 * Whether the entity's desired state moved on from `generation`, the one the failed sync planned
 * from (a newer write, or the entity gone). Undefined when the sync failed before its snapshot.
 */
async function desiredStateMoved(
  ctx: SyncProcessorDeps["ctx"],
  ref: EntityRef,
  generation: number | undefined,
): Promise<boolean> {
  if (generation === undefined) return false;
  const now = await snapshotEntity(ctx.directory, ref);
  return now === null || now.generation !== generation;
}

/**
 * Pauses the queue for `ms` (at least 1 ms: BullMQ's rateLimit(0) is a Redis error) and ends the
 * job as rate limited (no attempt burned).
 */
export async function rateLimited(deps: { queue: Queue }, ms: number): Promise<never> {
  await deps.queue.rateLimit(Math.max(1, Math.ceil(ms)));
  throw Worker.RateLimitError();
}

/**
 * The sync processor: snapshot -> plan -> execute -> record -> mark clean (if the generation did
 * not move; otherwise the entity stays dirty and its follow-up job is already queued). Failures:
 * 429 pauses the whole queue without burning an attempt, transient errors retry with backoff,
 * permanent ones become dead letters (UnrecoverableError).
 */
export function createSyncProcessor(deps: SyncProcessorDeps) {
  const { ctx, metrics, logger } = deps;
  const maxLoops = deps.maxRateLimitLoops ?? 20;
  const lockDurationMs = deps.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS;
  /**
   * Once its platform part is over, whether this run lost its job: the lock ran out (the process
   * frozen past the lock duration: a long GC pause, a stopped VM) and BullMQ's stalled check may
   * have given the job to another run, which synced the entity again meanwhile. This run's writes
   * may then have landed after that run's (an older displayName over a newer one): nothing it
   * read or planned can be trusted, and nothing it would record. The entity is handed on instead:
   * its next sync reads the platform (a resync) and puts right whatever landed late (lockLost).
   */
  const lostJob = (job: Job<SyncJobData>, token: string | undefined, startedAt: number) =>
    lockLost(job, token, startedAt, lockDurationMs);
  const handOn = async (ref: EntityRef, kind: "synced" | "failed"): Promise<string> => {
    metrics.jobs.inc({ kind: ref.kind, outcome: LOCK_LOST });
    logger.warn(
      { ref, after: kind },
      "sync ran on after its job's lock ran out (another run may have synced the entity since): the entity is read on the platform again",
    );
    await ctx.state.requestResync([ref]);
    await ctx.directory.markDirty(ref);
    return LOCK_LOST;
  };
  /**
   * Takes the entity's resync request for this run. It rides in the job's data before it leaves the
   * set: a process killed after the take (SIGKILL, OOM) puts back neither (putBack, the caller's
   * carry), and the stalled job's re-run, which has the job's data, still reads the platform
   * instead of trusting the applied record (and marking clean an entity whose drift the request was
   * for). A request found carried already is only taken from the set.
   */
  const takeResync = async (job: Job<SyncJobData>, ref: EntityRef): Promise<boolean> => {
    if (!(await ctx.state.isResyncRequested(ref))) return false;
    if (!resyncCarried(job)) await (job as Job).updateData({ ...job.data, [RESYNC_CARRIED]: true });
    await ctx.state.takeResync(ref);
    return true;
  };
  /**
   * One run of the sync. `waiting`: a Redis failure makes the job wait (the caller's waitForRedis)
   * instead of spending an attempt. `flag` follows the resync request this run takes: once put
   * back (`returned`), it is no longer this run's to keep; and whether the run wrote its dead
   * letter, and the generation it read (for the caller's last-resort dead letter).
   */
  const sync = async (
    job: Job<SyncJobData>,
    ref: EntityRef,
    waiting: boolean,
    flag: SyncRun,
    token: string | undefined,
  ): Promise<string> => {
    // When this run's lock was taken (the job moved to active), or at the latest now.
    const startedAt = jobStartedAt(job);
    const [paused, taken] = await Promise.allSettled([deps.budget.pausedUntil(), takeResync(job, ref)]);
    if (taken.status === "rejected") throw taken.reason;
    // A request an earlier run of this job took and could not put back rides in the job's data.
    const resync = taken.value || resyncCarried(job);
    flag.taken = resync;
    const putBack = async () => {
      if (!resync) return;
      await ctx.state.requestResync([ref]);
      flag.returned = true;
    };
    if (paused.status === "rejected") {
      // Redis failed under the budget: the resync request just taken goes back for the next run
      // (or, that failing too, rides in the job: the caller). The budget's failure is the one told.
      await putBack().catch(() => {});
      throw paused.reason;
    }
    const pausedUntil = paused.value;
    if (pausedUntil > Date.now()) {
      await putBack();
      return rateLimited(deps, pausedUntil - Date.now());
    }

    const stopTimer = metrics.duration.startTimer({ kind: ref.kind });
    const progress: SyncProgress = flag.progress;
    let outcome: SyncOutcome;
    const writes: WriteWatch = {
      // Once the job may be another run's, this run sends nothing more to the platform.
      beforeWrite: async () => {
        if (await lostJob(job, token, startedAt)) {
          throw new WritesStopped("the sync's job lock ran out: another run may have the entity");
        }
      },
      // Each write is marked before it goes out: a run that dies with it on the wire leaves the mark.
      markWrite: writeMarker(ctx, ref),
      // A long pause another call met puts this job back at its next call (no job active meanwhile).
      putBackOnLongPause: true,
    };
    try {
      outcome = await watchWrites(writes, () =>
        ref.kind === "user"
          ? syncUser(ctx, ref, { resync }, progress)
          : syncGroup(ctx, ref, { resync }, progress),
      );
    } catch (err) {
      stopTimer();
      // Putting the request back failing (on Redis, say) must not hide the sync's own failure: the
      // request then rides in the job (the caller).
      await putBack().catch(() => {});
      await checkLateWrites(ctx, [ref], writes);
      if (err instanceof WritesStopped || (await lostJob(job, token, startedAt)))
        return handOn(ref, "failed");
      const fate = classifyFailure(err);
      // Redis could not serve: no fault of the entity's (waitForRedis, below), unless the job has
      // waited for it for REDIS_WAIT_LIMIT_MS already: then it spends an attempt like any failure.
      if (fate.redisUnavailable && waiting) throw err;
      const attempts = job.attemptsMade + 1;
      if (fate.code === "unknown_source" && progress.generation === undefined) {
        // A source taken out of the configuration (its dead letter retried, say): it failed before
        // reading the entity. Its dead letter drops the dirty marker at the entity's generation, or
        // the sweeper would enqueue it again at every sweep, for ever.
        // (Gone from the directory: the marker goes whatever the generation. Redis failing here:
        // the job goes on as it would have, and the sweeper comes back to it.)
        try {
          progress.generation = (await snapshotEntity(ctx.directory, ref))?.generation ?? 0;
        } catch {
          progress.generation = undefined;
        }
      }
      // A call held back unsent by a pause other calls met does not count towards the cap: the cap
      // ends an entity the platform itself keeps answering 429 (as the look for a pause before
      // the sync starts, which puts the job back uncounted).
      if (
        fate.rateLimitedForMs !== undefined &&
        (fate.heldBack === true || (await ctx.state.bumpRateLimitLoops(ref)) <= maxLoops)
      ) {
        metrics.jobs.inc({ kind: ref.kind, outcome: "rate_limited" });
        const waitSeconds = Math.ceil(fate.rateLimitedForMs / 1000);
        logger.warn(
          {
            ref,
            code: fate.code,
            operation: fate.operation,
            waitSeconds,
            ...(fate.heldBack ? { heldBack: true } : {}),
          },
          "platform rate limited: the sync queue waits, then the job runs again (no attempt spent)",
        );
        // The operator sees why the entity waits (as for the other transient failures).
        await noteFailure(ctx, ref, "pending", fate, attempts);
        return rateLimited(deps, fate.rateLimitedForMs);
      }
      if (fate.blocked) {
        // Waiting for another entity: stay dirty (the sweeper comes back), burn no attempt.
        metrics.jobs.inc({ kind: ref.kind, outcome: "blocked" });
        logger.info({ ref, code: fate.code }, "sync blocked, will come back");
        await noteFailure(ctx, ref, "pending", fate, attempts);
        return "blocked";
      }
      const lastAttempt = attempts >= (job.opts.attempts ?? 1);
      // A refusal of a desired state that has changed since (a member deleted meanwhile, say)
      // says nothing about the new one: the next attempt plans from it.
      // (A source out of the configuration is not superseded by any change of the entity.)
      const superseded =
        fate.permanent &&
        !lastAttempt &&
        fate.code !== "unknown_source" &&
        (await desiredStateMoved(ctx, ref, progress.generation));
      if ((fate.permanent && !superseded) || lastAttempt) {
        metrics.jobs.inc({ kind: ref.kind, outcome: "dead" });
        flag.deadLetterTried = true;
        await recordDeadLetter(deps, ref, fate, attempts, progress.generation, flag);
        throw new UnrecoverableError(`${fate.code}: ${fate.message}`);
      }
      metrics.jobs.inc({ kind: ref.kind, outcome: "retry" });
      logger.warn(
        { ref, code: fate.code, attempts, ...(superseded ? { superseded } : {}) },
        superseded
          ? "sync refused, but the desired state changed meanwhile: will retry against the new one"
          : "sync failed, will retry",
      );
      await noteFailure(ctx, ref, "retrying", fate, attempts);
      throw err;
    }
    stopTimer();
    // The platform part is done: what fails from here is bookkeeping, never a dead letter (the
    // caller's last resort); the dirty marker brings the entity back to record it.
    flag.synced = true;
    await checkLateWrites(ctx, [ref], writes);
    if (await lostJob(job, token, startedAt)) return handOn(ref, "synced");
    metrics.jobs.inc({ kind: ref.kind, outcome: outcome.result === "clean" ? "synced" : outcome.result });
    if (outcome.result === "clean" || outcome.result === "lifecycle") {
      if (outcome.warnings.length > 0) {
        logger.warn({ ref, problems: outcome.warnings.map((w) => w.code) }, "synced with problems");
      }
      const at = new Date().toISOString();
      const first = outcome.warnings[0];
      // Independent writes: ioredis pipelines them. A queued lifecycle change may be settled by
      // the flusher before this: a user's final one (a deletion) forgets the user, and this must
      // not write its status back (a record of a user the source no longer has); any other, the
      // flusher records it (synced, or its dead letter), and a `pending` here would stand for good.
      await Promise.all([
        ctx.state.recordSynced(
          {
            ref,
            state: outcome.result === "clean" ? "synced" : "pending",
            platformId: outcome.platformId,
            appliedGeneration: outcome.generation,
            lastSyncedAt: at,
            ...(first ? { lastError: { message: first.message, code: first.code, at, attempts: 0 } } : {}),
          },
          outcome.result === "lifecycle" ? { onlyIfApplied: true, onlyWhileQueued: outcome.platformId } : {},
        ),
        outcome.result === "clean" ? ctx.directory.markClean(ref, outcome.generation) : undefined,
      ]);
      return outcome.result;
    }
    // Purged already (a duplicate or late job): clear a marker that may have outlived it.
    // Its status too, if a late run of another job wrote one after the entity was forgotten (and
    // whatever else a run that lost its job wrote on: forgetAbsent).
    if (outcome.result === "absent") {
      await Promise.all([ctx.directory.markClean(ref, 0), forgetAbsent(ctx, ref)]);
    }
    return outcome.result;
  };
  return async (job: Job<SyncJobData>, token?: string): Promise<string> => {
    if (!isSyncJobData(job.data)) throw new UnrecoverableError("malformed sync job");
    const ref: EntityRef = { source: job.data.source, kind: job.data.kind, id: job.data.id };
    // Without a lock token the job cannot be moved: a Redis failure spends an attempt.
    const waiting = token !== undefined && !redisWaitOver(job);
    const flag: SyncRun = {
      taken: false,
      returned: false,
      progress: {},
      deadLetterTried: false,
      deadLettered: false,
      synced: false,
    };
    try {
      return await sync(job, ref, waiting, flag, token);
    } catch (err) {
      if (flag.deadLettered && !isJobControlError(err)) {
        // The letter is written and counted; what failed after it (the status note, the dirty
        // marker) must not make the job wait or retry and write and count it again. The marker,
        // if left, brings the entity back to the sweeper.
        logger.error(
          { ref, err: errorMessage(err) },
          "sync failed for good: its dead letter is written, its status or dirty marker could not be",
        );
        throw new UnrecoverableError(`dead letter written; then ${errorMessage(err)}`);
      }
      // Redis failed with a resync request taken and not put back (putting it back failed too):
      // the job carries it, so that its next run reads the platform instead of trusting the
      // applied record. (Best effort: the job's own connection failing too loses it.)
      const carry = flag.taken && !flag.returned && !resyncCarried(job);
      // Wherever in the sync Redis failed (reading the directory, the request budget, recording
      // the outcome, even recording a dead letter), the job waits for it without spending an
      // attempt, for REDIS_WAIT_LIMIT_MS at most.
      await waitForRedisOrGoOn(job, token, waiting, err, {
        logger,
        fields: { ref },
        what: "sync",
        count: () => metrics.jobs.inc({ kind: ref.kind, outcome: REDIS_UNAVAILABLE }),
        note: (fate) => noteFailure(ctx, ref, "pending", fate, job.attemptsMade),
        data: carry ? { [RESYNC_CARRIED]: true } : {},
      });
      const attempts = job.attemptsMade + 1;
      if (attempts >= (job.opts.attempts ?? 1) && !isJobControlError(err) && !flag.synced) {
        // The job's last attempt failed where the sync's own handling did not see it (the request
        // budget's or the resync request's read, its status note, …): the failure is visible all
        // the same (invariant 7), on the sync state's connection (the queue's: it may serve when the
        // store does not); the dirty marker is dropped when the store serves (best effort).
        const fate = classifyFailure(err);
        if (!flag.deadLetterTried) metrics.jobs.inc({ kind: ref.kind, outcome: "dead" });
        try {
          await recordDeadLetter(deps, ref, fate, attempts, flag.progress.generation, flag);
        } catch (recordErr) {
          logger.error(
            { ref, code: fate.code, attempts, err: errorMessage(recordErr), deadLetter: flag.deadLettered },
            flag.deadLettered
              ? "sync failed for good: its dead letter is written, its status or dirty marker could not be"
              : "sync failed for good: its dead letter could not be written",
          );
        }
        if (flag.deadLettered) throw new UnrecoverableError(`${fate.code}: ${fate.message}`);
      }
      throw err;
    }
  };
}

/** The outcome (and `sync_jobs_total` outcome) of a run that lost its job's lock: the entity is handed on. */
export const LOCK_LOST = "lock_lost";

/** What one run of a sync did that its caller needs to know (createSyncProcessor). */
interface SyncRun {
  /** A resync request taken, and put back. */
  taken: boolean;
  returned: boolean;
  /** What the sync read (the entity's generation). */
  progress: SyncProgress;
  /** The sync's own failure handling went for a dead letter (counted); and the letter is written. */
  deadLetterTried: boolean;
  deadLettered: boolean;
  /** The platform part ended with an outcome; only its recording failed. */
  synced: boolean;
}

/** The job data's field for a resync request the job took and could not put back. */
const RESYNC_CARRIED = "resync";

function resyncCarried(job: Pick<Job, "data">): boolean {
  return (job.data as Record<string, unknown> | undefined)?.[RESYNC_CARRIED] === true;
}

/** The longest a job waits for Redis before it tries again (the wait doubles up to it). */
export const REDIS_WAIT_MAX_MS = 30_000;

/**
 * How long a job (a sync, the lifecycle flush) keeps waiting for Redis, counted from its first
 * wait: 10 minutes. Past it, a Redis failure spends one of the job's attempts like any transient
 * failure, so that a failure that never heals (one entity's read that always outlasts the store
 * client's command timeout, say) ends as a visible dead letter (`redis_unavailable`) instead of
 * waiting for ever. Longer than the Redis outages the bridge rides out (a restart, a failover).
 */
export const REDIS_WAIT_LIMIT_MS = 10 * 60_000;

/** The job data's field for when the job first waited for Redis (ms since the epoch). */
const REDIS_WAIT_SINCE = "redisWaitSince";

/** The job data's field for the start (attemptsStarted) of the job's run that last waited. */
const REDIS_WAIT_RUN = "redisWaitRun";

/**
 * When the job's current wait for Redis began: the first of the waits that ended the job's runs
 * since, one after the other. A run that did something else in between (spent an attempt, was
 * rate limited, stalled) ends that wait: a Redis failure after it starts a new one, so that the
 * limit bounds consecutive waiting only, not a blip long after an earlier one. (Told by the
 * job's starts, BullMQ's attemptsStarted, one per run: the last wait's run is the one before.)
 */
export function redisWaitSince(job: Pick<Job, "data" | "attemptsStarted">): number | undefined {
  const data = job.data as Record<string, unknown> | undefined;
  const since = data?.[REDIS_WAIT_SINCE];
  if (typeof since !== "number") return undefined;
  const run = data?.[REDIS_WAIT_RUN];
  if (typeof run === "number" && typeof job.attemptsStarted === "number" && job.attemptsStarted !== run + 1) {
    return undefined;
  }
  return since;
}

/**
 * The job data's fields that keep a wait for Redis going across a run that met Redis failing past
 * the limit and spent an attempt instead: the failures are still consecutive, and the job's next
 * run does not wait again (none when the job is not waiting).
 */
function redisWaitGoesOn(job: Pick<Job, "data" | "attemptsStarted">): Record<string, unknown> {
  return redisWaitSince(job) === undefined ? {} : { [REDIS_WAIT_RUN]: job.attemptsStarted };
}

/** Whether the job has waited for Redis for REDIS_WAIT_LIMIT_MS already (it waits no more). */
export function redisWaitOver(
  job: Pick<Job, "data" | "attemptsStarted">,
  now: number = Date.now(),
  limitMs: number = REDIS_WAIT_LIMIT_MS,
): boolean {
  const since = redisWaitSince(job);
  return since !== undefined && now - since >= limitMs;
}

/**
 * How long a job waits after its `waits`-th consecutive failure on Redis (0 for the first): the
 * job's own backoff delay, doubled each time up to REDIS_WAIT_MAX_MS, with jitter (between half
 * and all of it) so that the jobs an outage stopped do not all come back at once.
 */
export function redisWaitMs(
  job: Pick<Job, "opts">,
  waits: number,
  random: () => number = Math.random,
): number {
  const backoff = job.opts.backoff;
  const base = Math.max(1, (typeof backoff === "number" ? backoff : backoff?.delay) ?? 1_000);
  const ceiling = Math.min(REDIS_WAIT_MAX_MS, base * 2 ** Math.min(Math.max(0, waits), 20));
  return Math.max(1, Math.round(ceiling * (0.5 + random() / 2)));
}

/** What a job that waits for Redis reports, and where (waitForRedis). */
export interface RedisWaitReport {
  logger: Logger;
  /** Fields of the warn line (the entity's ref for a sync). */
  fields: Record<string, unknown>;
  /** What waits, in the warn line: "sync", "lifecycle flush". */
  what: string;
  /** Counts the wait in the job's own metric. */
  count(): void;
  /** Records the wait on the entity's status (best effort). */
  note?(fate: Pick<FailureFate, "code" | "message">): Promise<void>;
  /** More fields to keep in the job's data. */
  data?: Record<string, unknown>;
}

/**
 * A job that failed because Redis could not serve (slow past the store client's command timeout,
 * unreachable, loading) says nothing about its entity: the job goes back to the delayed set without
 * spending an attempt (BullMQ's moveToDelayed + DelayedError) and runs again later, so that an
 * outage of the store does not dead-letter the entities it touched, for REDIS_WAIT_LIMIT_MS from
 * the first of its consecutive waits (kept in the job's data, redisWaitSince; the caller stops
 * calling this past it). The job keeps
 * its id, so its deduplication holds: one sync per entity at a time (invariant 3), and a change
 * that lands meanwhile is read by its next run, or by the follow-up BullMQ keeps for a change made
 * while it was active (invariant 2). Visible (invariant 7): the caller's metric
 * (`sync_jobs_total{outcome="redis_unavailable"}`), a `warn` line, and for a sync the entity's
 * status `pending` with `lastError.code` `redis_unavailable` (written on the queue's connection,
 * which still works when only the store's command timeout is exceeded; a status that cannot be
 * written is left out).
 */
async function waitForRedis(job: Job, token: string, err: unknown, report: RedisWaitReport): Promise<never> {
  const now = Date.now();
  const since = redisWaitSince(job);
  // Starts of this job that spent no attempt before this one: its earlier waits (and rate limits).
  const waits = Math.max(0, (job.attemptsStarted ?? 1) - job.attemptsMade - 1);
  const delayMs = redisWaitMs(job, waits);
  report.count();
  report.logger.warn(
    {
      ...report.fields,
      code: REDIS_UNAVAILABLE,
      err: errorMessage(err),
      waitMs: delayMs,
      waits: waits + 1,
      waitingForMs: since === undefined ? 0 : now - since,
    },
    `Redis unavailable during the ${report.what}: the job waits, then runs again (no attempt spent)`,
  );
  try {
    await report.note?.({
      code: REDIS_UNAVAILABLE,
      message: `Redis could not serve the ${report.what}: ${errorMessage(err)}`,
    });
  } catch {
    // The status is best effort here; the metric and the line above say it.
  }
  // Kept at every wait: the wait's start, and which run waited (redisWaitSince).
  await job.updateData({
    ...job.data,
    [REDIS_WAIT_SINCE]: since ?? now,
    [REDIS_WAIT_RUN]: job.attemptsStarted,
    ...(report.data ?? {}),
  });
  await job.moveToDelayed(now + delayMs, token);
  throw new DelayedError();
}

/**
 * A job's run failed: on Redis while the job may still wait (`waiting`: a lock token, and not
 * REDIS_WAIT_LIMIT_MS of consecutive waits yet), it waits (waitForRedis: never returns). Otherwise
 * the run spends an attempt; the job's data keeps `report.data`, and, when Redis failed past the
 * limit, that the failures are still consecutive (redisWaitGoesOn: the next run does not wait
 * again). Best effort: a job whose data cannot be written still spends its attempt.
 */
export async function waitForRedisOrGoOn(
  job: Job,
  token: string | undefined,
  waiting: boolean,
  err: unknown,
  report: RedisWaitReport,
): Promise<void> {
  const redisFailed = isRedisFailure(err);
  if (waiting && token !== undefined && redisFailed) return waitForRedis(job, token, err, report);
  const data = { ...(report.data ?? {}), ...(redisFailed ? redisWaitGoesOn(job) : {}) };
  if (Object.keys(data).length > 0) await job.updateData({ ...job.data, ...data }).catch(() => {});
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
