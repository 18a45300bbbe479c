/**
 * Acceptance checks that fail today because of bugs in src/scim, src/directory or routes/scim
 * (owned elsewhere). Not committed by the acceptance engineer: the lead commits it with the fix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";
let t: ScimTestApp;
const q = (filter: string) => encodeURIComponent(filter);

async function createUser(body: Record<string, unknown>) {
  const res = await t.request
    .post(`${base}/Users`)
    .set(t.okta)
    .set("Content-Type", "application/scim+json")
    .send(JSON.stringify({ schemas: [USER], active: true, ...body }));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; meta: { version: string } };
}

beforeAll(async () => {
  t = await createScimTestApp("acceptance-pending");
});
afterAll(async () => {
  await t.close();
});

describe("SCIM edges found by the acceptance pass", () => {
  it('a filter `emails[type eq "work"].value eq "..."` (attribute path after a value filter) is understood', async () => {
    const user = await createUser({
      userName: "work.mail@example.com",
      emails: [
        { value: "w@work.example.com", type: "work" },
        { value: "h@home.example.com", type: "home" },
      ],
    });
    const hit = await t.request
      .get(`${base}/Users?filter=${q('emails[type eq "work"].value eq "w@work.example.com"')}`)
      .set(t.okta);
    expect(hit.status, JSON.stringify(hit.body)).toBe(200);
    expect(hit.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
    const home = await t.request
      .get(`${base}/Users?filter=${q('emails[type eq "work"].value eq "h@home.example.com"')}`)
      .set(t.okta);
    expect(home.status).toBe(200);
    expect(home.body.totalResults).toBe(0);
  });

  it("a 405 names the allowed methods in an Allow header (RFC 9110 §15.5.6)", async () => {
    const user = await createUser({ userName: "allow@example.com" });
    const options = await t.request.options(`${base}/Users`).set(t.okta);
    expect(options.status).toBe(405);
    expect(options.headers.allow).toMatch(/GET/);
    expect(options.headers.allow).toMatch(/POST/);
    const putCollection = await t.request
      .put(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send("{}");
    expect(putCollection.status).toBe(405);
    expect(putCollection.headers.allow).toMatch(/POST/);
    const postOne = await t.request
      .post(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send("{}");
    expect(postOne.status).toBe(405);
    expect(postOne.headers.allow).toMatch(/PATCH/);
  });

  it("a write that changes nothing keeps the version (ETag) and queues no sync", async () => {
    const user = await createUser({ userName: "same@example.com", displayName: "Same" });
    const notifiedBefore = t.notified.length;
    const send = (Operations: unknown[]) =>
      t.request
        .patch(`${base}/Users/${user.id}`)
        .set(t.okta)
        .set("Content-Type", "application/scim+json")
        .send(JSON.stringify({ schemas: [PATCH], Operations }));
    const empty = await send([]);
    expect(empty.status).toBe(200);
    expect(empty.body.meta.version).toBe(user.meta.version);
    const same = await send([{ op: "replace", path: "displayName", value: "Same" }]);
    expect(same.body.meta.version).toBe(user.meta.version);
    const got = await t.request.get(`${base}/Users/${user.id}`).set(t.okta);
    const put = await t.request
      .put(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify(got.body));
    expect(put.body.meta.version).toBe(user.meta.version);
    expect(t.notified.length).toBe(notifiedBefore);
  });

  it('a bearer token after more than one space is accepted (RFC 6750 §2.1: "Bearer" 1*SP b64token)', async () => {
    const res = await t.request.get(`${base}/Users?count=1`).set("Authorization", "Bearer  okta-token-123");
    expect(res.status).toBe(200);
  });

  it("an embed-tenant source refuses a group name the platform cannot hold (over 200 characters) at intake", async () => {
    const embed = await createScimTestApp("acceptance-pending-embed", {
      sources: { kc: { tokens: ["kc-token"], target: { embedTenant: "acme" } } },
    });
    try {
      const res = await embed.request
        .post("/scim/v2/kc/Groups")
        .set("Authorization", "Bearer kc-token")
        .set("Content-Type", "application/scim+json")
        .send(
          JSON.stringify({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            displayName: "L".repeat(201),
          }),
        );
      expect(res.status).toBe(400);
      expect(res.body.scimType).toBe("invalidValue");
    } finally {
      await embed.close();
    }
  });
});
