import type { WriteWatch } from "../platform/client/unanswered-writes.js";
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
 * Hands on the checks that are due: each entity's next sync re-reads the platform (a resync), and
 * it is marked dirty, which enqueues that sync. The check is dropped only after both, so a crash in
 * between repeats it. Answers how many were handed on.
 */
export async function handOnDueChecks(
  ctx: Pick<SyncContext, "state" | "directory">,
  now: number,
  limit = 1_000,
): Promise<number> {
  const due = await ctx.state.dueChecks(now, limit);
  for (const { ref, dueAt } of due) {
    await ctx.state.requestResync([ref]);
    await ctx.directory.markDirty(ref);
    await ctx.state.clearCheck(ref, dueAt);
  }
  return due.length;
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
  throw new SyncError("a create whose answer never came may still land on the platform", {
    code: "waiting_for_late_write",
    permanent: false,
    blocked: true,
    operation,
  });
}
