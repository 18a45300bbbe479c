import type { Redis } from "ioredis";
import { dirtyKey } from "../../src/directory/directory-keys.js";
import type { LifecycleState } from "../../src/mapping/plan-types.js";
import type { BulkUserAction } from "../../src/platform/platform-types.js";
import type { DesiredState } from "../../src/reconcile/classify-user.js";

/** Which of these entities (refKeys) have a sync ahead of them: dirty in the directory. */
export type DirtyReader = (refKeys: readonly string[]) => Promise<boolean[]>;

/** The directory's dirty set, read with one ZMSCORE. */
export function redisDirtyReader(redis: Redis, prefix: string): DirtyReader {
  return async (refKeys) => {
    if (refKeys.length === 0) return [];
    const scores = await redis.zmscore(dirtyKey(prefix), ...refKeys);
    return scores.map((score) => score !== null);
  };
}

/**
 * Whether a user's pending sync deprovisions it by itself: what the identity provider wants
 * (inactive, or deleted) is not what the sync last applied (still active; with `onDelete: delete`,
 * not deleted yet) and the identity provider wrote after that sync (`changedSinceSync`: the
 * directory's generation is newer than the one the sync applied), or is the lifecycle change
 * already queued for its bulk call (`queued`: while one is queued, the record may say nothing of
 * the lifecycle). Pure.
 *
 * A reconciliation or resync that finds such a user to deprovision, while the user is dirty (the
 * identity provider's change a moment ago, its sync ahead), does not count it for the guard
 * (invariant 8): the sync deprovisions it whatever the run or resync does, and the sync is not
 * guarded, so holding them would only hold back their other work. A user the bridge deprovisioned
 * and the platform has active again (the record says inactive), or one a directory gone back to an
 * older state would deprovision (not dirty), still counts.
 */
export function syncDeprovisionsItself(
  desired: DesiredState<{ active?: unknown }>,
  applied: LifecycleState | undefined,
  onDelete: "deactivate" | "delete",
  queued?: BulkUserAction | null,
  changedSinceSync = true,
): boolean {
  // The record's word counts only when the identity provider wrote after the last sync: a user
  // dirty for the bridge's own reasons (its groups' hand-off, a late-write check, a repair), or a
  // directory gone back to an older state, is the run's to count. A change already queued is on
  // its way whatever the run does.
  if (desired.state === "tombstone") {
    if (onDelete === "delete") {
      return queued === "DELETE" || (changedSinceSync && applied !== undefined && applied !== "deleted");
    }
    return queued === "DEACTIVATE" || (changedSinceSync && applied === "active");
  }
  if (desired.state !== "present" || desired.resource.active !== false) return false;
  return queued === "DEACTIVATE" || (changedSinceSync && applied === "active");
}
