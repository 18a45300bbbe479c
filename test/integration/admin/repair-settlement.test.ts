import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisRepairStatus, settlePass } from "../../../jobs/reconcile/repair-settlement.js";
import { startedOutcome } from "../../../src/admin/repair-outcome.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { type EntityRef, refKey } from "../../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

/**
 * What a run or resync takes for settled: an entity still dirty is not; one no longer dirty is
 * synced (or gone) or failed as its status says, and a sync that cleared the marker before the
 * requested resync was taken does not count. A settled entity is counted once however many
 * passes race.
 */
describe("repair settlement", () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = testPrefix("repair-settlement");
  const directory = new RedisDirectoryStore({
    redis,
    prefix,
    notify: async () => {},
    logger: createLogger("silent"),
    matchesFilter,
  });
  const state = new RedisSyncStateStore(redis, prefix);
  const ref = (id: string): EntityRef => ({ source: "okta", kind: "user", id });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it("tells pending, synced, failed and gone apart, and counts each settled entity once", async () => {
    const [dirty, synced, early, dead, gone] = ["dirty", "synced", "early", "dead", "gone"].map(
      ref,
    ) as EntityRef[];
    const all = [dirty, synced, early, dead, gone] as EntityRef[];
    await state.requestResync(all);
    for (const r of all) await directory.markDirty(r);
    // The syncs: `synced` took its request and synced; `early` synced but its request is still
    // there (a sync already running cleared the marker); `dead` failed for good; `gone` was purged.
    await state.takeResync(synced as EntityRef);
    await state.recordSynced({ ref: synced as EntityRef, state: "synced", appliedGeneration: 0 });
    await state.recordSynced({ ref: early as EntityRef, state: "synced", appliedGeneration: 0 });
    await state.setStatus({
      ref: dead as EntityRef,
      state: "dead",
      lastError: {
        code: "platform_forbidden",
        message: "403 Forbidden",
        at: new Date().toISOString(),
        attempts: 1,
      },
    });
    for (const r of [synced, early, dead, gone] as EntityRef[]) await directory.markClean(r, 0);

    const read = redisRepairStatus(redis, prefix);
    expect((await read(all.map(refKey))).map((v) => v.verdict)).toEqual([
      "pending",
      "synced",
      "pending",
      "failed",
      "synced",
    ]);

    const keys = {
      tracked: `${prefix}:t:tracked`,
      classes: `${prefix}:t:classes`,
      counts: `${prefix}:t:counts`,
      failures: `${prefix}:t:failures`,
    };
    await redis.sadd(keys.tracked, ...all.map(refKey));
    await redis.hset(keys.classes, refKey(synced as EntityRef), "2");
    const options = { redis, reader: read };
    const [a, b] = await Promise.all([
      settlePass(options, keys, startedOutcome(5)),
      settlePass(options, keys, startedOutcome(5)),
    ]);
    for (const pass of [a, b]) {
      expect(pass.outcome).toMatchObject({ synced: 2, failed: 1, pending: 2, settled: false });
      expect(pass.outcome.failures).toEqual([
        { ref: "okta/user/dead", code: "platform_forbidden", reason: "403 Forbidden" },
      ]);
    }
    // Each synced entity's drift classes are handed out once, to one of the racing passes.
    expect([...a.syncedBits, ...b.syncedBits].sort()).toEqual([0, 2]);

    // The rest settle: the whole is settled, with nothing counted twice.
    await state.takeResync(early as EntityRef);
    await directory.markClean(dirty as EntityRef, 0);
    await state.recordSynced({ ref: dirty as EntityRef, state: "synced", appliedGeneration: 0 });
    await state.takeResync(dirty as EntityRef);
    const last = await settlePass(options, keys, a.outcome);
    expect(last.outcome).toMatchObject({ synced: 4, failed: 1, pending: 0, settled: true });
  });
});
