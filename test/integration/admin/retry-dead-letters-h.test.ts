import express from "express";
import { Redis } from "ioredis";
import supertest from "supertest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAdminRouter } from "../../../routes/admin/admin-router.js";
import { AdminPrincipals } from "../../../src/admin/admin-principals.js";
import { AdminService } from "../../../src/admin/admin-service.js";
import { AuditLog } from "../../../src/admin/audit-log.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { hashToken } from "../../../src/config/tokens.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { type EntityRef, refKey } from "../../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { syncKeys } from "../../../src/sync/sync-keys.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

/**
 * Probes h: a dead-letter retry whose resync request fails (Redis hiccup, the queue closing)
 * leaves the letter listed and answers an error; once the request goes through, the letter goes,
 * listed once at most. A letter a sync wrote again while the retry was under way stays.
 */
const ADMIN = "admin-h-token";

describe("probes h: retrying dead letters when the resync request fails", () => {
  const prefix = testPrefix("retry-dl-h");
  const config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    admin: { tokens: [hashToken(ADMIN)] },
    redis: { url: TEST_REDIS_URL, prefix },
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const redis = new Redis(TEST_REDIS_URL);
  const syncState = new RedisSyncStateStore(redis, prefix);
  const requested: EntityRef[][] = [];
  let failing = false;
  let duringRequest: (() => Promise<void>) | undefined;
  let service: AdminService;
  let http: ReturnType<typeof supertest>;
  const actor = { kind: "admin" as const, name: "ops", role: "admin" as const };
  const ref = (id: string): EntityRef => ({ source: "okta", kind: "user", id });
  const letter = (id: string, at = "2026-11-27T09:00:00.000Z") => ({
    ref: ref(id),
    reason: "403 Forbidden",
    code: "platform_forbidden",
    at,
    attempts: 1,
  });
  const listed = async () =>
    (await syncState.listDeadLetters({ offset: 0, limit: 100 })).items.map((l) => l.ref.id);

  beforeAll(() => {
    const directory = new RedisDirectoryStore({ redis, prefix, matchesFilter, notify: async () => {} });
    const audit = new AuditLog(redis, prefix);
    service = new AdminService({
      config,
      directory,
      syncState,
      runs: new ReconcileRunStore(redis, prefix, 10),
      resyncs: new ResyncStore(redis, prefix),
      audit,
      jobs: {
        queueCounts: async () => ({}),
        pending: async () => 0,
        enqueueReconcile: async () => {},
        enqueueResync: async () => {},
        requestResync: async (refs) => {
          if (failing) throw new Error("Connection is closed.");
          requested.push(refs);
          await duringRequest?.();
        },
        forgetAbsent: async () => {},
      },
    });
    const app = express();
    app.use(
      "/admin/v1",
      createAdminRouter({
        service,
        principals: new AdminPrincipals(config),
        audit,
        logger: createLogger("silent"),
      }),
    );
    http = supertest(app);
  });
  beforeEach(async () => {
    await deleteKeys(redis, prefix);
    requested.length = 0;
    failing = false;
    duringRequest = undefined;
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it("one letter: a failed request is an error and leaves it listed; the next retry removes it", async () => {
    await syncState.addDeadLetter(letter("u1"));
    failing = true;
    const res = await http
      .post("/admin/v1/dead-letters/okta/user/u1/retry")
      .set({ Authorization: `Bearer ${ADMIN}` });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await listed()).toEqual(["u1"]);
    expect(await syncState.countDeadLetters()).toBe(1);

    failing = false;
    const again = await http
      .post("/admin/v1/dead-letters/okta/user/u1/retry")
      .set({ Authorization: `Bearer ${ADMIN}` });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ retried: 1 });
    expect(requested).toEqual([[ref("u1")]]);
    expect(await listed()).toEqual([]);
  });

  it("all letters: a failed request leaves every one listed; the next retry removes each once", async () => {
    for (const id of ["a", "b", "c"]) await syncState.addDeadLetter(letter(id));
    failing = true;
    await expect(service.retryDeadLetters("all", actor)).rejects.toThrow(/closed/);
    const all = await http
      .post("/admin/v1/dead-letters/retry")
      .set({ Authorization: `Bearer ${ADMIN}` })
      .send({});
    expect(all.status).toBeGreaterThanOrEqual(500);
    expect((await listed()).sort()).toEqual(["a", "b", "c"]);

    failing = false;
    expect(await service.retryDeadLetters("all", actor)).toEqual({ retried: 3 });
    expect(
      requested
        .flat()
        .map((r) => r.id)
        .sort(),
    ).toEqual(["a", "b", "c"]);
    expect(await listed()).toEqual([]);
    expect(await service.retryDeadLetters([ref("a"), ref("a")], actor)).toEqual({ retried: 0 });
  });

  it("a letter written again by a sync while the retry is under way stays listed", async () => {
    await syncState.addDeadLetter(letter("u2"));
    duringRequest = async () => {
      await syncState.addDeadLetter(letter("u2", "2026-11-27T09:05:00.000Z"));
    };
    expect(await service.retryDeadLetters([ref("u2")], actor)).toEqual({ retried: 1 });
    const items = (await syncState.listDeadLetters({ offset: 0, limit: 10 })).items;
    expect(items).toHaveLength(1);
    expect(items[0]?.at).toBe("2026-11-27T09:05:00.000Z");
  });

  /**
   * Letters failing again at once while every letter is retried (their entities' syncs refused
   * again): each letter present at the start is requested exactly once, wherever the letter written
   * again sorts (later: the clock moved on; earlier: written by a worker whose clock is behind), and
   * `retried` counts each once. 250 letters: more than one page of the walk.
   */
  const retryAllWhileFailingAgain = async (againAt: string) => {
    const ids = Array.from({ length: 250 }, (_, i) => `r${String(i).padStart(3, "0")}`);
    const base = Date.parse("2026-11-27T09:00:00.000Z");
    await Promise.all(
      ids.map((id, i) => syncState.addDeadLetter(letter(id, new Date(base + i * 1000).toISOString()))),
    );
    let first = true;
    duringRequest = async () => {
      if (!first) return;
      first = false;
      const refs = requested[requested.length - 1] ?? [];
      await Promise.all(refs.map((r) => syncState.addDeadLetter({ ...letter(r.id, againAt), attempts: 2 })));
    };
    const result = await service.retryDeadLetters("all", actor);
    const once = requested.flat().map((r) => r.id);
    expect(once.length).toBe(new Set(once).size);
    expect([...once].sort()).toEqual(ids);
    expect(result).toEqual({ retried: 250 });
    // The letters written again stay listed (they are not the ones read); the others went.
    const again = (await syncState.listDeadLetters({ offset: 0, limit: 500 })).items;
    expect(again.every((item) => item.at === againAt)).toBe(true);
    expect(again.length).toBe(requested[0]?.length);
    // The walk's copy of the order is gone with it.
    expect(await redis.keys(`${prefix}:sync:dead:walk:*`)).toEqual([]);
  };

  it("all letters, some failing again at once (written again later): each is retried once", async () => {
    await retryAllWhileFailingAgain("2026-11-28T09:00:00.000Z");
  });

  it("all letters, some failing again at once (written again by a clock behind): each is retried once, none left out", async () => {
    await retryAllWhileFailingAgain("2026-11-26T09:00:00.000Z");
  });

  /**
   * A letter not written by JSON.stringify of this shape (another key order, whitespace: another
   * writer, an older version): the removal compares the string read, not the letter serialised again.
   */
  const storeOtherwise = async (id: string, at = "2026-11-27T09:00:00.000Z") => {
    const { ref: r, reason, code, attempts } = letter(id, at);
    const stored = JSON.stringify({ attempts, at, code, reason, ref: r }, null, 2);
    const key = refKey(r);
    await redis
      .multi()
      .hset(syncKeys.dead(prefix), key, stored)
      .zadd(syncKeys.deadOrder(prefix), Date.parse(at), key)
      .zadd(syncKeys.deadOrder(prefix, r.source), Date.parse(at), key)
      .exec();
  };

  it("a letter stored in another shape is removed when unchanged (one, or all), and kept when a sync wrote it again", async () => {
    await storeOtherwise("o1");
    expect(await service.retryDeadLetters([ref("o1")], actor)).toEqual({ retried: 1 });
    expect(await listed()).toEqual([]);

    for (const id of ["o2", "o3"]) await storeOtherwise(id);
    expect(await service.retryDeadLetters("all", actor)).toEqual({ retried: 2 });
    expect(await listed()).toEqual([]);
    expect(await syncState.countDeadLetters()).toBe(0);

    await storeOtherwise("o4");
    duringRequest = () => storeOtherwise("o4", "2026-11-27T09:05:00.000Z");
    expect(await service.retryDeadLetters([ref("o4")], actor)).toEqual({ retried: 1 });
    const items = (await syncState.listDeadLetters({ offset: 0, limit: 10 })).items;
    expect(items.map((item) => [item.ref.id, item.at])).toEqual([["o4", "2026-11-27T09:05:00.000Z"]]);
  });
});
