/**
 * Acceptance probes of the SCIM intake with requests as identity providers' HTTP clients put them
 * on the wire (intake only, real Redis). Each case names who sends it and what an identity admin
 * expects, citing the RFC where it speaks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.${++n}@example.com`;

beforeAll(async () => {
  t = await createScimTestApp("acceptance-idp-probes-a");
});
afterAll(async () => {
  await t.close();
});

const send = (method: "post" | "put" | "patch", path: string, body: unknown) =>
  t.send(method, `${base}${path}`, body);

async function createUser(extra: Record<string, unknown> = {}) {
  const res = await send("post", "/Users", { schemas: [USER], userName: unique("user"), ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; userName: string } & Record<string, unknown>;
}

const ids = (res: { body: { Resources?: { id: string }[] } }) => (res.body.Resources ?? []).map((r) => r.id);

describe("a `+` in a filter whose spaces are percent-encoded", () => {
  it("is a plus: `userName%20eq%20%22a+b@...%22` finds a+b@... (RFC 3986: only form encoding makes `+` a space)", async () => {
    // What fetch, WHATWG URL and Java URI builders send for `userName eq "a+b@example.com"`: the
    // spaces and quotes percent-encoded, the `+` left as it is.
    const user = await createUser({ userName: "first+tag@example.com" });
    const raw = await t.request
      .get(`${base}/Users?filter=userName%20eq%20%22first+tag@example.com%22&startIndex=1&count=100`)
      .set(t.okta);
    expect(raw.status, JSON.stringify(raw.body)).toBe(200);
    expect(ids(raw)).toEqual([user.id]);
    const url = new URL(`http://bridge.example${base}/Users`);
    url.search = 'filter=userName eq "first+tag@example.com"';
    expect(url.search).toContain("%20eq%20");
    const whatwg = await t.request.get(`${url.pathname}${url.search}`).set(t.okta);
    expect(ids(whatwg)).toEqual([user.id]);
  });

  it("form encoding still reads `+` as a space and `%2B` as a plus (PingFederate)", async () => {
    const user = await createUser({ userName: "second+tag@example.com" });
    const form = await t.request
      .get(`${base}/Users?filter=userName+eq+%22second%2Btag@example.com%22`)
      .set(t.okta);
    expect(ids(form)).toEqual([user.id]);
  });
});

describe("PATCH of a complex attribute with a null sub-attribute (RFC 7644 §3.5.2.3, RFC 7643 §2.5)", () => {
  const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
  const patch = (id: string, Operations: unknown[]) =>
    send("patch", `/Users/${id}`, { schemas: [PATCH], Operations });
  const named = () => createUser({ name: { givenName: "Ada", familyName: "Lovelace", middleName: "King" } });

  it("replace `name` with `{givenName: null}` clears givenName only; the other parts stay", async () => {
    const user = await named();
    const res = await patch(user.id, [{ op: "replace", path: "name", value: { givenName: null } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ familyName: "Lovelace", middleName: "King" });
  });

  it("a null beside a new value clears that sub-attribute while the other is set", async () => {
    const user = await named();
    const res = await patch(user.id, [
      { op: "replace", path: "name", value: { givenName: null, familyName: "Byron" } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ familyName: "Byron", middleName: "King" });
  });

  it("the same as a no-path replace (Okta, Google Workspace)", async () => {
    const user = await named();
    const res = await patch(user.id, [{ op: "replace", value: { name: { middleName: null } } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "Ada", familyName: "Lovelace" });
    const got = await t.request.get(`${base}/Users/${user.id}`).set(t.okta);
    expect(got.body.name).toEqual({ givenName: "Ada", familyName: "Lovelace" });
  });
});

describe("member objects with attribute names in another case (RFC 7643 §2.1: names are case-insensitive)", () => {
  const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
  const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

  it('a group PATCH adding and removing `{"Value": id}` members changes them as `{"value": id}` does', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const created = await send("post", "/Groups", {
      schemas: [GROUP],
      displayName: "Case Members",
      Members: [{ Value: a.id }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const gid = created.body.id as string;
    const add = await send("patch", `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: "Add", path: "members", value: [{ Value: b.id, Display: "b" }] }],
    });
    expect(add.status, JSON.stringify(add.body)).toBe(204);
    const remove = await send("patch", `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: "Remove", path: "members", value: [{ VALUE: a.id }] }],
    });
    expect(remove.status, JSON.stringify(remove.body)).toBe(204);
    const got = await t.request.get(`${base}/Groups/${gid}`).set(t.okta);
    expect(got.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
    const replace = await send("patch", `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: `members[value eq "${b.id}"]`, value: [{ Value: a.id }] }],
    });
    expect(replace.status, JSON.stringify(replace.body)).toBe(204);
    const after = await t.request.get(`${base}/Groups/${gid}`).set(t.okta);
    expect(after.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
  });
});

describe("attributes= naming sub-attributes a resource lacks (RFC 7643 §2.5: no empty values returned)", () => {
  it("leaves out `name` and the elements of `emails` that hold none of the named sub-attributes", async () => {
    const user = await createUser({
      name: { familyName: "Hopper" },
      emails: [{ value: "g@example.com" }, { value: "h@example.com", type: "home" }],
    });
    const res = await t.request
      .get(`${base}/Users/${user.id}?attributes=name.givenName,emails.type`)
      .set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("name");
    expect(res.body.emails).toEqual([{ type: "home" }]);
    const none = await t.request.get(`${base}/Users/${user.id}?attributes=emails.display`).set(t.okta);
    expect(none.body).not.toHaveProperty("emails");
  });
});

describe("every answer under /scim/v2/ is a SCIM error body (RFC 7644 §3.12)", () => {
  it("a source segment that is not valid percent-encoding, or empty, is a SCIM 404", async () => {
    for (const path of ["/scim/v2/%ZZ/Users", "/scim/v2//okta/Users"]) {
      const res = await t.request.get(path).set(t.okta);
      expect(res.status, path).toBe(404);
      expect(res.body.schemas, path).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    }
  });
});

describe('extension attributes written with "." after the schema URN (Entra ID\'s customappsso jobs)', () => {
  const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
  const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

  it("`<urn>.department` in a PATCH path, a no-path key and a filter is `<urn>:department`", async () => {
    const user = await createUser();
    const add = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: "Add", path: `${ENT}.department`, value: "Ops" },
        { op: "Replace", value: { [`${ENT}.employeeNumber`]: "7" } },
      ],
    });
    expect(add.status, JSON.stringify(add.body)).toBe(200);
    expect(add.body[ENT]).toEqual({ department: "Ops", employeeNumber: "7" });
    const found = await t.request
      .get(`${base}/Users?filter=${encodeURIComponent(`${ENT}.department eq "ops"`)}`)
      .set(t.okta);
    expect(ids(found)).toEqual([user.id]);
  });
});

describe("a body that is not UTF-8 (RFC 7644 §3.8, RFC 8259 §8.1)", () => {
  // Windows PowerShell 5.1's Invoke-RestMethod sends a string body as ISO-8859-1 unless told
  // otherwise: an HR script's "Zoë" arrives as the single byte 0xEB.
  const latin1 = (body: unknown) => Buffer.from(JSON.stringify(body), "latin1");

  it("is refused with 400 invalidSyntax, not stored with U+FFFD in place of each accented letter", async () => {
    const userName = unique("zoe");
    for (const type of ["application/json", "application/scim+json; charset=utf-8"]) {
      const res = await t.request
        .post(`${base}/Users`)
        .set(t.okta)
        .set("Content-Type", type)
        .serialize((b: Buffer) => b as unknown as string)
        .send(latin1({ schemas: [USER], userName, displayName: "Zoë Núñez" }) as unknown as object);
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body).toMatchObject({ scimType: "invalidSyntax" });
    }
    const found = await t.request
      .get(`${base}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)
      .set(t.okta);
    expect(found.body.totalResults).toBe(0);
  });

  it("the same body sent as UTF-8 is stored as sent", async () => {
    const res = await send("post", "/Users", {
      schemas: [USER],
      userName: unique("zoe"),
      displayName: "Zoë Núñez",
    });
    expect(res.status).toBe(201);
    expect(res.body.displayName).toBe("Zoë Núñez");
  });
});

describe("PATCH add of nothing to a multi-valued attribute (RFC 7644 §3.5.2.1: add adds values)", () => {
  const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
  const emails = [{ value: "kept@example.com", type: "work", primary: true }];

  it("`add` of [] or null, with a path or without, leaves the user's emails as they were", async () => {
    for (const op of [
      { op: "add", path: "emails", value: [] },
      { op: "Add", path: "emails", value: null },
      { op: "add", path: "emails", value: [null] },
      { op: "add", value: { emails: [] } },
    ]) {
      const user = await createUser({ emails });
      const res = await send("patch", `/Users/${user.id}`, { schemas: [PATCH], Operations: [op] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.emails, JSON.stringify(op)).toEqual(emails);
    }
  });

  it("`replace` with [] still clears them (RFC 7643 §2.5: [] is unassigned)", async () => {
    const user = await createUser({ emails });
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "emails", value: [] }],
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("emails");
  });
});

describe("a null for a filtered element that does not exist (Entra clearing an attribute)", () => {
  const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

  it('replace `emails[type eq "work"].value` with null on a user without a work email creates nothing', async () => {
    const user = await createUser({ emails: [{ value: "home@example.com", type: "home" }] });
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: "Replace", path: 'emails[type eq "work"].value', value: null },
        { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: null },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "home@example.com", type: "home" }]);
    expect(res.body).not.toHaveProperty("phoneNumbers");
  });
});

describe("remove of a sub-attribute of filtered elements that are not there", () => {
  it("is a no-op on a group too: nothing stored, the version stays (RFC 7644 §3.5.2.2)", async () => {
    const created = await send("post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "No-op removes",
    });
    expect(created.status).toBe(201);
    const gid = created.body.id as string;
    const res = await send("patch", `/Groups/${gid}?excludedAttributes=members`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "remove", path: 'emails[type eq "work"].value' }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("emails");
    expect(res.body.meta.version).toBe(created.body.meta.version);
  });
});
