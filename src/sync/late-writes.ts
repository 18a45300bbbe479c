import { randomUUID } from "node:crypto";
import type { SettleWrite, WriteWatch } from "../platform/client/unanswered-writes.js";
import type { EntityRef } from "../scim/scim-types.js";
import type { SyncContext } from "./sync-context.js";
import { SyncError } from "./sync-error.js";

/**
 * Late writes: a platform write that timed out (no answer in time, or a gateway's 504) may be applied
 * after the bridge has moved on: after its retry was answered, after an opposite change was sent,
 * after a lookup found nothing. Nothing the sync sees at that moment can tell. So the entities of
 * such a write are read on the platform again `sync.lateWriteCheckMs` (default: twice
 * `platform.timeoutMs`) after it was sent (a resync: the platform's state decides the plan), and
 * whatever landed late is put right. Until then the bridge is not idle.
 */

export function lateWriteCheckMs(config: SyncContext["config"]): number {
  return config.sync.lateWriteCheckMs ?? 2 * config.platform.timeoutMs;
}

/** Time for a write's settle to follow its answer or its timeout (writeMarker). */
const SETTLE_MARGIN_MS = 1_000;

/**
 * How long a write's mark stands when nothing settles it (its process died): the check's wait, but
 * never less than a live call may last (the transport gives up after `platform.timeoutMs`), so a
 * `lateWriteCheckMs` set below the timeout does not let the sweeper take a live call's mark for a
 * dead one's, and a change wait less than the call that may undo it.
 */
export function writeMarkMs(config: SyncContext["config"]): number {
  return Math.max(lateWriteCheckMs(config), config.platform.timeoutMs + SETTLE_MARGIN_MS);
}

/** Schedules the late-write check of `refs` when `writes` saw an unanswered write. */
export async function checkLateWrites(
  ctx: SyncContext,
  refs: EntityRef[],
  writes: WriteWatch,
): Promise<void> {
  if (writes.unansweredAt === undefined || refs.length === 0) return;
  const afterMs = lateWriteCheckMs(ctx.config);
  await ctx.state.scheduleCheck(refs, writes.unansweredAt + afterMs);
  ctx.logger.info(
    { refs: refs.length, inSeconds: Math.round(afterMs / 1000) },
    "a platform write timed out and may still land: its entities are read again later",
  );
}

/**
 * The hook (WriteWatch.markWrite) that marks each write of `refs` (an entity's sync, or the users
 * of a lifecycle bulk call) before it is sent: until it is over, a change of those entities that a
 * late write would undo waits (waitForLateCreate), also in another process that runs the entity's
 * sync (its job handed on) or the next lifecycle flush, and a process that dies with the write on
 * the wire leaves the mark, which becomes the entities' check once due. A write that was answered
 * drops its mark at once, so it makes nothing wait; one that timed out leaves its check scheduled
 * in the same step.
 */
export function writeMarker(
  ctx: Pick<SyncContext, "state" | "config" | "logger">,
  refs: EntityRef | readonly EntityRef[],
): () => Promise<SettleWrite> {
  return async () => {
    const writeId = randomUUID();
    const afterMs = lateWriteCheckMs(ctx.config);
    await ctx.state.markWrite(refs, writeId, Date.now() + writeMarkMs(ctx.config));
    return async ({ mayLandLate, sentAt }) => {
      try {
        await ctx.state.settleWrite(refs, writeId, mayLandLate ? sentAt + afterMs : undefined);
      } catch (err) {
        // The mark stays until it is due, then becomes a check: a wait and a re-read too many.
        ctx.logger.warn(
          {
            entities: Array.isArray(refs) ? refs.length : 1,
            err: err instanceof Error ? err.message : String(err),
          },
          "a platform write's mark could not be settled: its entities are read again once it is due",
        );
      }
    };
  };
}

/**
 * What a due check of `ref` comes to: handed on (its entity is read on the platform now), or
 * postponed while a lifecycle change of that user is still queued. The flusher sends that change
 * again until the platform answers it (an outage spends none of the user's attempts), and a read of
 * the platform before then is premature: it can only fail while the platform is down, and the
 * check's resync, a sync like any, would spend its job's attempts on the outage and dead-letter a
 * user whose deprovisioning is only waiting (the flusher promises no dead letter for an outage).
 * Once the change is settled, the check is handed on and reads what landed. Pure.
 */
export function dueCheckFate(ref: EntityRef, lifecyclePending: boolean): "handOn" | "postpone" {
  return ref.kind === "user" && lifecyclePending ? "postpone" : "handOn";
}

/**
 * Hands on the checks that are due: each entity's next sync re-reads the platform (a resync), and
 * it is marked dirty, which enqueues that sync. The check is dropped only after both, so a crash in
 * between repeats it. A check of a user whose lifecycle change is still queued is postponed by
 * `sync.lateWriteCheckMs` instead (dueCheckFate), looked at again then. Answers how many were
 * handed on.
 */
export async function handOnDueChecks(
  ctx: Pick<SyncContext, "state" | "directory" | "config">,
  now: number,
  limit = 1_000,
): Promise<number> {
  // Writes marked on the wire by a process that died with them: their checks, once due.
  await ctx.state.moveDueWrites(now, limit);
  const due = await ctx.state.dueChecks(now, limit);
  let handedOn = 0;
  for (const { ref, dueAt } of due) {
    const pending = ref.kind === "user" && (await ctx.state.getAppliedUser(ref)).lifecyclePending;
    if (dueCheckFate(ref, pending) === "postpone") {
      // Moved later in one step (a later check is kept): never missing, so the bridge stays not
      // idle and a change a late write would undo still waits (waitForLateCreate).
      await ctx.state.scheduleCheck([ref], now + lateWriteCheckMs(ctx.config));
      continue;
    }
    await ctx.state.requestResync([ref]);
    await ctx.directory.markDirty(ref);
    await ctx.state.clearCheck(ref, dueAt);
    handedOn++;
  }
  return handedOn;
}

/** Whether a write of `ref` whose answer never came may still land (its late-write check is not due). */
export async function lateWriteMayLand(ctx: Pick<SyncContext, "state">, ref: EntityRef): Promise<boolean> {
  const dueAt = await ctx.state.checkDueAt(ref);
  return dueAt !== null && dueAt > Date.now();
}

/**
 * Before a create whose answer never came is looked up: until its late-write check is due, it (or
 * a retry of it) may still land, so the sync waits (blocked, no attempt spent). Looking earlier
 * could find nothing and purge a deleted entity's records, or find the first of two held creates
 * and deprovision it before the second lands: either way a late object stays on the platform,
 * unowned and active.
 */
export async function waitForLateCreate(
  ctx: Pick<SyncContext, "state">,
  ref: EntityRef,
  operation: string,
): Promise<void> {
  const dueAt = await ctx.state.checkDueAt(ref);
  if (dueAt === null || dueAt <= Date.now()) return;
  // The reason says until when: the operator reads it in the entity's status (lastError).
  const until = new Date(dueAt).toISOString();
  throw new SyncError(
    `a platform write whose answer never came may still land: the sync waits until ${until}`,
    {
      code: "waiting_for_late_write",
      permanent: false,
      blocked: true,
      operation,
    },
  );
}
