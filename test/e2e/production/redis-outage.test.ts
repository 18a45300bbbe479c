import { signWebhook } from "../../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../../helpers/throwaway-redis.js";

const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const BEFORE = 40;
const OKTA_SECRET = "outage-okta-hook-secret";
const EVENTS_SECRET = `whsec_${Buffer.from("outage signing key, 32 bytes long").toString("base64")}`;

/**
 * Hardening (issue 7): a real redis-server with AOF (fsync always) on a spare port is killed while
 * the bridge holds acknowledged but not yet synced writes. While it is down the intake answers 503
 * with a SCIM error body at once; when it comes back on the same port and directory, the workers
 * resume by themselves and every acknowledged write reaches the platform.
 */
describe("Redis outage", () => {
  let redis: ThrowawayRedis;
  let t: TestBridge;

  beforeAll(async () => {
    redis = await ThrowawayRedis.start({ aof: true });
    t = await startTestBridge("outage", {
      // Slow platform answers keep most acknowledged writes unsynced when Redis dies.
      faults: [{ type: "slow", delayMs: 150 }],
      sources: {
        okta: {
          tokens: ["okta-token"],
          hooks: { okta: { secret: OKTA_SECRET }, events: { secret: EVENTS_SECRET } },
        },
      },
      config: {
        redis: { url: redis.url, prefix: "{outage}" },
        sync: {
          concurrency: 2,
          attempts: 8,
          lifecycleBatchWindowMs: 50,
          sweepIntervalMs: 300,
          sweepAfterMs: 500,
        },
      },
    });
  });

  afterAll(async () => {
    await t?.close();
    await redis?.dispose();
  });

  const userNames = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `outage.user${from + i}@example.com`);

  it("answers 503 at once while Redis is down, and delivers everything acknowledged once it is back", async () => {
    const acknowledged = userNames(0, BEFORE);
    const ids: string[] = [];
    for (const userName of acknowledged) ids.push((await t.scim("okta").createUser(userName)).id);
    expect((await t.http.get("/readyz")).status).toBe(200);
    // The outage must land while acknowledged work is still pending.
    expect(t.platformUsers().size).toBeLessThan(BEFORE);

    await redis.stop();

    const token = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const attempts: Array<[string, () => PromiseLike<{ status: number; body: Record<string, unknown> }>]> = [
      [
        "create",
        () =>
          t.http
            .post("/scim/v2/okta/Users")
            .set(token)
            .send({ schemas: [USER_SCHEMA], userName: "down@example.com" }),
      ],
      ["list", () => t.http.get("/scim/v2/okta/Users?count=5").set(token)],
      ["read", () => t.http.get(`/scim/v2/okta/Users/${ids[0]}`).set(token)],
      ["patch", () => t.scim("okta").patchUser(ids[1]!, [{ op: "replace", path: "active", value: false }])],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [what, attempt] of attempts) {
        const started = Date.now();
        const res = await attempt();
        expect(Date.now() - started, what).toBeLessThan(500);
        expect(res.status, what).toBe(503);
        expect(res.body.schemas).toEqual([SCIM_ERROR]);
        expect(res.body.status).toBe("503");
      }
    }
    // The webhook intake answers 503 at once too (the identity provider delivers again later).
    const hookAttempts: Array<[string, () => PromiseLike<{ status: number }>]> = [
      [
        "okta hook",
        () =>
          t.http
            .post("/hooks/okta/okta")
            .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json" })
            .send(JSON.stringify(oktaDelivery([oktaEvent("user-lifecycle-create")]))),
      ],
      [
        "signed event",
        () => {
          const raw = JSON.stringify({
            type: "user.upserted",
            data: { schemas: [USER_SCHEMA], userName: "down.hook@example.com", externalId: "down-hook" },
          });
          const ts = Math.floor(Date.now() / 1000);
          return t.http
            .post("/hooks/okta/events")
            .set({
              "Content-Type": "application/json",
              "webhook-id": `msg_${ts}`,
              "webhook-timestamp": String(ts),
            })
            .set("webhook-signature", signWebhook(EVENTS_SECRET, `msg_${ts}`, ts, raw))
            .send(raw);
        },
      ],
    ];
    for (const [what, attempt] of hookAttempts) {
      const started = Date.now();
      const res = await attempt();
      expect(Date.now() - started, what).toBeLessThan(500);
      expect(res.status, what).toBe(503);
    }
    // The admin API says what is wrong: 503 naming Redis, not a 500 "internal".
    const started = Date.now();
    const status = await t.admin().get("/status");
    expect(Date.now() - started, "admin status").toBeLessThan(5_000);
    expect(status.status).toBe(503);
    expect(status.body.error).toMatchObject({ code: "unavailable" });
    expect(status.body.error.message).toMatch(/Redis\)? is unavailable/);
    const ready = await t.http.get("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body.failing).toContain("redis");
    expect((await t.http.get("/healthz")).status).toBe(200);

    await redis.start();
    await waitFor(async () => (await t.http.get("/readyz")).status === 200, {
      timeoutMs: 10_000,
      what: "readiness to return with Redis",
    });
    // New writes are taken again, and reach the platform like the old ones.
    const after = userNames(BEFORE, 5);
    for (const userName of after) await t.scim("okta").createUser(userName);

    await waitFor(
      () => {
        const users = t.platformUsers();
        return [...acknowledged, ...after].every((u) => users.has(u));
      },
      { timeoutMs: 15_000, what: "every acknowledged user on the platform" },
    );
    await t.waitForIdle(10_000);
    expect(t.platformUsers().has("down@example.com")).toBe(false);
    expect(t.platformUsers().size).toBe(BEFORE + after.length);
  }, 30_000);
});
