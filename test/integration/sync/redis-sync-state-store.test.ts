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
