import type { Redis } from "ioredis";
import type { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import { syncKeys } from "../../src/sync/sync-keys.js";
import type { ReconcileSyncState } from "./reconcile-ports.js";

export interface OwnedCounts {
  /** Users of a workspace source that have a platform user (owned or adopted). */
  countOwnedUsers(source: string): Promise<number>;
}

/**
 * The sync state as reconciliation and resyncs read it: the pipeline's store, with its bulk reads
 * (one HMGET per page). The Redis key layout stays in the store (src/sync/sync-keys.ts).
 *
 * With the store's Redis connection and key prefix, it also counts an embed-tenant source's embed
 * users (the store has no count of its own for those: one HLEN of its `emb` hash).
 */
export function reconcileSyncState(
  store: RedisSyncStateStore,
  redis?: Redis,
  prefix?: string,
): ReconcileSyncState & OwnedCounts {
  return {
    ...(redis && prefix !== undefined
      ? { countEmbedUsers: (source: string) => redis.hlen(syncKeys.emb(prefix, source)) }
      : {}),
    ownersOf: (scope, platformKeys) => store.ownersOf(scope, platformKeys),
    getUserPlatformIds: (source, ids) => store.getUserPlatformIds(source, ids),
    getEmbedMembers: (source, ids) => store.getEmbedMembers(source, ids),
    getApplied: (ref) => store.getApplied(ref),
    countOwnedUsers: (source) => store.countPlatformIds(source),
    queuedLifecycle: async (platformId) => (await store.getLifecycle(platformId))?.entry.action ?? null,
    changedSinceSync: (ref) => store.changedSinceSync(ref),
    lastSyncedAt: async (refs) =>
      (await store.getStatuses(refs)).map((status) => {
        const at = status?.lastSyncedAt ? Date.parse(status.lastSyncedAt) : Number.NaN;
        return Number.isNaN(at) ? null : at;
      }),
    deadLetters: store,
  };
}
