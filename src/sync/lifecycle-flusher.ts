import type { AppliedUser, LifecycleState } from "../mapping/plan-types.js";
import { CHUNK_SIZE, chunk } from "../mapping/plan-types.js";
import { type WriteWatch, WritesStopped, watchWrites } from "../platform/client/unanswered-writes.js";
import type { BulkUserAction, BulkUserResult } from "../platform/platform-types.js";
import { checkLateWrites, lateWriteMayLand, writeMarker } from "./late-writes.js";
import { forgetAbsent } from "./forget-absent.js";
import {
  BULK_OPERATION,
  type LifecycleEntry,
  type StoredLifecycleEntry,
  waitingStatus,
} from "./lifecycle-entry.js";
import type { SyncContext } from "./sync-context.js";
import { classifyFailure } from "./sync-error.js";
import { forgetUser } from "./sync-user.js";

/** What a flush reports about users that could not be changed for good. */
export interface LifecycleDeadLetter {
  entry: LifecycleEntry;
  code: string;
  message: string;
}

export interface LifecycleFlushOptions {
  /** Entries wait this long for company before a partial (< 100 ids) call goes out. */
  windowMs: number;
  /** The longest a queued change waits for company (default 5 windows, at least 1 s). */
  maxWaitMs?: number;
  /** Per-user attempts before a user's change is dead-lettered. */
  maxAttempts: number;
  /** Called for a user whose change failed for good (the jobs layer records and counts it). */
  deadLetter(letter: LifecycleDeadLetter): Promise<void>;
  /**
   * Called when a bulk call failed as a whole with a failure that heals by itself (5xx, a timeout,
   * a dropped connection): its users are tried again later, spending no attempt (the jobs layer
   * logs and counts it). A pause the platform asked for (429) and Redis failing are not
   * this: they fail the flush job, and no user's attempt is spent.
   */
  callFailed?(failure: LifecycleCallFailure): void;
  /**
   * Called before each bulk call is sent (each attempt); what it throws (WritesStopped) stops the
   * flush: the jobs layer stops a run whose job's lock ran out, so that a run frozen past it never
   * sends the entries it peeked before (an ACTIVATE of a user deleted and deactivated since by the
   * job's next run would leave that user active, owned by no source).
   */
  beforeWrite?(): Promise<void>;
  /** Stop waiting (shutdown). */
  stopping(): boolean;
  sleep(ms: number): Promise<void>;
}

/** A bulk call that failed as a whole (LifecycleFlushOptions.callFailed); ids only, no personal data. */
export interface LifecycleCallFailure {
  action: BulkUserAction;
  users: number;
  code: string;
  /** The earliest of its users' next tries (epoch ms); undefined when all were replaced meanwhile. */
  retryAt?: number;
}

const ACTION_STATE: Record<BulkUserAction, LifecycleState> = {
  ACTIVATE: "active",
  DEACTIVATE: "inactive",
  DELETE: "deleted",
};

/**
 * Per-user failure codes of the bulk endpoint that heal by themselves. UNCONFIRMED is the bridge's
 * own: the answer named the user in neither list, and the platform does not show the change.
 */
const TRANSIENT_CODES = new Set(["INTERNAL", "UNCONFIRMED"]);

/**
 * Failures of a whole bulk call that say the platform is down or slow (classifyFailure's codes):
 * its users wait for it (waitForPlatform), however long. Anything else transient (a bug, a Redis
 * error reply) fails the flush job instead.
 */
const PLATFORM_DOWN_CODES: ReadonlySet<string> = new Set([
  "platform_server",
  "platform_timeout",
  "platform_network",
]);

/**
 * When a partial call (fewer than 100 ids) should go. It waits for company while changes keep
 * coming (`windowMs` after the newest, at most `maxWaitMs` after the oldest), so a stream of
 * changes fills whole calls. But when the arrival rate so far says the call will not reach even
 * half a batch by that deadline, waiting only delays every change in it: it goes `windowMs` after
 * its oldest change instead. Pure; times in epoch ms.
 */
export function partialCallDueAt(
  sinces: readonly number[],
  now: number,
  windowMs: number,
  maxWaitMs: number,
): number {
  const oldest = Math.min(...sinces);
  const newest = Math.max(...sinces);
  let dueAt = Math.min(newest + windowMs, oldest + maxWaitMs);
  if (sinces.length > 1 && newest > oldest) {
    const perMs = (sinces.length - 1) / (newest - oldest);
    const expectedAtDeadline = sinces.length + perMs * Math.max(0, oldest + maxWaitMs - now);
    if (expectedAtDeadline < CHUNK_SIZE / 2) dueAt = Math.min(dueAt, oldest + windowMs);
  }
  return dueAt;
}

