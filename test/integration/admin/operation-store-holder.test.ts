/**
 * OperationStore writes guarded by a job's lock (OperationHolder): applied while the lock key holds
 * the holder's token, refused (OperationNotHeld, nothing written) once it holds another's or none.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperationNotHeld } from "../../../src/admin/operation-not-held.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

describe("operation writes guarded by a job's lock", () => {
  const prefix = testPrefix("op-holder");
  let redis: Redis;
  let resyncs: ResyncStore;
  const lockKey = `${prefix}:queue:job-1:lock`;
  const holder = { lockKey, token: "mine" };

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    await redis.connect();
    resyncs = new ResyncStore(redis, prefix);
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it("adds every member of large sets while held, with the TTL, and refuses once the lock is another's", async () => {
    await redis.set(lockKey, "mine", "PX", 10_000);
    const refs = Array.from({ length: 2_500 }, (_v, i) => `okta/user/u${i}`);
    await resyncs.track("op-1", refs, holder);
    const tracked = resyncs.key("op-1", "tracked");
    expect(await redis.scard(tracked)).toBe(2_500);
    expect(await redis.ttl(tracked)).toBeGreaterThan(0);
    await resyncs.addEmbedMembership("op-1", { members: ["t/a", "t/b"], kept: [], removed: ["t/b"] }, holder);
    expect(await redis.smembers(resyncs.key("op-1", "embed:removed"))).toEqual(["t/b"]);

    await redis.set(lockKey, "theirs", "PX", 10_000);
    await expect(resyncs.addHeld("op-1", ["u1"], holder)).rejects.toBeInstanceOf(OperationNotHeld);
    await expect(resyncs.dropOwnedKeys("op-1", holder)).rejects.toBeInstanceOf(OperationNotHeld);
    expect(await redis.exists(resyncs.key("op-1", "held"))).toBe(0);
    expect(await redis.scard(tracked)).toBe(2_500);

    await redis.del(lockKey);
    await expect(resyncs.track("op-1", ["okta/user/x"], holder)).rejects.toBeInstanceOf(OperationNotHeld);
    expect(await redis.sismember(tracked, "okta/user/x")).toBe(0);
  });

  it("a run's start takes its source's attribute turn only when its record is written", async () => {
    const runs = new ReconcileRunStore(redis, prefix, 10);
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const running = { ...run, state: "running" as const, attributeSlice: { slice: 1, slices: 2 } };
    await redis.set(lockKey, "theirs", "PX", 10_000);
    await expect(runs.startWithTurn(running, ["queued"], 0, holder)).rejects.toBeInstanceOf(OperationNotHeld);
    await redis.set(lockKey, "mine", "PX", 10_000);
    // Another run of the source took turn 1 meanwhile.
    await redis.set(runs.attributeTurnKey("okta"), "1");
    expect(await runs.startWithTurn(running, ["queued"], 0, holder)).toBe("turn-moved");
    expect(await runs.attributeTurn("okta")).toBe(1);
    expect((await runs.get(run.runId))?.state).toBe("queued");
    expect(await runs.startWithTurn(running, ["awaiting-confirmation"], 1, holder)).toBe("refused");
    expect(await runs.attributeTurn("okta")).toBe(1);
    expect(await runs.startWithTurn(running, ["queued"], 1, holder)).toBe("written");
    expect(await runs.attributeTurn("okta")).toBe(2);
    expect((await runs.get(run.runId))?.state).toBe("running");
  });

  it("counts embed removals and drops the embed sets only while held; another's lock leaves them whole", async () => {
    await redis.set(lockKey, "mine", "PX", 10_000);
    const membership = { members: ["t/a", "t/b", "t/c"], kept: ["t/a"], removed: ["t/a", "t/b", "t/c"] };
    await resyncs.addEmbedMembership("op-embed", membership, holder);
    const sets = ["embed:members", "embed:kept", "embed:removed"].map((s) => resyncs.key("op-embed", s));

    // A holder handed on: nothing counted, nothing dropped (the next holder's count stays whole).
    await redis.set(lockKey, "theirs", "PX", 10_000);
    await expect(resyncs.countEmbedDeprovisions("op-embed", holder)).rejects.toBeInstanceOf(OperationNotHeld);
    for (const key of sets) expect(await redis.exists(key)).toBe(1);

    await redis.set(lockKey, "mine", "PX", 10_000);
    expect(await resyncs.countEmbedDeprovisions("op-embed", holder)).toEqual({ planned: 2, onPlatform: 3 });
    for (const key of [...sets, `${resyncs.key("op-embed", "embed:removed")}:only`]) {
      expect(await redis.exists(key)).toBe(0);
    }
    // Without a holder (no worker: the sandbox's direct runs), as before.
    await resyncs.addEmbedMembership("op-embed", membership);
    expect(await resyncs.countEmbedDeprovisions("op-embed")).toEqual({ planned: 2, onPlatform: 3 });
  });
});
