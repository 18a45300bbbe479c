/**
 * The stores' Lua scripts go out by EVALSHA (their text once per connection, as EVAL), and still
 * run after SCRIPT FLUSH, which is what Redis looks like after a restart or a failover: the
 * EVALSHA gets NOSCRIPT, and the call is sent again with the script's text.
 *
 * What went out on the wire is read from the client: ioredis names a script command "eval" or
 * "evalsha" when it writes it, so the name of each command sent, read once it has answered, is
 * the command Redis received. (INFO commandstats would count other clients of the shared Redis.)
 *
 * SCRIPT FLUSH runs on a throwaway Redis of this file's own: on the shared one it would make other
 * test files' scripts answer NOSCRIPT mid-run (inside a MULTI that fails the transaction).
 */
import { type Command, Redis, type RedisOptions } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperationStore, type StoredOperation } from "../../src/admin/operation-store.js";
import { PreconditionFailedError } from "../../src/errors.js";
import { HookStateStore } from "../../src/hooks/hook-state-store.js";
import { luaScript } from "../../src/lua-script.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import type { LifecycleEntry } from "../../src/sync/lifecycle-entry.js";
import { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import { deleteKeys, testPrefix } from "../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../helpers/throwaway-redis.js";

const prefix = testPrefix("lua-script");
let server: ThrowawayRedis;
let redisUrl: string;
let admin: Redis;

beforeAll(async () => {
  server = await ThrowawayRedis.start();
  redisUrl = server.url;
  admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  await deleteKeys(admin, prefix);
  await admin.quit();
  await server.dispose();
});

/**
 * Records every command a client sends; `scriptCalls()` are the names its script commands went out
 * as. A Set: a command sent before the connection is ready passes through sendCommand again when
 * the offline queue is flushed.
 */
function recordCommands(redis: Redis) {
  let sent = new Set<Command>();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: Command, ...rest: unknown[]) => {
    sent.add(command);
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as Redis["sendCommand"];
  return {
    reset: () => {
      sent = new Set();
    },
    scriptCalls: () =>
      [...sent]
        .map((command) => command.name.toLowerCase())
        .filter((name) => name === "eval" || name === "evalsha"),
  };
}

interface StoreCase {
  store: string;
  /** How many different scripts one exercise runs. */
  scripts: number;
  /**
   * Runs each of the store's scripts at least once, asserting what they did; `round` makes ids
   * unique. Each round builds new stores on the same client, as stores share a process's clients.
   */
  exercise(redis: Redis, base: string, round: number): Promise<void>;
}

const cases: StoreCase[] = [
  {
    store: "HookStateStore",
    scripts: 2,
    async exercise(redis, base, round) {
      const hooks = new HookStateStore(redis, base);
      const oktaId = `00u${round}`;
      const read = await hooks.getMarks("okta", "user", oktaId, ["profile"]);
      const next = { seenVersion: `v${round}`, aspects: { profile: 1000 + round } };
      const deletion = { user: { oktaId, login: `user${round}@example.com` }, at: 5000 + round };
      await hooks.setMarksIf("okta", "user", oktaId, read, next, deletion);
      const after = await hooks.getMarks("okta", "user", oktaId, ["profile"]);
      expect(after).toEqual({ revision: "1", seenVersion: `v${round}`, aspects: { profile: 1000 + round } });
      expect(await hooks.deletedAt("okta", { oktaId })).toBe(5000 + round);
      // Decided from marks that have moved on: refused.
      await expect(hooks.setMarksIf("okta", "user", oktaId, read, next)).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      await hooks.recordDeletion("okta", { login: `other${round}@example.com` }, 7000 + round);
      await hooks.recordDeletion("okta", { login: `other${round}@example.com` }, 6000 + round);
      expect(await hooks.deletedAt("okta", { login: `other${round}@example.com` })).toBe(7000 + round);
    },
  },
  {
    store: "RedisSyncStateStore",
    // claim, release, addDeadLetter (a script since the mark is kept or dropped in Redis), recordSynced,
    // putLifecycle, settleLifecycle.
    scripts: 6,
    async exercise(redis, base, round) {
      const sync = new RedisSyncStateStore(redis, base);
      const alice: EntityRef = { source: "okta", kind: "user", id: `u-${round}` };
      const bob: EntityRef = { source: "okta", kind: "user", id: `b-${round}` };
      const email = `alice${round}@example.com`;
      const aliceOwns = await sync.claimOwner("user", email, alice);
      expect(await sync.claimOwner("user", email, bob)).toBe(aliceOwns);
      await sync.takeOverOwner("user", email, aliceOwns, bob);
      const bobOwns = await sync.ownerOf("user", email);
      expect(bobOwns).not.toBe(aliceOwns);
      await sync.releaseOwner("user", email, alice);
      expect(await sync.ownerOf("user", email)).toBe(bobOwns);
      await sync.releaseOwner("user", email, bob);
      expect(await sync.ownerOf("user", email)).toBeNull();

      await sync.addDeadLetter({
        ref: alice,
        reason: "boom",
        code: "X",
        at: new Date().toISOString(),
        attempts: 3,
      });
      await sync.recordSynced({ ref: alice, state: "synced", platformId: `p-${round}` });
      expect(await sync.getStatus(alice)).toEqual({ ref: alice, state: "synced", platformId: `p-${round}` });
      expect((await sync.listDeadLetters({ offset: 0, limit: 10 })).items).toEqual([]);

      const entry: LifecycleEntry = {
        platformId: `p-${round}`,
        ref: alice,
        action: "DEACTIVATE",
        generation: 1,
        final: false,
        attempts: 0,
        since: 1000 + round,
      };
      expect(await sync.putLifecycle(entry)).toBe(true);
      expect(await sync.putLifecycle({ ...entry, generation: 2 })).toBe(false);
      const stored = await sync.getLifecycle(entry.platformId);
      expect(stored?.entry).toEqual(entry);
      expect(await sync.settleLifecycle({ raw: "{}", entry }, null)).toBe(false);
      expect(await sync.settleLifecycle(stored!, null)).toBe(true);
      expect(await sync.getLifecycle(entry.platformId)).toBeNull();
    },
  },
  {
    store: "OperationStore",
    // create, and set-if-state (transition)
    scripts: 2,
    async exercise(redis, base, round) {
      type State = "queued" | "running" | "done";
      const operations = new OperationStore<State, StoredOperation<State>>(redis, base, "ops", 10);
      const op = {
        id: `op-${round}`,
        source: "okta",
        state: "queued" as State,
        createdAt: "2024-01-01T00:00:00Z",
      };
      await operations.create(op);
      await expect(operations.create(op)).rejects.toThrow(/exists/);
      expect(await operations.transition({ ...op, state: "done" }, ["running"])).toBe(false);
      expect(await operations.transition({ ...op, state: "running" }, ["queued"])).toBe(true);
      expect((await operations.get(op.id))?.state).toBe("running");
    },
  },
];

const clients: Array<{ name: string; options: RedisOptions }> = [
  { name: "a plain client", options: {} },
  // The intake's store client (src/server/redis-clients.ts) pipelines automatically.
  { name: "an auto-pipelining client", options: { enableAutoPipelining: true } },
];

describe.each(clients)("Lua scripts of the stores, on $name", ({ name, options }) => {
  it.each(cases)("$store runs its scripts by EVALSHA, and again after SCRIPT FLUSH", async (storeCase) => {
    const base = `${prefix}:${storeCase.store}:${name.replace(/\W+/g, "-")}`;
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, ...options });
    const record = recordCommands(redis);
    try {
      // The first call of each script on a connection carries its text (EVAL), once.
      await storeCase.exercise(redis, base, 1);
      expect(record.scriptCalls().filter((c) => c === "eval")).toHaveLength(storeCase.scripts);

      record.reset();
      await storeCase.exercise(redis, base, 2);
      const warm = record.scriptCalls();
      expect(warm.length).toBeGreaterThanOrEqual(storeCase.scripts);
      expect(warm.filter((c) => c !== "evalsha")).toEqual([]);

      // Redis forgets every script (as after a restart): each one answers NOSCRIPT once, is sent
      // again with its text, and the store works as before.
      await admin.script("FLUSH");
      record.reset();
      await storeCase.exercise(redis, base, 3);
      expect(record.scriptCalls().filter((c) => c === "eval")).toHaveLength(storeCase.scripts);

      record.reset();
      await storeCase.exercise(redis, base, 4);
      expect(record.scriptCalls().filter((c) => c !== "evalsha")).toEqual([]);
    } finally {
      await deleteKeys(admin, base);
      await redis.quit();
    }
  });
});

describe("luaScript", () => {
  it("gives one script for a name declared twice with one text; refuses another text, or a name the client has", async () => {
    const once = luaScript("scimTestLuaScriptTwice", "return 1");
    expect(luaScript("scimTestLuaScriptTwice", "return 1")).toBe(once);
    expect(() => luaScript("scimTestLuaScriptTwice", "return 2")).toThrow(/two Lua scripts/);

    const clash = luaScript("hget", "return 1");
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      expect(() => clash.run(redis, [], [])).toThrow(/already has a command named hget/);
    } finally {
      await redis.quit();
    }
  });

  it("passes keys and arguments as KEYS and ARGV, any number of keys per call", async () => {
    const echo = luaScript<unknown[]>(
      "scimTestLuaScriptEcho",
      "return {#KEYS, KEYS[1] or '', ARGV[1] or ''}",
    );
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      expect(await echo.run(redis, [`${prefix}:a`, `${prefix}:b`], ["x", 2])).toEqual([
        2,
        `${prefix}:a`,
        "x",
      ]);
      expect(await echo.run(redis, [], [3])).toEqual([0, "", "3"]);
    } finally {
      await redis.quit();
    }
  });
});
