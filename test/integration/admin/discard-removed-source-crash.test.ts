/**
 * Discarding the dead letter of a deleted user whose source was taken out of the configuration
 * (AdminService.discardDeadLetter, releaseTombstone): no sync runs for such a source, so the
 * discard itself purges the tombstone and forgets the rest (status, applied record, claim on the
 * platform user: invariant 6). A discard killed part way must be one the admin can run again to
 * finish. **Was a bug** (noticed in stop 29's crash-window audit): the letter went first, so after a
 * kill past it a second discard answered 404 "No dead letter", and the status, record and claim of
 * an entity the directory no longer held stayed for ever.
 */
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
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { forgetAbsent } from "../../../src/sync/forget-absent.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

describe("discarding a removed source's dead tombstone, killed part way", () => {
  const prefix = testPrefix("discard-removed-crash");
  // "legacy" was a source once; it is no longer configured.
  const config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    admin: { tokens: [hashToken("admin-token")] },
    redis: { url: TEST_REDIS_URL, prefix },
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const redis = new Redis(TEST_REDIS_URL);
  const syncState = new RedisSyncStateStore(redis, prefix);
  const directory = new RedisDirectoryStore({ redis, prefix, matchesFilter, notify: async () => {} });
  /** The step to die at, once: "forget" (after the purge) or "audit" (after everything else). */
  let killAt: "forget" | "audit" | undefined;
  const audit = new AuditLog(redis, prefix);
  const dying =
    <A extends unknown[], R>(step: "forget" | "audit", run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (killAt === step) {
        killAt = undefined;
        throw new Error("killed");
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
      record: dying("audit", (...args: Parameters<AuditLog["record"]>) => audit.record(...args)),
    } as AuditLog,
    jobs: {
      queueCounts: async () => ({}),
      pending: async () => 0,
      enqueueReconcile: async () => {},
      enqueueResync: async () => {},
      requestResync: async () => {
        throw new Error("no sync runs for a removed source");
      },
      forgetAbsent: dying("forget", (ref: EntityRef) => forgetAbsent({ state: syncState }, ref)),
    },
  });
  const actor = { kind: "admin" as const, name: "ops", role: "admin" as const };

  beforeEach(async () => {
    await deleteKeys(redis, prefix);
    killAt = undefined;
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** A deleted user of "legacy" whose deprovisioning was dead-lettered `unknown_source`. */
  async function deadTombstone(userName: string): Promise<EntityRef> {
    const user = await directory.createUser("legacy", { schemas: [], userName, active: true } as never);
    const ref: EntityRef = { source: "legacy", kind: "user", id: user.resource.id };
    await directory.deleteUser("legacy", ref.id);
    const snap = await directory.snapshotUser("legacy", ref.id);
    await directory.markClean(ref, snap?.generation as number);
    await syncState.putApplied(ref, { platformId: "p-legacy", userName, active: true });
    await syncState.claimOwner("user", "p-legacy", ref);
    const at = new Date().toISOString();
    const lastError = { message: "source not configured", code: "unknown_source", at, attempts: 1 };
    await syncState.setStatus({ ref, state: "dead", platformId: "p-legacy", lastError });
    await syncState.addDeadLetter({
      ref,
      reason: "source not configured",
      code: "unknown_source",
      at,
      attempts: 1,
    });
    return ref;
  }
  async function nothingLeftOf(ref: EntityRef) {
    expect(await directory.snapshotUser("legacy", ref.id)).toBeNull();
    expect(await syncState.getStatus(ref)).toBeNull();
    expect(await syncState.getApplied(ref)).toBeNull();
    expect(await syncState.ownerOf("user", "p-legacy")).toBeNull();
    expect(await syncState.countDeadLetters()).toBe(0);
  }

  it("killed after the purge: the same discard run again forgets the rest", async () => {
    const ref = await deadTombstone("gone.one@example.com");
    killAt = "forget";
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/killed/);
    expect(await directory.snapshotUser("legacy", ref.id)).toBeNull();
    expect(await syncState.getDeadLetter(ref)).not.toBeNull();

    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: true });
    await nothingLeftOf(ref);
  });

  it("killed at the end: nothing is left, and a second discard is a plain 404", async () => {
    const ref = await deadTombstone("gone.two@example.com");
    killAt = "audit";
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/killed/);
    await nothingLeftOf(ref);
    await expect(service.discardDeadLetter(ref, actor)).rejects.toThrow(/No dead letter/);
  });

  it("not killed: released at once", async () => {
    const ref = await deadTombstone("gone.three@example.com");
    await expect(service.discardDeadLetter(ref, actor)).resolves.toEqual({ released: true });
    await nothingLeftOf(ref);
  });
});