/**
 * Drains the lifecycle batch into POST /api/v1/users/bulk calls of at most 100 ids: full calls go
 * at once, a partial one once no change joined it for `windowMs` (or its oldest waited maxWaitMs). Entries leave the batch
 * only when settled, so a crash repeats a call (harmless) and never loses one. Returns when the
 * batch is empty or when stopping.
 */
export async function flushLifecycle(ctx: SyncContext, options: LifecycleFlushOptions): Promise<number> {
  let calls = 0;
  const maxWait = options.maxWaitMs ?? Math.max(options.windowMs * 5, 1_000);
  // After a call failed as a whole (the platform down or slow), no call goes until its users'
  // next try: the other due chunks wait too, rather than each failing in turn against a platform
  // that is down (and holding a shutdown up while they do).
  let platformDownUntil = 0;
  while (!options.stopping()) {
    if (Date.now() < platformDownUntil) {
      await options.sleep(Math.min(platformDownUntil - Date.now(), 1_000));
      continue;
    }
    const stored = await ctx.state.peekLifecycle(CHUNK_SIZE * 10);
    if (stored.length === 0) return calls;
    const now = Date.now();
    const byAction = new Map<BulkUserAction, StoredLifecycleEntry[]>();
    let nextDue = Number.POSITIVE_INFINITY;
    for (const s of stored) {
      if (s.entry.since > now) {
        nextDue = Math.min(nextDue, s.entry.since);
        continue;
      }
      const list = byAction.get(s.entry.action) ?? [];
      list.push(s);
      byAction.set(s.entry.action, list);
    }
    let sent = false;
    chunks: for (const [action, entries] of byAction) {
      for (const part of chunk(entries)) {
        if (sent && options.stopping()) break chunks;
        if (part.length < CHUNK_SIZE) {
          // A partial call waits while changes keep coming (up to maxWaitMs), so a stream of
          // changes fills whole calls: 10,000 deactivations cost about 100 calls, not one per window.
          const dueAt = partialCallDueAt(
            part.map((s) => s.entry.since),
            now,
            options.windowMs,
            maxWait,
          );
          if (now < dueAt) {
            nextDue = Math.min(nextDue, dueAt);
            continue;
          }
        }
        // A chunk whose every entry was released makes no call, but the batch moved: peek again.
        const outcome = await sendChunk(ctx, action, part, options);
        if (outcome) calls++;
        sent = true;
        if (typeof outcome === "object") {
          platformDownUntil = outcome.platformDownUntil;
          break chunks;
        }
      }
    }
    if (!sent) {
      const wait = Number.isFinite(nextDue) ? Math.max(1, nextDue - Date.now()) : options.windowMs;
      await options.sleep(Math.min(wait, Math.max(options.windowMs, 50), 1_000));
    }
  }
  return calls;
}

/**
 * What one chunk came to: false when none of its users was left to send (released), true when its
 * call was answered (or refused for good), and when the call failed as a whole because the platform
 * is down or slow, until when the flush sends nothing more (its users' next try).
 */
type ChunkOutcome = boolean | { platformDownUntil: number };

