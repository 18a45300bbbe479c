import { Redis } from "ioredis";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { AdminService } from "../../../src/admin/admin-service.js";
import { AuditLog } from "../../../src/admin/audit-log.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { hashToken } from "../../../src/config/tokens.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { type EntityRef, refKey } from "../../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

/**
 * Review l1: a deleted user's dead letter discarded (AdminService.releaseTombstone) when the resync
 * request that follows the purge fails (a Redis hiccup, the process dying in between). The
 * tombstone is gone by then and the letter too, so nothing but the dirty marker can bring the sync
 * of the now absent entity that drops what is still recorded of it (its status, applied record and
 * claim on the platform user: invariant 6). The purge leaves the entity dirty for the sweeper.
 */
describe("review l1: a discarded tombstone whose resync request fails", () => {
  const prefix = testPrefix("release-tomb-l1");
  const config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    admin: { tokens: [hashToken("admin-l1")] },
    redis: { url: TEST_REDIS_URL, prefix },
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const redis = new Redis(TEST_REDIS_URL);
  const syncState = new RedisSyncStateStore(redis, prefix);
  const directory = new RedisDirectoryStore({ redis, prefix, matchesFilter, notify: async () => {} });
  let failing = false;
  const service = new AdminService({
    config,
    directory,
    syncState,
    runs: new ReconcileRunStore(redis, prefix, 10),
    resyncs: new ResyncStore(redis, prefix),
    audit: new AuditLog(redis, prefix),
    jobs: {
      queueCounts: async () => ({}),
      pending: async () => 0,
      enqueueReconcile: async () => {},
      enqueueResync: async () => {},
      requestResync: async (refs) => {
        if (failing) throw new Error("Connection is closed.");
        await syncState.requestResync(refs);
        await Promise.all(refs.map((r) => directory.markDirty(r)));
      },
      forgetAbsent: async () => {},
    },
  });
  const actor = { kind: "admin" as const, name: "ops", role: "admin" as const };

  beforeEach(async () => {
    await deleteKeys(redis, prefix);
    failing = false;
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** A deleted user whose deprovisioning was dead-lettered: a clean tombstone, status dead, a letter. */
  async function deadTombstone(userName: string): Promise<EntityRef> {
    const user = await directory.createUser("okta", { schemas: [], userName, active: true } as never);
    const ref: EntityRef = { source: "okta", kind: "user", id: user.resource.id };
    await directory.deleteUser("okta", ref.id);
    const snap = await directory.snapshotUser("okta", ref.id);
    expect(snap?.desired).toBeNull();
    await directory.markClean(ref, snap?.generation as number);
    const at = new Date().toISOString();
    const lastError = { message: "403 Forbidden", code: "platform_forbidden", at, attempts: 1 };
    await syncState.setStatus({ ref, state: "dead", platformId: "p-1", lastError });
    await syncState.addDeadLetter({
      ref,
      reason: "403 Forbidden",
      code: "platform_forbidden",
      at,
      attempts: 1,
    });
    return ref;
  }
  const dirty = async () => (await directory.listDirty(Date.now() + 60_000, 100)).map((e) => refKey(e.ref));

  it("the purge leaves the entity dirty: the sweeper brings the sync that forgets the rest", async () => {
    const ref = await deadTombstone("gone.l1@example.com");
    expect(await dirty()).toEqual([]);
    failing = true;
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/closed/);
    expect(await directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await dirty()).toEqual([refKey(ref)]);
    // The letter goes last (since stop 31): the discard that failed part way is still there to be
    // run again, and that one finishes (the sync the sweeper brings would also drop the letter).
    expect(await syncState.countDeadLetters()).toBe(1);
    failing = false;
    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: false });
    expect(await syncState.countDeadLetters()).toBe(0);
    expect(await dirty()).toEqual([refKey(ref)]);
  });

  it("a discard whose request goes through: purged and dirty, as requested", async () => {
    const ref = await deadTombstone("gone2.l1@example.com");
    await service.discardDeadLetter(ref, actor);
    expect(await directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await dirty()).toEqual([refKey(ref)]);
  });
});
