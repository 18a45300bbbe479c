import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { resyncTransientDeadLetters } from "../../../src/sync/dead-letter-retry.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

// The bulk reads reconciliation uses (jobs/reconcile/sync-state-adapter.ts), against the real Redis.
const prefix = testPrefix("sync-state-store");
let redis: Redis;
let store: RedisSyncStateStore;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  store = new RedisSyncStateStore(redis, prefix);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe("RedisSyncStateStore bulk reads", () => {
  it("ownersOf gives each key's owner in order, null where unowned, per scope", async () => {
    const alice = { source: "okta", kind: "user" as const, id: "u-1" };
    const admins = { source: "okta", kind: "group" as const, id: "g-1" };
    await store.claimOwner("user", "alice@example.com", alice);
    await store.claimOwner("group", "admins", admins);

    expect(await store.ownersOf("user", ["nobody@example.com", "alice@example.com"])).toEqual([
      null,
      await store.ownerOf("user", "alice@example.com"),
    ]);
    expect((await store.ownersOf("user", ["alice@example.com"]))[0]).not.toBeNull();
    expect(await store.ownersOf("group", ["alice@example.com", "admins"])).toEqual([
      null,
      await store.ownerOf("group", "admins"),
    ]);
    expect(await store.ownersOf("user", [])).toEqual([]);

    await store.releaseOwner("user", "alice@example.com", alice);
    expect(await store.ownersOf("user", ["alice@example.com"])).toEqual([null]);
  });

  it("countPlatformIds counts the users of one source that have a platform id", async () => {
    expect(await store.countPlatformIds("okta")).toBe(0);
    await store.setUserPlatformId("okta", "u-1", "p-1");
    await store.setUserPlatformId("okta", "u-2", "p-2");
    await store.setUserPlatformId("azure", "u-3", "p-3");
    expect(await store.countPlatformIds("okta")).toBe(2);
    expect(await store.countPlatformIds("azure")).toBe(1);
    await store.setUserPlatformId("okta", "u-1", null);
    expect(await store.countPlatformIds("okta")).toBe(1);
  });
});

describe("RedisSyncStateStore lifecycle batch", () => {
  const ref = { source: "okta", kind: "user" as const, id: "u-lc" };
  const entry = { platformId: "p-lc", ref, action: "DEACTIVATE" as const, generation: 3, final: false };

  it("keeps a queued entry of the same action, but not one that decides the user's cleanliness otherwise", async () => {
    expect(await store.putLifecycle({ ...entry, attempts: 0, since: 1, queuedAt: 1 })).toBe(true);
    // The same change queued again (a duplicate sync): the entry in the batch stays as it was.
    expect(await store.putLifecycle({ ...entry, attempts: 0, since: 2, queuedAt: 2 })).toBe(false);
    expect((await store.getLifecycle("p-lc"))?.entry.since).toBe(1);
    // A sync that ends blocked queues the same action: its entry replaces the other one, so the
    // flush does not mark the user clean when it applies it (and the other way round).
    expect(await store.putLifecycle({ ...entry, attempts: 0, since: 3, queuedAt: 3, blocked: true })).toBe(
      true,
    );
    expect((await store.getLifecycle("p-lc"))?.entry.blocked).toBe(true);
    expect(await store.putLifecycle({ ...entry, attempts: 0, since: 4, queuedAt: 4, blocked: true })).toBe(
      false,
    );
    expect(await store.putLifecycle({ ...entry, attempts: 0, since: 5, queuedAt: 5 })).toBe(true);
    expect((await store.getLifecycle("p-lc"))?.entry.blocked).toBeUndefined();
    await store.dropLifecycle("p-lc");
    expect(await store.countLifecycle()).toBe(0);
  });
});

