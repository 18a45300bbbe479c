/**
 * The hooks routes and the SCIM intake of a source share one rate-limit bucket
 * (`<prefix>:ratelimit:<source>`). Only authenticated requests may spend it: a flood without the
 * Okta secret or a valid webhook signature is 401 to the last request and leaves the source's
 * provisioning untouched. An authenticated flood is 429 in the hooks' JSON error format.
 * The whole bridge (startBridge's wiring), a rate of 2 a second (burst 4).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Response } from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";

const OKTA_SECRET = "okta-hook-secret-for-rate-limit";
const EVENTS_SECRET = `whsec_${Buffer.from("rate limit events key, 32 bytes!").toString("base64")}`;
const WRONG_EVENTS_SECRET = `whsec_${Buffer.from("not the key of this source at all").toString("base64")}`;
const FLOOD = 30;

const source = (id: string) => ({
  tokens: [`${id}-token`],
  hooks: { okta: { secret: OKTA_SECRET }, events: { secret: EVENTS_SECRET } },
  rateLimit: { requestsPerSecond: 2 },
});

let h: TestBridge;
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });

beforeAll(async () => {
  await redis.connect();
  h = await startTestBridge("hooks-intake-rate-limit", {
    sources: {
      "events-flood": source("events-flood"),
      "okta-flood": source("okta-flood"),
      busy: source("busy"),
    },
  });
});
afterAll(async () => {
  await h?.close();
  await redis.quit();
});

const bucketExists = (id: string) => redis.exists(`${h.prefix}:ratelimit:${id}`);

function postEvents(id: string, body: unknown, secret = EVENTS_SECRET) {
  const raw = JSON.stringify(body);
  const msgId = `msg_${randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  return h.http
    .post(`/hooks/${id}/events`)
    .set("Content-Type", "application/json")
    .set("webhook-id", msgId)
    .set("webhook-timestamp", String(timestamp))
    .set("webhook-signature", signWebhook(secret, msgId, timestamp, raw))
    .send(raw);
}

const userUpsert = () => ({
  type: "user.upserted",
  data: { userName: `rl-${randomUUID().slice(0, 8)}@example.com`, active: true },
});

function postOkta(id: string, secret = OKTA_SECRET) {
  const n = randomUUID().slice(0, 8);
  const body = oktaDelivery([
    oktaEvent("user-lifecycle-create", {
      user: { id: `00u${n}`, alternateId: `okta-${n}@example.com`, displayName: `Okta ${n}` },
    }),
  ]);
  return h.http
    .post(`/hooks/${id}/okta`)
    .set("Authorization", secret)
    .set("Content-Type", "application/json")
    .send(JSON.stringify(body));
}

const statuses = (responses: Response[]) => responses.map((r) => r.status);

/** The source still provisions: a signed delivery, a SCIM request and an Okta delivery (3 of its 4 tokens). */
async function expectSourceServed(id: string): Promise<void> {
  expect((await postEvents(id, userUpsert())).status).toBe(200);
  const scim = await h.scim(id).get("/Users?count=1");
  expect(scim.status).toBe(200);
  expect((await postOkta(id)).status).toBe(200);
}

describe("the hooks spend a source's intake bucket only once authenticated", () => {
  it("an unsigned or mis-signed flood of /hooks/<source>/events is all 401; the source then still provisions", async () => {
    const unsigned = Array.from({ length: FLOOD / 2 }, () =>
      h.http.post("/hooks/events-flood/events").set("Content-Type", "application/json").send("{}"),
    );
    const misSigned = Array.from({ length: FLOOD / 2 }, () =>
      postEvents("events-flood", userUpsert(), WRONG_EVENTS_SECRET),
    );
    const answers = await Promise.all([...unsigned, ...misSigned]);
    expect(statuses(answers)).toEqual(Array(FLOOD).fill(401));
    for (const res of answers) expect(res.body.error.code).toBe("unauthorized");
    expect(await bucketExists("events-flood")).toBe(0);

    await expectSourceServed("events-flood");
  });

  it("a bad-secret flood of /hooks/<source>/okta (POST and the verification GET) is all 401; the source then still provisions", async () => {
    const posts = Array.from({ length: FLOOD }, (_, i) =>
      i % 3 === 0
        ? h.http.post("/hooks/okta-flood/okta").set("Content-Type", "application/json").send("{}")
        : postOkta("okta-flood", `wrong-${i}`),
    );
    const gets = Array.from({ length: 10 }, () =>
      h.http
        .get("/hooks/okta-flood/okta")
        .set("Authorization", "wrong")
        .set("X-Okta-Verification-Challenge", "c"),
    );
    const answers = await Promise.all([...posts, ...gets]);
    expect(statuses(answers)).toEqual(Array(FLOOD + 10).fill(401));
    expect(await bucketExists("okta-flood")).toBe(0);

    await expectSourceServed("okta-flood");
  });

  it("an authenticated flood gets 429 with Retry-After in the hooks' JSON error format (SCIM keeps its SCIM body)", async () => {
    const events = await Promise.all(
      Array.from({ length: FLOOD }, () => postEvents("busy", { type: "ping" })),
    );
    const okta = await Promise.all(Array.from({ length: 10 }, () => postOkta("busy")));
    const answers = [...events, ...okta];
    expect(statuses(answers).every((s) => s === 200 || s === 429)).toBe(true);
    // A burst of 4 and 2 a second: most of the flood is refused, on both hooks.
    expect(statuses(events).filter((s) => s === 429).length).toBeGreaterThanOrEqual(FLOOD - 10);
    expect(statuses(okta).filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    for (const res of answers.filter((r) => r.status === 429)) {
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(res.body).toEqual({
        error: { code: "rate_limited", message: expect.stringMatching(/busy.*retry after \d+ s/) },
      });
    }

    const scim = await h.scim("busy").get("/Users?count=1");
    expect(scim.status).toBe(429);
    expect(scim.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(Number(scim.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(scim.text)).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      status: "429",
    });
  });
});
