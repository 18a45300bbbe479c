/**
 * End-to-end probes of the webhook intake, as an identity admin's (or an attacker's) deliveries
 * reach the platform: a signing secret too short to authenticate anything, Okta batches whose
 * events about one user arrive out of `published` order, and a deactivation and an activation in
 * one batch.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

const OKTA_SECRET = "e2e-okta-hook-probe-secret";
/** Decodes to no bytes at all: an HMAC under it is one anybody can compute. */
const EMPTY_KEY_SECRET = "whsec_A";
/** Decodes to three bytes: an online guess of the key is a matter of hours. */
const SHORT_KEY_SECRET = "whsec_AAAA";
/** Four bytes ("test"): weak, but no longer guessable online; a test setup's secret still works. */
const FOUR_BYTE_SECRET = `whsec_${Buffer.from("test").toString("base64")}`;

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("e2e-hook-probes", {
    sources: {
      okta: { tokens: ["okta-token"], hooks: { okta: { secret: OKTA_SECRET } } },
      weak: { tokens: ["weak-token"], hooks: { events: { secret: EMPTY_KEY_SECRET } } },
      short: { tokens: ["short-token"], hooks: { events: { secret: SHORT_KEY_SECRET } } },
      four: { tokens: ["four-token"], hooks: { events: { secret: FOUR_BYTE_SECRET } } },
    },
  });
});

afterAll(async () => {
  await h?.close();
});

function postOkta(events: unknown[]) {
  return h.http
    .post("/hooks/okta/okta")
    .set("Authorization", OKTA_SECRET)
    .set("Content-Type", "application/json")
    .send(JSON.stringify(oktaDelivery(events)));
}

/** Signs with the raw key bytes given (what a forger who guessed or computed the key sends). */
function postSignedWithKey(source: string, key: Buffer, body: unknown) {
  const raw = JSON.stringify(body);
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const ts = Math.floor(Date.now() / 1000);
  const sig = createHmac("sha256", key).update(`${id}.${ts}.${raw}`).digest("base64");
  return h.http
    .post(`/hooks/${source}/events`)
    .set("Content-Type", "application/json")
    .set("webhook-id", id)
    .set("webhook-timestamp", String(ts))
    .set("webhook-signature", `v1,${sig}`)
    .send(raw);
}

describe("signed events: a secret too short to authenticate", () => {
  it("a delivery signed under an empty or 3-byte key is refused and provisions nobody", async () => {
    for (const [source, key] of [
      ["weak", Buffer.alloc(0)],
      ["short", Buffer.alloc(3)],
    ] as const) {
      const res = await postSignedWithKey(source, key, {
        type: "user.upserted",
        data: {
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: `forged-${source}@example.com`,
          active: true,
        },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      const listed = await h.http
        .get(`/scim/v2/${source}/Users`)
        .set("Authorization", `Bearer ${source}-token`);
      expect(listed.body.totalResults).toBe(0);
    }
    await h.waitForIdle();
    expect(h.platformUsers().get("forged-weak@example.com")).toBeUndefined();
    expect(h.platformUsers().get("forged-short@example.com")).toBeUndefined();
  });

  it("a 4-byte key is the floor: a delivery signed with it applies", async () => {
    const res = await postSignedWithKey("four", Buffer.from("test"), {
      type: "user.upserted",
      data: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "four@example.com" },
    });
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get("four@example.com")?.active).toBe(true);
  });
});

describe("Okta batches out of published order reach the platform in the newest state", () => {
  // (A profile update delivered before the user's create is not remembered: docs/webhooks.md.)
  it("the create, then a deactivation, an older activation and an older profile update: inactive, renamed", async () => {
    const user = { id: "00uProbeOrder01", alternateId: "order@example.com", displayName: "Order" };
    const t0 = Date.now() - 60_000;
    const res = await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: t0 }),
      oktaEvent("user-lifecycle-deactivate", { user, published: t0 + 30 }),
      oktaEvent("user-lifecycle-activate", { user, published: t0 + 20 }),
      oktaEvent("user-account-update-profile", {
        user: { ...user, displayName: "Order Renamed" },
        published: t0 + 10,
      }),
    ]);
    expect(res.status).toBe(200);
    // A batch is applied in `published` order: create, profile update, activation, deactivation.
    expect(res.body.outcomes).toEqual({ applied: 4 });
    await h.waitForIdle();
    expect(h.platformUsers().get("order@example.com")).toMatchObject({
      active: false,
      displayName: "Order Renamed",
    });
  });

  it("a deactivation then an activation in one batch leaves the user active; the other order inactive", async () => {
    const t0 = Date.now() - 60_000;
    const up = { id: "00uProbeUp0001", alternateId: "up@example.com", displayName: "Up" };
    const down = { id: "00uProbeDown01", alternateId: "down@example.com", displayName: "Down" };
    for (const user of [up, down]) {
      const created = await postOkta([
        oktaEvent("user-lifecycle-create", { user, published: t0 }),
        oktaEvent("user-lifecycle-activate", { user, published: t0 + 5 }),
      ]);
      expect(created.status).toBe(200);
    }
    await h.waitForIdle();
    const res = await postOkta([
      oktaEvent("user-lifecycle-deactivate", { user: up, published: t0 + 10 }),
      oktaEvent("user-lifecycle-activate", { user: up, published: t0 + 20 }),
      // Delivered in this order, published the other way round: the deactivation is the newer.
      oktaEvent("user-lifecycle-deactivate", { user: down, published: t0 + 20 }),
      oktaEvent("user-lifecycle-activate", { user: down, published: t0 + 10 }),
    ]);
    expect(res.status).toBe(200);
    // Applied in `published` order: down's older activation finds it active (unchanged).
    expect(res.body.outcomes).toEqual({ applied: 3, unchanged: 1 });
    await h.waitForIdle();
    expect(h.platformUsers().get("up@example.com")?.active).toBe(true);
    expect(h.platformUsers().get("down@example.com")?.active).toBe(false);
  });
});
