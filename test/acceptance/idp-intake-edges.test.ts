/**
 * Acceptance: the odd corners of real identity-provider traffic at the SCIM edge (intake only,
 * real Redis). Each case names the provider that sends it and what an identity admin expects,
 * citing RFC 7644 where it speaks.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
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
  return res.body as { id: string; userName: string; meta: { version: string } };
}

beforeAll(async () => {
  t = await createScimTestApp("acceptance-intake-edges");
});
afterAll(async () => {
  await t.close();
});

describe("lookups identity providers send", () => {
  let active: { id: string; userName: string };
  let inactive: { id: string };
  beforeAll(async () => {
    active = await createUser({
      userName: "grace.hopper@example.com",
      externalId: 'ext a"b\\c/é+&?=#%',
      emails: [
        { value: "grace@work.example.com", type: "work", primary: true },
        { value: "grace@home.example.com", type: "home" },
      ],
      name: { givenName: "Grace", familyName: "Hopper" },
    });
    inactive = await createUser({ userName: "idle.user@example.com", active: false });
  });

  it("Entra test connection: a filter on a random GUID is a 200 with zero results (RFC 7644 §3.4.2)", async () => {
    const res = await t.request.get(`${base}/Users?filter=${q(`userName eq "${randomUUID()}"`)}`).set(t.okta);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 0, Resources: [] });
  });

  it('PingFederate/OneLogin: `userName eq "x" and active eq true` matches only the active user', async () => {
    const hit = await t.request
      .get(`${base}/Users?filter=${q('userName eq "GRACE.hopper@example.com" and active eq true')}`)
      .set(t.okta);
    expect(hit.status, JSON.stringify(hit.body)).toBe(200);
    expect(hit.body.totalResults).toBe(1);
    expect(hit.body.Resources[0].id).toBe(active.id);
    const miss = await t.request
      .get(`${base}/Users?filter=${q('userName eq "idle.user@example.com" and active eq true')}`)
      .set(t.okta);
    expect(miss.status).toBe(200);
    expect(miss.body.totalResults).toBe(0);
    const inactiveHit = await t.request
      .get(`${base}/Users?filter=${q('userName eq "idle.user@example.com" and active eq false')}`)
      .set(t.okta);
    expect(inactiveHit.body.Resources.map((r: { id: string }) => r.id)).toEqual([inactive.id]);
  });

  it('`emails[type eq "work" and value eq "..."]` finds the user by the work email only (§3.4.2.2)', async () => {
    const hit = await t.request
      .get(`${base}/Users?filter=${q('emails[type eq "work" and value eq "GRACE@work.example.com"]')}`)
      .set(t.okta);
    expect(hit.status, JSON.stringify(hit.body)).toBe(200);
    expect(hit.body.Resources.map((r: { id: string }) => r.id)).toEqual([active.id]);
    const home = await t.request
      .get(`${base}/Users?filter=${q('emails[type eq "work" and value eq "grace@home.example.com"]')}`)
      .set(t.okta);
    expect(home.status).toBe(200);
    expect(home.body.totalResults).toBe(0);
  });

  it("`externalId eq` with quotes, backslashes and URL-special characters (JSON string escapes, §3.4.2.2)", async () => {
    const res = await t.request
      .get(`${base}/Users?filter=${q('externalId eq "ext a\\"b\\\\c/é+&?=#%"')}`)
      .set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.Resources.map((r: { id: string }) => r.id)).toEqual([active.id]);
  });

  it("startIndex=0 counts as 1 (§3.4.2.4)", async () => {
    const res = await t.request.get(`${base}/Users?startIndex=0&count=1`).set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.startIndex).toBe(1);
    expect(res.body.Resources).toHaveLength(1);
  });

  it("count=0 returns totalResults and no resources (§3.4.2.4)", async () => {
    const res = await t.request.get(`${base}/Users?count=0`).set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.totalResults).toBeGreaterThanOrEqual(2);
    expect(res.body.Resources ?? []).toEqual([]);
  });

  it("a very large count is capped, not refused", async () => {
    const res = await t.request.get(`${base}/Users?startIndex=1&count=100000000`).set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.totalResults).toBeGreaterThanOrEqual(2);
    expect(res.body.Resources.length).toBe(res.body.itemsPerPage);
  });

  it("attributes=userName returns id and userName, not the rest (§3.4.2.5)", async () => {
    const res = await t.request
      .get(`${base}/Users?filter=${q('userName eq "grace.hopper@example.com"')}&attributes=userName`)
      .set(t.okta);
    expect(res.status).toBe(200);
    const [r] = res.body.Resources;
    expect(r).toMatchObject({ id: active.id, userName: "grace.hopper@example.com" });
    expect(r).not.toHaveProperty("name");
    expect(r).not.toHaveProperty("emails");
  });

  it("a trailing slash (`/Users/`) lists like `/Users`", async () => {
    const res = await t.request.get(`${base}/Users/?count=1`).set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.schemas).toEqual([LIST]);
  });

  it("HEAD on a user answers like GET without a body", async () => {
    const res = await t.request.head(`${base}/Users/${active.id}`).set(t.okta);
    expect(res.status).toBe(200);
    expect(res.text ?? "").toBe("");
  });

  it("OPTIONS on a resource endpoint is a SCIM error, never a 5xx", async () => {
    const res = await t.request.options(`${base}/Users`).set(t.okta);
    expect(res.status).toBeGreaterThanOrEqual(200);
    expect(res.status).toBeLessThan(500);
    if (res.status >= 400) expect(res.body.schemas).toEqual([ERROR]);
  });

  it("a request without a token is refused before anything else (401, SCIM error)", async () => {
    const res = await t.request.get(`${base}/Users?filter=${q('userName eq "x"')}`);
    expect(res.status).toBe(401);
    expect(res.body.schemas).toEqual([ERROR]);
  });
});

describe("bodies and headers", () => {
  it("application/json without charset is accepted", async () => {
    const res = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ schemas: [USER], userName: "plain.json@example.com" }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it("application/scim+json; charset=utf-8 is accepted", async () => {
    const res = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json; charset=utf-8")
      .send(JSON.stringify({ schemas: [USER], userName: "scim.charset@example.com" }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
  });

  it("a UTF-8 byte order mark before the JSON is ignored (RFC 8259 §8.1 allows ignoring it)", async () => {
    const res = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(`\uFEFF${JSON.stringify({ schemas: [USER], userName: "bom@example.com" })}`);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it("a non-ASCII userName round-trips and is found by filter, case-insensitively", async () => {
    const user = await createUser({ userName: "Zoë.Ñúñez@exämple.com", displayName: "Zoë Ñúñez 山田" });
    const got = await t.request.get(`${base}/Users/${user.id}`).set(t.okta);
    expect(got.body.userName).toBe("Zoë.Ñúñez@exämple.com");
    expect(got.body.displayName).toBe("Zoë Ñúñez 山田");
    const found = await t.request
      .get(`${base}/Users?filter=${q('userName eq "zoë.ñúñez@exämple.com"')}`)
      .set(t.okta);
    expect(found.status).toBe(200);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
  });

  it("If-None-Match with the current ETag answers 304; with an old one 200 (§3.14, etag supported)", async () => {
    const user = await createUser({ userName: "etag.user@example.com" });
    const first = await t.request.get(`${base}/Users/${user.id}`).set(t.okta);
    const etag = first.headers.etag ?? first.body.meta.version;
    expect(etag).toBeTruthy();
    const same = await t.request.get(`${base}/Users/${user.id}`).set(t.okta).set("If-None-Match", etag);
    expect(same.status).toBe(304);
    const other = await t.request.get(`${base}/Users/${user.id}`).set(t.okta).set("If-None-Match", 'W/"999"');
    expect(other.status).toBe(200);
  });

  it("a PATCH with an empty Operations array changes nothing and is not a server error", async () => {
    const user = await createUser({ userName: "empty.patch@example.com", displayName: "Kept" });
    const res = await t.request
      .patch(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [] }));
    expect([200, 204, 400]).toContain(res.status);
    if (res.status === 400) expect(res.body.schemas).toEqual([ERROR]);
    const after = await t.request.get(`${base}/Users/${user.id}`).set(t.okta);
    expect(after.body.displayName).toBe("Kept");
  });

  it("the same user created twice at once: one 201, one 409 uniqueness (§3.3)", async () => {
    const body = JSON.stringify({ schemas: [USER], userName: "twice@example.com", active: true });
    const send = () =>
      t.request.post(`${base}/Users`).set(t.okta).set("Content-Type", "application/scim+json").send(body);
    const results = await Promise.all([send(), send(), send(), send()]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.scimType).toBe("uniqueness");
    const list = await t.request
      .get(`${base}/Users?filter=${q('userName eq "twice@example.com"')}`)
      .set(t.okta);
    expect(list.body.totalResults).toBe(1);
  });
});

describe("more lookups and errors", () => {
  it("PingFederate-style form encoding (`+` for spaces, %2B for a plus) and an upper-case operator", async () => {
    const user = await createUser({ userName: "a+b@example.com" });
    const plus = await t.request.get(`${base}/Users?filter=userName+eq+%22a%2Bb@example.com%22`).set(t.okta);
    expect(plus.status).toBe(200);
    expect(plus.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
    const upper = await t.request
      .get(`${base}/Users?filter=${q('userName EQ "A+B@example.com"')}`)
      .set(t.okta);
    expect(upper.body.totalResults).toBe(1);
  });

  it("POST /Users/.search answers like a GET list (§3.4.3)", async () => {
    const res = await t.request
      .post(`${base}/Users/.search`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
          filter: 'userName eq "a+b@example.com"',
          startIndex: 1,
          count: 10,
        }),
      );
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(1);
  });

  it("broken JSON is a 400 invalidSyntax and an oversized body a 413, both SCIM errors", async () => {
    const bad = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send("{not json");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [ERROR], scimType: "invalidSyntax" });
    const big = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({ schemas: [USER], userName: "big@example.com", displayName: "x".repeat(2_000_000) }),
      );
    expect(big.status).toBe(413);
    expect(big.body.schemas).toEqual([ERROR]);
  });

  it("deleting twice is 204 then 404; the userName is free again afterwards", async () => {
    const user = await createUser({ userName: "leaver@example.com" });
    expect((await t.request.delete(`${base}/Users/${user.id}`).set(t.okta)).status).toBe(204);
    expect((await t.request.delete(`${base}/Users/${user.id}`).set(t.okta)).status).toBe(404);
    expect((await t.request.get(`${base}/Users/${user.id}`).set(t.okta)).status).toBe(404);
    const lookup = await t.request
      .get(`${base}/Users?filter=${q('userName eq "leaver@example.com"')}`)
      .set(t.okta);
    expect(lookup.body.totalResults).toBe(0);
    const again = await createUser({ userName: "leaver@example.com" });
    expect(again.id).not.toBe(user.id);
  });

  it("a PATCH or PUT to an unknown id is a 404 SCIM error", async () => {
    const res = await t.request
      .patch(`${base}/Users/does-not-exist`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "replace", path: "active", value: false }],
        }),
      );
    expect(res.status).toBe(404);
    expect(res.body.schemas).toEqual([ERROR]);
  });

  it("a group naming an unknown member is refused with invalidValue, not half-applied", async () => {
    const res = await t.request
      .post(`${base}/Groups`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
          displayName: "Ghost members",
          members: [{ value: "no-such-user" }],
        }),
      );
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidValue");
    const list = await t.request
      .get(`${base}/Groups?filter=${q('displayName eq "Ghost members"')}`)
      .set(t.okta);
    expect(list.body.totalResults).toBe(0);
  });
});

describe("PATCH without a path, value keys as paths (Entra, PingFederate)", () => {
  it("value keys may be attribute paths, value-filter paths or URN-qualified paths (§3.5.2.1)", async () => {
    const user = await createUser({
      userName: "nopath@example.com",
      emails: [{ value: "a@example.com", type: "work" }],
    });
    const send = (Operations: unknown[]) =>
      t.request
        .patch(`${base}/Users/${user.id}`)
        .set(t.okta)
        .set("Content-Type", "application/scim+json")
        .send(JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations }));
    const add = await send([
      { op: "add", value: { 'emails[type eq "work"].value': "b@example.com", "name.givenName": "Ann" } },
    ]);
    expect(add.status, JSON.stringify(add.body)).toBe(200);
    expect(add.body.emails).toEqual([{ value: "b@example.com", type: "work" }]);
    expect(add.body.name).toEqual({ givenName: "Ann" });
    const urn = await send([
      {
        op: "replace",
        value: {
          "urn:ietf:params:scim:schemas:core:2.0:User:name.familyName": "Zed",
          "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department": "Ops",
        },
      },
    ]);
    expect(urn.status, JSON.stringify(urn.body)).toBe(200);
    expect(urn.body.name).toEqual({ givenName: "Ann", familyName: "Zed" });
    expect(urn.body["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]).toEqual({
      department: "Ops",
    });
  });
});