/** Sends one chunk's bulk call and settles its users (ChunkOutcome). */
async function sendChunk(
  ctx: SyncContext,
  action: BulkUserAction,
  queued: StoredLifecycleEntry[],
  options: LifecycleFlushOptions,
): Promise<ChunkOutcome> {
  const part = await withoutReleased(ctx, queued);
  if (part.length === 0) return false;
  let result: BulkUserResult;
  // Marked on the wire like a sync's writes: a flusher that dies with the call held leaves its
  // users' marks, so a later change the call would undo (the next flush's opposite action, a
  // deleted user's deprovisioning) waits for it, and the users are read again once it could land.
  const writes: WriteWatch = {
    markWrite: writeMarker(
      ctx,
      part.map((s) => s.entry.ref),
    ),
    // A long pause another call met puts the flush job back (no job active meanwhile).
    putBackOnLongPause: true,
    beforeWrite: options.beforeWrite,
  };
  try {
    try {
      result = await watchWrites(writes, () =>
        ctx.platform.bulkUsers(
          action,
          part.map((s) => s.entry.platformId),
        ),
      );
    } finally {
      // A bulk call without an answer may land after a later, opposite one (ACTIVATE after
      // DEACTIVATE): its users are read on the platform again later.
      await checkLateWrites(
        ctx,
        part.map((s) => s.entry.ref),
        writes,
      );
    }
  } catch (err) {
    // The flush's job is another run's now: this attempt was not sent (an earlier attempt that
    // timed out is checked for late writes above), and nothing is settled.
    if (err instanceof WritesStopped) throw err;
    const fate = classifyFailure(err);
    if (fate.permanent) {
      for (const s of part) await giveUp(ctx, s, fate.code, fate.message, options);
      return true;
    }
    // A pause the platform asked for, Redis, or anything but the platform down or slow (a bug, a
    // Redis error reply): the flush job fails and runs again, no user's attempt spent.
    if (fate.rateLimitedForMs !== undefined || !PLATFORM_DOWN_CODES.has(fate.code)) throw err;
    // The platform down or slow: each user shows why it waits and until when, and is tried again
    // after a backoff (at most 30 s). No attempt is spent: an outage is not this user's change
    // refused, and the change lands by itself once the platform answers (as a sync's retries do,
    // a deprovisioning is never dead-lettered for an outage). Failing the flush job instead left
    // the users pending with no reason given.
    const retries = await Promise.all(
      part.map((s) => waitForPlatform(ctx, s, fate.code, fate.message, options)),
    );
    const due = retries.filter((at): at is number => at !== undefined);
    const retryAt = due.length > 0 ? Math.min(...due) : undefined;
    options.callFailed?.({
      action,
      users: part.length,
      code: fate.code,
      ...(retryAt !== undefined ? { retryAt } : {}),
    });
    return { platformDownUntil: retryAt ?? Date.now() + options.windowMs };
  }
  const failed = new Map(result.failed.map((f) => [f.userId, f]));
  const succeeded = new Set(result.succeeded);
  // Users of one call settle independently (ioredis pipelines their commands). Each settles or
  // fails before the flush ends: a read put back on a pause must not leave the others' settling
  // running after the job was put back.
  const settled = await Promise.allSettled(
    part.map(async (s) => {
      const id = s.entry.platformId;
      const failure = failed.get(id) ?? (succeeded.has(id) ? undefined : await unconfirmed(ctx, id, action));
      await settleOne(ctx, s, action, failure, options);
    }),
  );
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (rejected) throw rejected.reason;
  return true;
}

/**
 * The entries still to send: a deleted user's deprovisioning (a final entry) whose tombstone is
 * gone was given up by an admin (its dead letter discarded: AdminService.releaseTombstone) after
 * the sync that queued it had read the tombstone. The platform user is no source's any more and
 * must stay as it is: the entry is dropped unsent, and the user marked dirty, so that the sync of
 * the now absent entity forgets what that sync recorded of it (forgetAbsent; done here for a source
 * taken out of the configuration, which runs no sync). (A tombstone is
 * purged otherwise only once its deprovisioning settled, or when its platform user is gone.)
 */
async function withoutReleased(
  ctx: SyncContext,
  part: StoredLifecycleEntry[],
): Promise<StoredLifecycleEntry[]> {
  const gone = await Promise.all(
    part.map(
      async (s) =>
        s.entry.final === true &&
        (await ctx.directory.snapshotUser(s.entry.ref.source, s.entry.ref.id)) === null,
    ),
  );
  for (const [index, s] of part.entries()) {
    if (!gone[index] || !(await ctx.state.settleLifecycle(s, null))) continue;
    // A source taken out of the configuration runs no sync (marked dirty, the sweeper's sync of it
    // would dead-letter it `unknown_source`, the letter the admin discarded): forgotten here.
    if (ctx.config.sources[s.entry.ref.source]) await ctx.directory.markDirty(s.entry.ref);
    else await forgetAbsent(ctx, s.entry.ref);
  }
  return part.filter((_s, index) => !gone[index]);
}

/**
 * A user the bulk answer names in neither `succeeded` nor `failed`: the answer does not say it
 * changed, so the platform decides. Undefined when it shows the change; a per-user failure
 * otherwise (NOT_FOUND when it is gone, UNCONFIRMED, retried, when it is not in that state).
 */
