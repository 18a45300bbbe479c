import type { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import type { ReconcileSyncState } from "./reconcile-ports.js";

export interface OwnedCounts {
  /** Users of a workspace source that have a platform user (owned or adopted). */
  countOwnedUsers(source: string): Promise<number>;
}

/**
 * The sync state as reconciliation and resyncs read it: the pipeline's store, with its bulk reads
 * (one HMGET per page). The Redis key layout stays in the store (src/sync/sync-keys.ts).
 *
 * The trailing parameters are unused and kept only so that existing callers compile; pass the
 * store alone.
 */
export function reconcileSyncState(
  store: RedisSyncStateStore,
  ..._unused: unknown[]
): ReconcileSyncState & OwnedCounts {
  return {
    ownersOf: (scope, platformKeys) => store.ownersOf(scope, platformKeys),
    getUserPlatformIds: (source, ids) => store.getUserPlatformIds(source, ids),
    getEmbedMembers: (source, ids) => store.getEmbedMembers(source, ids),
    getApplied: (ref) => store.getApplied(ref),
    countOwnedUsers: (source) => store.countPlatformIds(source),
  };
}
