import type { Redis } from "ioredis";
import type { Logger } from "../../src/observability/logger.js";
import type { PlatformClient } from "../../src/platform/platform-types.js";
import { type EntityRef, parseRefKey } from "../../src/scim/scim-types.js";
import type { ReconcileSyncState, ResyncRequester } from "./reconcile-ports.js";

/** Reads a Redis set in chunks (SSCAN), never all at once. */
async function* scanSet(redis: Redis, key: string, count: number): AsyncIterable<string[]> {
  let cursor = "0";
  do {
    const [next, members] = await redis.sscan(key, cursor, "COUNT", count);
    cursor = next;
    if (members.length > 0) yield members;
  } while (cursor !== "0");
}

/**
 * Applies a run's planned repairs: entities are marked dirty and resynced through the normal
 * sync path (chunked), and orphans, which no source owns and so have no sync of their own, are
 * deactivated through the bulk endpoint, at most 100 a call, after checking again that no source
 * claimed them meanwhile.
 */
export async function applyRepairs(input: {
  redis: Redis;
  repairsKey: string;
  orphansKey: string;
  requestResync: ResyncRequester;
  platform: PlatformClient;
  state: ReconcileSyncState;
  logger: Logger;
  chunk: number;
}): Promise<{ entities: number; orphanDeactivations: number }> {
  let entities = 0;
  for await (const keys of scanSet(input.redis, input.repairsKey, input.chunk)) {
    const refs: EntityRef[] = [];
    for (const key of keys) {
      try {
        refs.push(parseRefKey(key));
      } catch {
        input.logger.warn({ key }, "reconcile: skipping a malformed repair reference");
      }
    }
    await input.requestResync(refs);
    entities += refs.length;
  }
  let orphanDeactivations = 0;
  for await (const ids of scanSet(input.redis, input.orphansKey, 100)) {
    for (let start = 0; start < ids.length; start += 100) {
      const chunk = ids.slice(start, start + 100);
      const owners = await input.state.ownersOf("user", chunk);
      const stillOrphans = chunk.filter((_id, index) => !owners[index]);
      if (stillOrphans.length === 0) continue;
      const result = await input.platform.bulkUsers("DEACTIVATE", stillOrphans);
      orphanDeactivations += result.succeeded.length;
      if (result.failed.length > 0) {
        input.logger.warn(
          { failed: result.failed.length, codes: [...new Set(result.failed.map((f) => f.code))] },
          "reconcile: some orphans could not be deactivated",
        );
      }
    }
  }
  return { entities, orphanDeactivations };
}