async function unconfirmed(
  ctx: SyncContext,
  platformId: string,
  action: BulkUserAction,
): Promise<BulkUserResult["failed"][number] | undefined> {
  let user: Awaited<ReturnType<SyncContext["platform"]["getUser"]>>;
  try {
    // A queue job's call as the bulk call was: a long pause puts the flush job back (below), no
    // job active meanwhile, instead of sitting it out here.
    user = await watchWrites({ putBackOnLongPause: true }, () => ctx.platform.getUser(platformId));
  } catch (err) {
    // A rate limit pauses the flush as the bulk call's would; any other failure of the read (but
    // Redis's) is this user's, retried and dead-lettered as one (it must not fail the others' flush for ever).
    const fate = classifyFailure(err);
    if (fate.rateLimitedForMs !== undefined) throw err;
    // Redis failing under the read (the request budget) says nothing about this user: the flush
    // fails and runs again, the user's attempts unspent (else a slow Redis dead-letters it).
    if (fate.redisUnavailable) throw err;
    return {
      userId: platformId,
      code: "UNCONFIRMED",
      message: `the platform answered the bulk ${action} without naming the user, and reading it failed (${fate.code})`,
    };
  }
  if (!user) return { userId: platformId, code: "NOT_FOUND", message: "no such user" };
  if (action !== "DELETE" && (user.active !== false) === (action === "ACTIVATE")) return undefined;
  return {
    userId: platformId,
    code: "UNCONFIRMED",
    message: `the platform answered the bulk ${action} without naming the user, and does not show it applied`,
  };
}

async function settleOne(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  action: BulkUserAction,
  failure: BulkUserResult["failed"][number] | undefined,
  options: LifecycleFlushOptions,
): Promise<void> {
  if (!failure) await settleApplied(ctx, s, ACTION_STATE[action]);
  else if (failure.code === "NOT_FOUND") {
    // Gone on the platform: a delete is done; anything else plans again (and creates it anew).
    await settleApplied(ctx, s, "deleted", action !== "DELETE");
  } else {
    const code = `platform_bulk_${failure.code.toLowerCase()}`;
    if (TRANSIENT_CODES.has(failure.code)) await retryLater(ctx, s, code, failure.message, options);
    else await giveUp(ctx, s, code, failure.message, options);
  }
}

/**
 * A user's change failed with a failure that heals by itself: it spends an attempt and is tried
 * again after a backoff, its status saying why and when; once its attempts are spent it is a dead
 * letter. Answers when it is tried again (undefined when dead-lettered, or replaced meanwhile).
 */
async function retryLater(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  code: string,
  message: string,
  options: LifecycleFlushOptions,
): Promise<number | undefined> {
  const attempts = s.entry.attempts + 1;
  if (attempts >= options.maxAttempts) {
    await giveUp(ctx, s, code, message, options);
    return undefined;
  }
  const retryAt = Date.now() + backoffMs(options.windowMs, attempts);
  return requeue(ctx, s, { ...s.entry, attempts, since: retryAt }, code, {
    message: `${message}; the bulk ${s.entry.action} is tried again at ${new Date(retryAt).toISOString()} (attempt ${attempts} of ${options.maxAttempts} failed)`,
    attempts,
  });
}

/**
 * A user's bulk call failed as a whole with a failure that heals by itself (the platform down or
 * slow): the change is tried again after a backoff, its status saying why and when. It spends no
 * attempt (LifecycleEntry.failedCalls). Answers when it is tried again (undefined when replaced).
 */
async function waitForPlatform(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  code: string,
  message: string,
  options: LifecycleFlushOptions,
): Promise<number | undefined> {
  const failedCalls = (s.entry.failedCalls ?? 0) + 1;
  const retryAt = Date.now() + backoffMs(options.windowMs, failedCalls);
  return requeue(ctx, s, { ...s.entry, failedCalls, since: retryAt }, code, {
    message: `${message}; the bulk ${s.entry.action} is tried again at ${new Date(retryAt).toISOString()} (${failedCalls} call(s) failed; tried until the platform answers)`,
    attempts: s.entry.attempts + failedCalls,
  });
}

/** The wait before a failed change is tried again: the batch window doubled per failure, at most 30 s. */
function backoffMs(windowMs: number, failures: number): number {
  return Math.min(windowMs * 2 ** failures, 30_000);
}

