import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, OKTA_SECRET, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;
let n = 0;
const unique = (s: string) => `${s}-${++n}-${Date.now().toString(36)}`;
/** An object nested `depth` levels deep, as JSON text: {"a":{"a":...1...}}. */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

beforeAll(async () => {
  t = await createHooksTestApp("hooks-deep");
});
afterAll(async () => {
  await t.close();
});

describe("deeply nested webhook bodies", () => {
  it("a signed event nested thousands deep (in a user's data, name or extension) is 400 invalidSyntax, stores nothing and leaves its webhook-id unused", async () => {
    const userName = `${unique("deep")}@example.com`;
    const bodies = [
      `{"type":"user.upserted","data":{"userName":"${userName}","name":${deep(10_000)}}}`,
      `{"type":"user.upserted","data":{"userName":"${userName}","${ENTERPRISE}":${deep(10_000)}}}`,
      `{"type":"user.upserted","data":{"userName":"${userName}","x":${deep(10_000)}}}`,
      `{"type":"user.upserted","data":${deep(10_000)}}`,
      // Just past the limit, and one good event beside the deep one in a batch.
      `{"events":[{"type":"user.upserted","data":{"userName":"${userName}"}},{"type":"user.upserted","data":{"userName":"x${userName}","name":${deep(40)}}}]}`,
    ];
    const notifiedBefore = t.notified.length;
    for (const raw of bodies) {
      const res = await t.postEvents(undefined, { raw, id: "msg_deep_1" });
      expect(res.status, raw.slice(0, 80)).toBe(400);
      expect(res.body).toEqual({
        error: { code: "invalidSyntax", message: "The body nests objects or arrays deeper than 32 levels" },
      });
    }
    expect(await t.user({ userName })).toBeNull();
    expect(await t.user({ userName: `x${userName}` })).toBeNull();
    expect(t.notified.length).toBe(notifiedBefore);

    // The refused deliveries did not use up their id: the sender's fixed retry is applied.
    const retry = await t.postEvents(
      { type: "user.upserted", data: { userName, name: { givenName: "Dee", familyName: "Pest" } } },
      { id: "msg_deep_1" },
    );
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ status: "applied", events: 1, changed: 1 });
    expect((await t.user({ userName }))?.resource.name).toEqual({ givenName: "Dee", familyName: "Pest" });
  });

  it("an Okta event nested thousands deep in its target list is applied (probe: only named fields are read, so no 500 and no limit)", async () => {
    const user = { id: `00u${unique("deep")}`, alternateId: `${unique("okta-deep")}@example.com` };
    const event = oktaEvent("user-lifecycle-create", { user });
    event.target.push({ type: "User" });
    const raw = JSON.stringify(oktaDelivery([event]))
      .replace('"detailEntry":null', `"detailEntry":${deep(5_000)}`)
      .replace('{"type":"User"}', `{"type":"User","id":${deep(5_000)}}`);
    expect(raw.length).toBeGreaterThan(50_000);
    const res = await t.request
      .post("/hooks/okta/okta")
      .set("Authorization", OKTA_SECRET)
      .set("Content-Type", "application/json")
      .send(raw);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, outcomes: { applied: 1 } });
    expect((await t.user({ externalId: user.id }))?.resource.userName).toBe(user.alternateId);
  });

  it("an Okta delivery whose bytes are not UTF-8 (a Latin-1 name) is 400 invalidSyntax and stores nothing", async () => {
    const user = { id: `00u${unique("latin")}`, alternateId: `${unique("zoe")}@example.com` };
    const text = JSON.stringify(oktaDelivery([oktaEvent("user-lifecycle-create", { user })]));
    const raw = Buffer.from(text.replace(user.alternateId, `Zo\u00eb-${user.alternateId}`), "latin1");
    const res = await t.request
      .post("/hooks/okta/okta")
      .set("Authorization", OKTA_SECRET)
      .set("Content-Type", "application/json")
      // superagent would JSON-encode a Buffer: hand the bytes over as they are.
      .serialize(() => raw as unknown as string)
      .send(raw);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: "invalidSyntax", message: "The body is not UTF-8" } });
    expect(await t.user({ externalId: user.id })).toBeNull();
  });
});
