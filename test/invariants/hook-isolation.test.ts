import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

const secretOf = (source: string) => `${source}-okta-hook-secret`;
const signingOf = (source: string) =>
  `whsec_${Buffer.from(`${source} signing key, 32 bytes long`.padEnd(32, "!")).toString("base64")}`;

/**
 * Invariant 5 through the webhook intake: a source's hook secret is good for that source only,
 * and a deactivation delivered to one source never reaches another source's user of the same
 * login, in the directory or on the platform.
 */
describe("webhooks are isolated per source", () => {
  let h: TestBridge;
  beforeAll(async () => {
    const hooks = (s: string) => ({ okta: { secret: secretOf(s) }, events: { secret: signingOf(s) } });
    h = await startTestBridge("inv-hooks", {
      sources: {
        okta: { tokens: ["okta-token"], hooks: hooks("okta") },
        entra: { tokens: ["entra-token"], hooks: hooks("entra") },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const postOkta = (source: string, secret: string, events: unknown[]) =>
    h.http
      .post(`/hooks/${source}/okta`)
      .set("Authorization", secret)
      .set("Content-Type", "application/json")
      .send(JSON.stringify(oktaDelivery(events)));
  const postEvents = (source: string, secret: string, body: unknown) => {
    const raw = JSON.stringify(body);
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const ts = Math.floor(Date.now() / 1000);
    return h.http
      .post(`/hooks/${source}/events`)
      .set("Content-Type", "application/json")
      .set("webhook-id", id)
      .set("webhook-timestamp", String(ts))
      .set("webhook-signature", signWebhook(secret, id, ts, raw))
      .send(raw);
  };

  it("another source's secret is refused and changes nothing", async () => {
    const user = { id: "00uIsoUser0001", alternateId: "iso@example.com", displayName: "Iso" };
    const okta = await postOkta("entra", secretOf("okta"), [oktaEvent("user-lifecycle-create", { user })]);
    expect(okta.status).toBe(401);
    const events = await postEvents("entra", signingOf("okta"), {
      type: "user.upserted",
      data: {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: "iso@example.com",
        active: true,
      },
    });
    expect(events.status).toBe(401);
    await h.waitForIdle();
    const listed = await h
      .scim("entra")
      .get(`/Users?filter=${encodeURIComponent('userName eq "iso@example.com"')}`);
    expect(listed.body.totalResults).toBe(0);
    expect(h.platformUsers().get("iso@example.com")).toBeUndefined();
  });

  it("a deactivation for one source leaves the same login at another source alone", async () => {
    await h.scim("entra").createUser("twin@example.com");
    await h.waitForIdle();
    const user = { id: "00uTwinUser001", alternateId: "twin@example.com", displayName: "Twin" };
    const t0 = Date.now() - 60_000;
    const res = await postOkta("okta", secretOf("okta"), [
      oktaEvent("user-lifecycle-create", { user, published: t0 }),
      oktaEvent("user-lifecycle-deactivate", { user, published: t0 + 10 }),
      oktaEvent("user-lifecycle-delete-initiated", { user, published: t0 + 20 }),
    ]);
    expect(res.status).toBe(200);
    const signed = await postEvents("okta", signingOf("okta"), {
      type: "user.deleted",
      data: { userName: "twin@example.com" },
    });
    expect(signed.status).toBeLessThan(300);
    await h.waitForIdle();
    const entra = await h
      .scim("entra")
      .get(`/Users?filter=${encodeURIComponent('userName eq "twin@example.com"')}`);
    expect(entra.body.totalResults).toBe(1);
    expect(entra.body.Resources[0].active).toBe(true);
    const twins = h.emulator
      .state()
      .users.filter((u) => String(u.userName).toLowerCase() === "twin@example.com");
    expect(twins.map((u) => u.active)).toEqual([true]);
  });
});
