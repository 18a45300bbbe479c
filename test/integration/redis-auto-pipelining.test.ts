/**
 * The intake's store client pipelines automatically (src/server/redis-clients.ts), and the stores'
 * Lua scripts (src/lua-script.ts) become ioredis custom commands the first time they run on it.
 *
 * ioredis (up to 6.0.0, redis/ioredis#1931) copies a client's custom commands into an automatic
 * pipeline when it creates it. A script that runs for the first time while commands issued
 * earlier in the same turn of the event loop wait in such a pipeline was not in the copy: it
 * rejected with "pipeline[functionName] is not a function" (an intake request answered 503), and
 * the pipeline's answers no longer matched its callers, which threw "results[i] is not iterable"
 * out of ioredis (an uncaught exception) and left the commands after the script unanswered.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookStateStore } from "../../src/hooks/hook-state-store.js";
import { luaScript } from "../../src/lua-script.js";
import { closeRedis, createStoreRedis } from "../../src/server/redis-clients.js";
import { deleteKeys, TEST_REDIS_URL, testPrefix } from "../helpers/redis-test-prefix.js";

const prefix = testPrefix("redis-auto-pipelining");
const clients: Redis[] = [];

/** A new store client, as a bridge process has: no script has run on it yet. */
async function storeClient(): Promise<Redis> {
  const redis = createStoreRedis(TEST_REDIS_URL);
  clients.push(redis);
  await redis.connect();
  return redis;
}

const INCR_BY = luaScript<number>(
  "scimTestAutoPipeliningIncrBy",
  "return redis.call('INCRBY', KEYS[1], ARGV[1])",
);

let cleaner: Redis;

beforeAll(async () => {
  cleaner = await storeClient();
});

afterAll(async () => {
  await deleteKeys(cleaner, prefix);
  await Promise.all(clients.map((redis) => closeRedis(redis, 1_000)));
});

describe("a script's first run on the auto-pipelining store client", () => {
  it("answers every command issued in the same turn, each with its own reply", async () => {
    const redis = await storeClient();
    const [a, b, c] = [`${prefix}:a`, `${prefix}:b`, `${prefix}:c`];
    await redis.mset(a, "A", b, "10", c, "C");

    // One turn of the event loop: a command before the script's first run and one after it.
    const replies = await Promise.all([redis.get(a), INCR_BY.run(redis, [b], [5]), redis.get(c)]);

    expect(replies).toEqual(["A", 15, "C"]);
  });

  it("lets a hook write its ordering marks while another request reads marks", async () => {
    const redis = await storeClient();
    const hooks = new HookStateStore(redis, prefix);
    const read = await hooks.getMarks("okta", "user", "00uFirstScript", ["profile"]);

    // Two deliveries at once: one reads the marks of a group, the other writes a user's marks.
    const [groupMarks] = await Promise.all([
      hooks.getMarks("okta", "group", "00gOther", []),
      hooks.setMarksIf("okta", "user", "00uFirstScript", read, {
        seenVersion: "v1",
        aspects: { profile: 1000 },
      }),
    ]);

    expect(groupMarks).toEqual({ revision: "0", aspects: {} });
    expect(await hooks.getMarks("okta", "user", "00uFirstScript", ["profile"])).toEqual({
      revision: "1",
      seenVersion: "v1",
      aspects: { profile: 1000 },
    });
  });
});
