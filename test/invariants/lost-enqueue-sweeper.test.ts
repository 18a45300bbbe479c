import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisDirectoryStore } from "../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../src/scim/filter-eval.js";
import { USER_SCHEMA, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

/**
 * Invariant 2, a store write followed by a crash before the enqueue, against the whole bridge (its
 * own sweeper wiring, not a test harness's): another process wrote the change and died before
 * enqueuing; the running bridge's sweeper finds the dirty entity and the platform converges, and
 * the bridge is not idle until it has.
 */
describe("a store write whose enqueue was lost", () => {
  let h: TestBridge;
  let redis: Redis;
  beforeAll(async () => {
    h = await startTestBridge("inv-sweeper", { sources: { okta: { tokens: ["okta-token"] } } });
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  it("is found by the bridge's sweeper and reaches the platform", async () => {
    const dying = new RedisDirectoryStore({
      redis,
      prefix: h.prefix,
      notify: async () => {
        throw new Error("the process died before the enqueue");
      },
      matchesFilter,
    });
    await dying
      .createUser("okta", { schemas: [USER_SCHEMA], userName: "swept@example.com", active: true })
      .catch(() => {});
    const user = await h
      .scim("okta")
      .get(`/Users?filter=${encodeURIComponent('userName eq "swept@example.com"')}`);
    expect(user.body.totalResults).toBe(1); // the write itself is durable
    expect(await h.bridge.isIdle()).toBe(false); // a dirty entity holds idle false
    await waitFor(() => h.platformUsers().get("swept@example.com"), {
      timeoutMs: 10_000,
      what: "the sweeper",
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("swept@example.com")?.active).toBe(true);
  });
});
