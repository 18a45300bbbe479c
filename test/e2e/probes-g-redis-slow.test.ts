/**
 * Probes-g: Redis slow rather than down (a TCP proxy in front of a throwaway redis-server delays
 * every chunk each way: test/helpers/latency-proxy-probes-g.ts). Invariant 1 as the identity
 * provider sees it: every request is answered (2xx, or 503 to come back later; never a hang, never
 * another 5xx), and a 2xx means the change is stored and reaches the platform. What got a 503 is
 * sent again, as SCIM clients do (a create already stored answers 409, then it is looked up).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { LatencyProxy } from "../helpers/latency-proxy-probes-g.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../helpers/throwaway-redis.js";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };

describe("probes-g: Redis slow, not down", () => {
  let redis: ThrowawayRedis;
  let proxy: LatencyProxy;
  let h: TestBridge;
  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
    proxy = new LatencyProxy(redis.port);
    const port = await proxy.start();
    h = await startTestBridge("probes-g-redis-slow", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { redis: { url: `redis://127.0.0.1:${port}`, prefix: "{probes-g-slow}" } },
    });
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
    await redis?.dispose();
  });

  const token = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);

  /**
   * Creates and PATCHes (displayName, deactivation) of users created before, while every Redis
   * round trip takes 0.4 s, then 1.2 s (past the intake's 2 s command timeout for a request of
   * several round trips), then back to none. The IdP expects each answer within its own timeout,
   * a 2xx only for what is stored (read back over SCIM once Redis is fast again, and on the
   * platform once idle), and everything it sent again after a 503 delivered once.
   */
  it("every answer is a 2xx that was stored or a 503; everything lands once", async () => {
    const scim = h.scim("okta");
    const base = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => scim.createUser(`slow.b${i}@example.com`)));
    await h.waitForIdle();

    const answers: Array<{ what: string; status: number; ms: number }> = [];
    const acked = new Map<string, string>(); // userName -> id, for creates answered 201
    const patched = new Map<string, string>(); // id -> displayName answered 200
    const create = async (userName: string) => {
      const t = Date.now();
      const res = await h.http
        .post("/scim/v2/okta/Users")
        .set(token)
        .send({ schemas: [USER_SCHEMA], userName, active: true })
        .timeout(15_000);
      answers.push({ what: `create ${userName}`, status: res.status, ms: Date.now() - t });
      if (res.status === 201) acked.set(userName, res.body.id);
    };
    const rename = async (i: number, displayName: string) => {
      const t = Date.now();
      const res = await scim
        .patchUser(base[i]!.id, [{ op: "replace", path: "displayName", value: displayName }])
        .timeout(15_000);
      answers.push({ what: `rename b${i}`, status: res.status, ms: Date.now() - t });
      if (res.status === 200) patched.set(base[i]!.id, displayName);
    };
    const burst = (tag: string) =>
      Promise.all([
        ...[0, 1, 2, 3, 4, 5].map((i) => create(`slow.${tag}${i}@example.com`)),
        ...[0, 1, 2].map((i) => rename(i, `${tag} ${i}`)),
      ]);

    proxy.latencyMs = 300;
    await burst("p");
    proxy.latencyMs = 1_100;
    await burst("q");
    proxy.latencyMs = 0;

    // Every answer came, in time, and was a 2xx or a 503.
    for (const a of answers) {
      expect([200, 201, 503], a.what).toContain(a.status);
      expect(a.ms, a.what).toBeLessThan(10_000);
    }
    expect(answers.some((a) => a.status === 503)).toBe(true); // the probe reached the timeout
    // A 2xx is stored: read back now that Redis is fast.
    for (const [userName, id] of acked) {
      const res = await scim.get(`/Users/${id}`);
      expect(res.status, userName).toBe(200);
      expect(res.body.userName).toBe(userName);
    }
    // The IdP resends what got a 503 (a create: 409 once stored, then looked up).
    for (const tag of ["p", "q"]) {
      for (let i = 0; i < 6; i++) {
        const userName = `slow.${tag}${i}@example.com`;
        if (acked.has(userName)) continue;
        await waitFor(
          async () => {
            const res = await h.http
              .post("/scim/v2/okta/Users")
              .set(token)
              .send({ schemas: [USER_SCHEMA], userName, active: true });
            if (res.status === 201) acked.set(userName, res.body.id);
            if (res.status === 409) {
              const found = await scim.get(
                `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`,
              );
              acked.set(userName, found.body.Resources[0].id);
            }
            return res.status === 201 || res.status === 409;
          },
          { timeoutMs: 10_000, what: `resend ${userName}` },
        );
      }
    }
    for (const i of [0, 1, 2]) {
      const res = await scim.patchUser(base[i]!.id, [
        { op: "replace", path: "displayName", value: `final ${i}` },
      ]);
      expect(res.status).toBe(200);
    }
    await h.waitForIdle(40_000);

    for (const userName of acked.keys()) {
      expect(
        named(userName).map((u) => u.active),
        userName,
      ).toEqual([true]);
    }
    expect(acked.size).toBe(12);
    for (const i of [0, 1, 2]) {
      expect(named(`slow.b${i}@example.com`).map((u) => u.displayName)).toEqual([`final ${i}`]);
    }
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 100_000);
});

