import type { Redis } from "ioredis";
import type { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import { type OwnerScope, syncKeys } from "../../src/sync/sync-keys.js";
import type { ReconcileSyncState } from "./reconcile-ports.js";

export interface OwnedCounts {
  /** Users of a workspace source that have a platform user (owned or adopted). */
  countOwnedUsers(source: string): Promise<number>;
}

/**
 * The sync state as reconciliation and resyncs read it: the pipeline's store, plus bulk reads of
 * its ownership and platform-id hashes (one HMGET per page; layout in src/sync/sync-keys.ts).
 */
export function reconcileSyncState(
  store: RedisSyncStateStore,
  redis: Redis,
  prefix: string,
): ReconcileSyncState & OwnedCounts {
  return {
    async ownersOf(scope: OwnerScope, platformKeys: string[]) {
      if (platformKeys.length === 0) return [];
      return redis.hmget(syncKeys.owner(prefix, scope), ...platformKeys);
    },
    getUserPlatformIds: (source, ids) => store.getUserPlatformIds(source, ids),
    getEmbedMembers: (source, ids) => store.getEmbedMembers(source, ids),
    getApplied: (ref) => store.getApplied(ref),
    countOwnedUsers: (source) => redis.hlen(syncKeys.pid(prefix, source)),
  };
}