/**
 * Puts `next` in the place of the entry `s` (due at `next.since`) and notes on the user's status why
 * it waits (waitingStatus). Answers when it is tried again (undefined when `s` was replaced meanwhile).
 */
async function requeue(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  next: LifecycleEntry,
  code: string,
  note: { message: string; attempts: number },
): Promise<number | undefined> {
  // Replaced in one step (not dropped, then queued again): a sync of the user in between would
  // see nothing queued, plan from the record (the change not applied) and take nothing back, and
  // the change it no longer wants would come back after it (a reactivated user deactivated).
  if (!(await ctx.state.settleLifecycle(s, next))) return undefined;
  const status = waitingStatus(await ctx.state.getStatus(next.ref), next, {
    code,
    operation: BULK_OPERATION,
    message: note.message,
    at: new Date().toISOString(),
    attempts: note.attempts,
    retryAt: new Date(next.since).toISOString(),
  });
  if (status) await ctx.state.setStatus(status);
  return next.since;
}

/** The platform user now is in `state`: record it, then mark clean, purge, or sync again. */
async function settleApplied(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  state: LifecycleState,
  syncAgain = false,
): Promise<void> {
  const { entry } = s;
  // Only the lifecycle, on the record as it is now: a sync of the user may write it meanwhile (a
  // profile it PATCHed, a write it marked in doubt), or forget the user; neither is undone here.
  const applied = await ctx.state.updateApplied<AppliedUser>(entry.ref, (current) =>
    current.platformId === entry.platformId ? { ...current, lifecycle: state } : null,
  );
  const settled = await ctx.state.settleLifecycle(s, null);
  if (!settled || (syncAgain && !entry.final)) {
    // A newer plan replaced or dropped this entry while the call was out: decide again.
    await ctx.directory.markDirty(entry.ref);
    return;
  }
  if (entry.final) {
    // A write of this user that may still land (this very call's first try, held by the platform
    // while its retry was answered) keeps the tombstone, and its claim on the platform user, until
    // it could have landed: forgotten now, an entity of the source created again under the same
    // userName would adopt the platform user and activate it, and the late DEACTIVATE would lock
    // it out. The tombstone's sync forgets it once its late-write check is due.
    if (await lateWriteMayLand(ctx, entry.ref)) {
      await ctx.directory.markDirty(entry.ref);
      return;
    }
    const purged = await forgetUser(ctx, entry.ref, applied, entry.generation);
    if (!purged) await ctx.directory.markDirty(entry.ref);
    return;
  }
  // The sync that queued this change ends blocked (waiting for the user's manager, or for a
  // userName to be freed): the user is not synced, and stays dirty until that sync comes back. Read from the entry, not the
  // status: the sync records its status only after it queued the change, maybe after this flush.
  if (entry.blocked) return;
  // The sync that queued this change had another write refused or failing since (a dead letter, a
  // retry on its way): the entity is not synced, and that sync's outcome keeps its status. (A plan's
  // warning is recorded with 0 attempts: it is no failure.)
  const status = await ctx.state.getStatus(entry.ref);
  // (The flusher's own notes of this change's failed bulk calls are not such a failure.)
  const failure =
    status?.state !== "synced" && status?.lastError?.attempts && status.lastError.operation !== BULK_OPERATION
      ? status.lastError
      : undefined;
  if (failure && Date.parse(failure.at) >= (entry.queuedAt ?? entry.since)) return;
  // Recorded as a sync records its success (an older dead letter goes): the sync that queued this
  // change may record only after this flush, and then leaves this record as it is.
  await ctx.state.recordSynced({
    ref: entry.ref,
    state: "synced",
    platformId: entry.platformId,
    appliedGeneration: entry.generation,
    lastSyncedAt: new Date().toISOString(),
  });
  if (!(await ctx.directory.markClean(entry.ref, entry.generation))) await ctx.directory.markDirty(entry.ref);
}

async function giveUp(
  ctx: SyncContext,
  s: StoredLifecycleEntry,
  code: string,
  message: string,
  options: LifecycleFlushOptions,
): Promise<void> {
  if (!(await ctx.state.settleLifecycle(s, null))) {
    await ctx.directory.markDirty(s.entry.ref);
    return;
  }
  await options.deadLetter({ entry: { ...s.entry, attempts: s.entry.attempts + 1 }, code, message });
  await ctx.directory.markClean(s.entry.ref, s.entry.generation);
}
