import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