/**
 * Redis slow for the workers (every round trip past the store client's 2 s command timeout) for a
 * few seconds right after a deactivation was acknowledged: its sync cannot read the directory.
 * Redis being slow says nothing about the user; the admin expects the deactivation on the platform
 * once Redis is fast again, not a dead letter that waits for an admin's retry. (A sync that fails
 * on Redis waits for it without spending one of the job's attempts: a slowdown longer than the
 * attempts last is test/integration/jobs/redis-store-slow-i.test.ts.)
 */
describe("probes-g: Redis slow while a sync runs", () => {
  let redis: ThrowawayRedis;
  let proxy: LatencyProxy;
  let h: TestBridge;
  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
    proxy = new LatencyProxy(redis.port);
    const port = await proxy.start();
    h = await startTestBridge("probes-g-redis-slow-sync", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        redis: { url: `redis://127.0.0.1:${port}`, prefix: "{probes-g-slow-sync}" },
        sync: {
          concurrency: 1,
          attempts: 5,
          lifecycleBatchWindowMs: 50,
          sweepIntervalMs: 500,
          sweepAfterMs: 1_000,
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
    await redis?.dispose();
  });

  it("a deactivation acknowledged just before Redis slows down reaches the platform; no dead letter", async () => {
    const scim = h.scim("okta");
    const busy = await scim.createUser("slowsync.busy@example.com");
    const u = await scim.createUser("slowsync.u@example.com");
    await h.waitForIdle();
    // The one worker slot is taken by a slow platform call, so the deactivation's sync starts
    // only once Redis is slow.
    const busyId = h.platformUsers().get("slowsync.busy@example.com")?.id as string;
    h.emulator.setFaults([
      { type: "slow", delayMs: 2_500, match: { method: "PATCH", path: `/api/scim/v2/Users/${busyId}` } },
    ]);
    expect(
      (await scim.patchUser(busy.id, [{ op: "replace", path: "displayName", value: "Busy" }])).status,
    ).toBe(200);
    await waitFor(() => h.emulator.requests().some((r) => r.method === "PATCH"), { what: "the slow call" });
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    proxy.latencyMs = 1_100;
    await new Promise((r) => setTimeout(r, 10_000));
    proxy.latencyMs = 0;
    h.emulator.clearFaults();
    await h.waitForIdle(40_000);
    const platform = (
      h.emulator.state().users as unknown as Array<{ userName: string; active: boolean }>
    ).filter((x) => x.userName === "slowsync.u@example.com");
    expect(platform.map((x) => x.active)).toEqual([false]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);
});
