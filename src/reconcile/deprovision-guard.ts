import type { GuardResult } from "./reconcile-types.js";

/**
 * Invariant 8 (safe deprovisioning): a run or resync whose planned deactivations and deletions
 * (orphans included) exceed `maxShare` of the users the source owns does none of them until an
 * admin confirms. A source that owns no users trips on any planned deprovisioning, unless the
 * share allowed is 1 (everything).
 */
export function evaluateGuard(
  plannedDeprovisions: number,
  ownedUsers: number,
  maxShare: number,
): GuardResult {
  const planned = Math.max(0, plannedDeprovisions);
  const owned = Math.max(0, ownedUsers);
  const share = planned === 0 ? 0 : owned === 0 ? 1 : planned / owned;
  const tripped = planned > 0 && share > maxShare && !(maxShare >= 1);
  return { plannedDeprovisions: planned, ownedUsers: owned, share, maxShare, tripped };
}