describe("RedisSyncStateStore dead letters handed over by a reconciliation", () => {
  const letter = (id: string, code: string, reason = "platform down") => ({
    ref: { source: "dl-once", kind: "user" as const, id },
    reason,
    code,
    at: new Date().toISOString(),
    attempts: 3,
  });
  const handOver = async () => {
    const got: string[] = [];
    await resyncTransientDeadLetters(store, "dl-once", async (refs) => {
      got.push(...refs.map((r) => r.id));
    });
    return got.sort();
  };

  it("hands each letter over once; a letter written again after it is left for an admin", async () => {
    await store.addDeadLetter(letter("a", "platform_server"));
    await store.addDeadLetter(letter("b", "internal", "WRONGTYPE Operation against a key"));
    await store.addDeadLetter(letter("c", "not_converging"));
    await store.addDeadLetter(letter("d", "platform_timeout"));
    expect(await handOver()).toEqual(["a", "d"]);
    // The next scheduled run, the syncs not run yet: nothing again.
    expect(await handOver()).toEqual([]);
    // a's sync failed again (the platform still down): its letter, written again, keeps the mark.
    await store.addDeadLetter(letter("a", "platform_server", "still down"));
    const again = await store.getDeadLetter(letter("a", "x").ref);
    expect(again?.letter).toMatchObject({ reason: "still down", autoRetriedAt: expect.any(String) });
    expect(await handOver()).toEqual([]);
    // d synced (its letter gone); a later outage dead-letters it again: a new letter, handed over once.
    await store.removeDeadLetter(letter("d", "x").ref);
    await store.addDeadLetter(letter("d", "platform_network"));
    expect(await handOver()).toEqual(["d"]);
  });

  it("marks only the letter as read: never one written since, never one removed", async () => {
    await store.addDeadLetter(letter("e", "platform_server"));
    const read = await store.getDeadLetter(letter("e", "x").ref);
    await store.addDeadLetter(letter("e", "platform_server", "newer"));
    expect(await store.markDeadLetterAutoRetried(read!, new Date().toISOString(), 0)).toBe(false);
    expect((await store.getDeadLetter(letter("e", "x").ref))?.letter.autoRetriedAt).toBeUndefined();
    const current = await store.getDeadLetter(letter("e", "x").ref);
    await store.removeDeadLetter(letter("e", "x").ref);
    expect(await store.markDeadLetterAutoRetried(current!, new Date().toISOString(), 0)).toBe(false);
    expect(await store.getDeadLetter(letter("e", "x").ref)).toBeNull();
  });
});

describe("RedisSyncStateStore: the hand-over mark belongs to the entity's desired state at the hand-over", () => {
  const source = "dl-gen";
  let directory: RedisDirectoryStore;
  const userDoc = (userName: string) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    active: true,
  });
  const letter = (ref: EntityRef, reason: string) => ({
    ref,
    reason,
    code: "platform_server",
    at: new Date().toISOString(),
    attempts: 3,
  });
  const handOver = async () => {
    const got: string[] = [];
    await resyncTransientDeadLetters(store, source, async (refs) => {
      got.push(...refs.map((r) => r.id));
    });
    return got;
  };

  beforeAll(() => {
    directory = new RedisDirectoryStore({ redis, prefix, matchesFilter, notify: async () => {} });
  });

  it("the handed-over sync's letter keeps the mark; a letter of a later change of the entity does not, and is handed over once", async () => {
    const user = await directory.createUser(source, userDoc("before@example.com"));
    const ref: EntityRef = { source, kind: "user", id: user.resource.id };
    await store.addDeadLetter(letter(ref, "platform down"));
    // 09:30: a reconciliation hands it over.
    expect(await handOver()).toEqual([ref.id]);
    const marked = (await store.getDeadLetter(ref))?.letter;
    expect(marked).toMatchObject({
      autoRetriedAt: expect.any(String),
      autoRetriedGeneration: user.generation,
    });
    // That sync fails too (the same desired state): its letter keeps the mark, left for an admin.
    expect(await store.addDeadLetter(letter(ref, "still down"))).toBe(true);
    expect((await store.getDeadLetter(ref))?.letter).toMatchObject({
      reason: "still down",
      autoRetriedAt: marked?.autoRetriedAt,
    });
    expect(await handOver()).toEqual([]);
    // Days later the IdP renames the user, and that sync fails in a fresh outage.
    await directory.replaceUser(source, ref.id, userDoc("after@example.com"));
    expect(await store.addDeadLetter(letter(ref, "down again"))).toBe(false);
    const fresh = (await store.getDeadLetter(ref))?.letter;
    expect(fresh?.reason).toBe("down again");
    expect(fresh?.autoRetriedAt).toBeUndefined();
    expect(fresh?.autoRetriedGeneration).toBeUndefined();
    // The next reconciliation hands it over (once).
    expect(await handOver()).toEqual([ref.id]);
    expect(await handOver()).toEqual([]);
  });

  it("changedSinceSync: the identity provider wrote after the last sync (the deprovisioning guard's test)", async () => {
    const user = await directory.createUser(source, userDoc("changed@example.com"));
    const ref: EntityRef = { source, kind: "user", id: user.resource.id };
    // Never synced: the IdP's write is ahead of any sync.
    expect(await store.changedSinceSync(ref)).toBe(true);
    await store.recordSynced({ ref, state: "synced", appliedGeneration: user.generation });
    expect(await store.changedSinceSync(ref)).toBe(false);
    // Marked dirty by the bridge itself (a hand-off, a late-write check): no write of the IdP's.
    await directory.markDirty(ref);
    expect(await store.changedSinceSync(ref)).toBe(false);
    await directory.replaceUser(source, ref.id, { ...userDoc("changed@example.com"), active: false });
    expect(await store.changedSinceSync(ref)).toBe(true);
  });

  it("a letter written for the entity once it is deleted does not keep the mark of its live state", async () => {
    const user = await directory.createUser(source, userDoc("gone@example.com"));
    const ref: EntityRef = { source, kind: "user", id: user.resource.id };
    await store.addDeadLetter(letter(ref, "platform down"));
    expect(await handOver()).toEqual([ref.id]);
    await directory.deleteUser(source, ref.id);
    expect(await store.addDeadLetter(letter(ref, "deprovisioning failed"))).toBe(false);
    expect(await handOver()).toEqual([ref.id]);
  });

  it("a mark written before this rule (no generation) is not kept, and the admin listing shows no generation", async () => {
    const user = await directory.createUser(source, userDoc("legacy@example.com"));
    const ref: EntityRef = { source, kind: "user", id: user.resource.id };
    await store.addDeadLetter({ ...letter(ref, "x"), autoRetriedAt: "2026-11-27T09:30:00.000Z" });
    expect(await store.addDeadLetter(letter(ref, "y"))).toBe(false);
    expect(await handOver()).toEqual([ref.id]);
    const listed = await store.listDeadLetters({ source, offset: 0, limit: 100 });
    const mine = listed.items.find((l) => l.ref.id === ref.id);
    expect(mine?.autoRetriedAt).toEqual(expect.any(String));
    expect(mine).not.toHaveProperty("autoRetriedGeneration");
  });

  it("keeps a mark that landed between an earlier read and the write (one script)", async () => {
    const user = await directory.createUser(source, userDoc("race@example.com"));
    const ref: EntityRef = { source, kind: "user", id: user.resource.id };
    await store.addDeadLetter(letter(ref, "first"));
    const read = await store.getDeadLetter(ref);
    expect(await store.markDeadLetterAutoRetried(read!, "2026-11-27T09:30:00.000Z", user.generation)).toBe(
      true,
    );
    expect(await store.addDeadLetter(letter(ref, "second"))).toBe(true);
    expect((await store.getDeadLetter(ref))?.letter.autoRetriedAt).toBe("2026-11-27T09:30:00.000Z");
  });
});

