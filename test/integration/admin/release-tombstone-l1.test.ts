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
import { forgetAbsent } from "../../../src/sync/forget-absent.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

/**
 * Discarding the dead letter of a deleted user (AdminService.discardDeadLetter, releaseTombstone)
 * when a step of it fails or the process dies part way. "okta" is configured; "legacy" was a source
 * once and is no longer configured (no sync runs for it: the discard itself forgets what is
 * recorded of its entity).
 */
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
const audit = new AuditLog(redis, prefix);
/** The step that fails, once: the resync request, forgetting the rest, or the audit entry (the last step). */
let failAt: "request" | "forget" | "audit" | undefined;
const failing =
  <A extends unknown[], R>(step: typeof failAt, run: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    if (failAt === step) {
      failAt = undefined;
      throw new Error(step === "request" ? "Connection is closed." : "killed");
    }
    return run(...args);
  };
const service = new AdminService({
  config,
  directory,
  syncState,
  runs: new ReconcileRunStore(redis, prefix, 10),
  resyncs: new ResyncStore(redis, prefix),
  audit: {
    record: failing("audit", (entry: Parameters<AuditLog["record"]>[0]) => audit.record(entry)),
  } as AuditLog,
  jobs: {
    queueCounts: async () => ({}),
    pending: async () => 0,
    enqueueReconcile: async () => {},
    enqueueResync: async () => {},
    requestResync: failing("request", async (refs: EntityRef[]) => {
      await syncState.requestResync(refs);
      await Promise.all(refs.map((r) => directory.markDirty(r)));
    }),
    forgetAbsent: failing("forget", (ref: EntityRef) => forgetAbsent({ state: syncState }, ref)),
  },
});
const actor = { kind: "admin" as const, name: "ops", role: "admin" as const };

beforeEach(async () => {
  await deleteKeys(redis, prefix);
  failAt = undefined;
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/**
 * A deleted user whose deprovisioning was dead-lettered: a clean tombstone, its applied record and
 * claim on platform user `p-<userName>`, status dead, a letter.
 */
async function deadTombstone(source: string, userName: string): Promise<EntityRef> {
  const user = await directory.createUser(source, { schemas: [], userName, active: true } as never);
  const ref: EntityRef = { source, kind: "user", id: user.resource.id };
  await directory.deleteUser(source, ref.id);
  const snap = await directory.snapshotUser(source, ref.id);
  expect(snap?.desired).toBeNull();
  await directory.markClean(ref, snap?.generation as number);
  const platformId = `p-${userName}`;
  await syncState.putApplied(ref, { platformId, userName, active: true });
  await syncState.claimOwner("user", platformId, ref);
  const code = source === "okta" ? "platform_forbidden" : "unknown_source";
  const at = new Date().toISOString();
  const lastError = { message: "refused", code, at, attempts: 1 };
  await syncState.setStatus({ ref, state: "dead", platformId, lastError });
  await syncState.addDeadLetter({ ref, reason: "refused", code, at, attempts: 1 });
  return ref;
}
const dirty = async () => (await directory.listDirty(Date.now() + 60_000, 100)).map((e) => refKey(e.ref));

/**
 * Review l1: the resync request that follows the purge fails (a Redis hiccup, the process dying in
 * between). The tombstone is gone by then, so nothing but the dirty marker can bring the sync of the
 * now absent entity that drops what is still recorded of it (its status, applied record and claim
 * on the platform user: invariant 6). The purge leaves the entity dirty for the sweeper.
 */
describe("review l1: a discarded tombstone whose resync request fails", () => {
  it("the purge leaves the entity dirty: the sweeper brings the sync that forgets the rest", async () => {
    const ref = await deadTombstone("okta", "gone.l1@example.com");
    expect(await dirty()).toEqual([]);
    failAt = "request";
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/closed/);
    expect(await directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await dirty()).toEqual([refKey(ref)]);
    // The letter goes last (since stop 31): the discard that failed part way is still there to be
    // run again, and that one finishes (the sync the sweeper brings would also drop the letter).
    expect(await syncState.countDeadLetters()).toBe(1);
    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: false });
    expect(await syncState.countDeadLetters()).toBe(0);
    expect(await dirty()).toEqual([refKey(ref)]);
  });

  it("a discard whose request goes through: purged and dirty, as requested", async () => {
    const ref = await deadTombstone("okta", "gone2.l1@example.com");
    await service.discardDeadLetter(ref, actor);
    expect(await directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await dirty()).toEqual([refKey(ref)]);
  });
});

/**
 * A discard of a removed source's letter killed part way must be one the admin can run again to
 * finish. **Was a bug** (noticed in stop 29's crash-window audit): the letter went first, so after a
 * kill past it a second discard answered 404 "No dead letter", and the status, record and claim of
 * an entity the directory no longer held stayed for ever.
 */
describe("discarding a removed source's dead tombstone, killed part way", () => {
  async function nothingLeftOf(ref: EntityRef, platformId: string) {
    expect(await directory.snapshotUser("legacy", ref.id)).toBeNull();
    expect(await syncState.getStatus(ref)).toBeNull();
    expect(await syncState.getApplied(ref)).toBeNull();
    expect(await syncState.ownerOf("user", platformId)).toBeNull();
    expect(await syncState.countDeadLetters()).toBe(0);
  }

  it("killed after the purge: the same discard run again forgets the rest", async () => {
    const ref = await deadTombstone("legacy", "gone.one@example.com");
    failAt = "forget";
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/killed/);
    expect(await directory.snapshotUser("legacy", ref.id)).toBeNull();
    expect(await syncState.getDeadLetter(ref)).not.toBeNull();

    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: true });
    await nothingLeftOf(ref, "p-gone.one@example.com");
  });

  it("killed at the end: nothing is left, and a second discard is a plain 404", async () => {
    const ref = await deadTombstone("legacy", "gone.two@example.com");
    failAt = "audit";
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/killed/);
    await nothingLeftOf(ref, "p-gone.two@example.com");
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/No dead letter/);
  });

  it("not killed: released at once", async () => {
    const ref = await deadTombstone("legacy", "gone.three@example.com");
    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: true });
    await nothingLeftOf(ref, "p-gone.three@example.com");
  });
});
