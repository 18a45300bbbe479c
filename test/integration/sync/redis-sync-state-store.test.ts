import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    expect(await store.markDeadLetterAutoRetried(read!, new Date().toISOString())).toBe(false);
    expect((await store.getDeadLetter(letter("e", "x").ref))?.letter.autoRetriedAt).toBeUndefined();
    const current = await store.getDeadLetter(letter("e", "x").ref);
    await store.removeDeadLetter(letter("e", "x").ref);
    expect(await store.markDeadLetterAutoRetried(current!, new Date().toISOString())).toBe(false);
    expect(await store.getDeadLetter(letter("e", "x").ref)).toBeNull();
  });
});