describe("RedisSyncStateStore dead-letter walk (deadLetterPages)", () => {
  const letter = (source: string, id: string) => ({
    ref: { source, kind: "user" as const, id },
    reason: "platform down",
    code: "platform_server",
    at: new Date().toISOString(),
    attempts: 3,
  });
  const walkCopies = async () => {
    const keys: string[] = [];
    const stream = redis.scanStream({ match: `${prefix}*dead:walk:*`, count: 500 });
    for await (const batch of stream) keys.push(...(batch as string[]));
    return keys;
  };

  it("a copy that cannot be made is an error, not an empty walk", async () => {
    await store.addDeadLetter(letter("dl-walk-broken", "a"));
    // The order key of the source holds another type: ZUNIONSTORE fails inside the MULTI.
    const order = (await redis.keys(`${prefix}*dead:order:dl-walk-broken`))[0] as string;
    const kept = await redis.zrange(order, "0", "-1");
    await redis.del(order);
    await redis.set(order, "not a sorted set");
    const pages = store.deadLetterPages({ source: "dl-walk-broken" });
    await expect(pages.next()).rejects.toThrow(/WRONGTYPE/);
    await redis.del(order);
    await redis.zadd(order, 1, kept[0] as string);
  });

  it("each page read renews the copy's expiry, and the copy is gone once the walk ends", async () => {
    for (const id of ["a", "b", "c"]) await store.addDeadLetter(letter("dl-walk-ttl", id));
    const pages = store.deadLetterPages({ source: "dl-walk-ttl", pageSize: 1 });
    expect((await pages.next()).value).toHaveLength(1);
    const [copy] = await walkCopies();
    expect(copy).toBeDefined();
    await redis.expire(copy as string, 5);
    expect((await pages.next()).value).toHaveLength(1);
    expect(await redis.ttl(copy as string)).toBeGreaterThan(3000);
    for await (const _ of { [Symbol.asyncIterator]: () => pages }) {
      // the rest of the walk
    }
    expect(await walkCopies()).toEqual([]);
  });
});
