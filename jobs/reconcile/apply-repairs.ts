import type { Redis } from "ioredis";
import type { Logger } from "../../src/observability/logger.js";
import type { PlatformClient } from "../../src/platform/platform-types.js";
import { type EntityRef, parseRefKey } from "../../src/scim/scim-types.js";
import type { ReconcileSyncState, ResyncRequester } from "./reconcile-ports.js";

/** Reads a Redis set in chunks (SSCAN), never all at once. */
export async function* scanSet(redis: Redis, key: string, count: number): AsyncIterable<string[]> {
  let cursor = "0";
  do {
    const [next, members] = await redis.sscan(key, cursor, "COUNT", count);
    cursor = next;
    if (members.length > 0) yield members;
  } while (cursor !== "0");
}

/**
 * The entity refs of a run's set of refKeys (its repairs), in chunks (scanSet); a malformed key is
 * skipped, and told to `onMalformed` when given.
 */
export async function* scanRefs(
  redis: Redis,
  key: string,
  count: number,
  onMalformed?: (key: string) => void,
): AsyncIterable<EntityRef[]> {
  for await (const keys of scanSet(redis, key, count)) {
    const refs: EntityRef[] = [];
    for (const refKey of keys) {
      try {
        refs.push(parseRefKey(refKey));
      } catch {
        onMalformed?.(refKey);
      }
    }
    yield refs;
  }
}

/**
 * Whether a workspace source's directory holds a user of this userName: its first sync adopts the
 * platform user of that name (ARCHITECTURE.md, "Mapping onto the platform"), so an unowned one is
 * on its way to being owned, not an orphan.
 */
export type AdoptionCheck = (userName: string) => Promise<boolean>;

/**
 * Orphans of a chunk that are still to be deactivated: read again on the platform, those gone or
 * already inactive need nothing, and those a source is about to adopt (`adoptable`) are left as
 * they are (deactivating them would lock the person out until the adopting sync turns them on).
 */
async function stillToDeactivate(
  platform: Pick<PlatformClient, "getUser">,
  ids: string[],
  adoptable: AdoptionCheck | undefined,
): Promise<{ ids: string[]; adopting: number }> {
  let adopting = 0;
  const keep = await Promise.all(
    ids.map(async (id) => {
      const user = await platform.getUser(id);
      if (!user || user.active === false) return false;
      if (adoptable && typeof user.userName === "string" && (await adoptable(user.userName))) {
        adopting += 1;
        return false;
      }
      return true;
    }),
  );
  return { ids: ids.filter((_id, index) => keep[index]), adopting };
}

/** Requests a resync of the owners the given platform users have now (adopted since the check). */
async function resyncAdopted(
  input: { state: ReconcileSyncState; requestResync: ResyncRequester; logger: Logger },
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  const refs: EntityRef[] = [];
  for (const owner of await input.state.ownersOf("user", ids)) {
    if (!owner) continue;
    try {
      refs.push(parseRefKey(owner));
    } catch {
      input.logger.warn("reconcile: skipping a malformed owner reference");
    }
  }
  if (refs.length === 0) return;
  input.logger.warn(
    { adopted: refs.length },
    "reconcile: orphans adopted by a source while their deactivation was on its way are synced again",
  );
  await input.requestResync(refs);
}

/**
 * Applies a run's planned repairs: entities are marked dirty and resynced through the normal
 * sync path (chunked), and orphans, which no source owns and so have no sync of their own, are
 * deactivated through the bulk endpoint, at most 100 a call, after checking again that no source
 * claimed them meanwhile, nor is about to (`adoptable`), and that they are still active.
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
  adoptable?: AdoptionCheck;
  /** Before each chunk: throws when the run is to stop here (its job handed on: JobLease). */
  beforeChunk?: () => Promise<void>;
}): Promise<{ entities: number; orphanDeactivations: number }> {
  let entities = 0;
  const malformed = (key: string) =>
    input.logger.warn({ key }, "reconcile: skipping a malformed repair reference");
  for await (const refs of scanRefs(input.redis, input.repairsKey, input.chunk, malformed)) {
    await input.beforeChunk?.();
    await input.requestResync(refs);
    entities += refs.length;
  }
  let orphanDeactivations = 0;
  for await (const ids of scanSet(input.redis, input.orphansKey, 100)) {
    for (let start = 0; start < ids.length; start += 100) {
      const chunk = ids.slice(start, start + 100);
      await input.beforeChunk?.();
      const owners = await input.state.ownersOf("user", chunk);
      const unowned = chunk.filter((_id, index) => !owners[index]);
      if (unowned.length === 0) continue;
      const { ids: stillOrphans, adopting } = await stillToDeactivate(
        input.platform,
        unowned,
        input.adoptable,
      );
      if (adopting > 0) {
        input.logger.info(
          { adopting },
          "reconcile: orphans whose userName a source holds are left active (that source adopts them)",
        );
      }
      if (stillOrphans.length === 0) continue;
      let result: Awaited<ReturnType<typeof input.platform.bulkUsers>>;
      try {
        result = await input.platform.bulkUsers("DEACTIVATE", stillOrphans);
      } finally {
        // A source that adopted one while the call was out planned from the user still active:
        // its sync runs again and reads the platform (else the person it provisioned stays locked
        // out). Every id sent: the call may have landed without an answer, or in part.
        await resyncAdopted(input, stillOrphans);
      }
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
