/**
 * Acceptance probes (round e) of the SCIM intake with requests as identity providers' HTTP
 * clients put them on the wire (intake only, real Redis). Each case names who sends it and what
 * an identity admin expects, citing the RFC where it speaks. Earlier rounds: idp-probes-a,
 * idp-probes-d, idp-intake-edges, scim-edges, idp-dialects-e2e, e2e/probes-c.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("acceptance-idp-probes-e");
});
afterAll(async () => {
  await t.close();
});

const send = (
  method: "post" | "put" | "patch",
  path: string,
  body: unknown,
  type = "application/scim+json",
) => t.request[method](`${base}${path}`).set(t.okta).set("Content-Type", type).send(JSON.stringify(body));
const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

async function createUser(extra: Record<string, unknown> = {}) {
  const res = await send("post", "/Users", { schemas: [USER], userName: unique("user"), ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;
}

async function createGroup(
  displayName: string,
  memberIds: string[] = [],
  extra: Record<string, unknown> = {},
) {
  const res = await send("post", "/Groups", {
    schemas: [GROUP],
    displayName,
    members: memberIds.map((value) => ({ value })),
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; meta: { version: string } } & Record<string, unknown>;
}

const ids = (res: { body: { Resources?: { id: string }[] } }) => (res.body.Resources ?? []).map((r) => r.id);
const memberIds = async (gid: string) => {
  const res = await get(`/Groups/${gid}`);
  return ((res.body.members ?? []) as { value: string }[]).map((m) => m.value).sort();
};

describe("PATCH paths on users (RFC 7644 §3.5.2)", () => {
  it("Okta/OneLogin: replace `name.givenName` on a user without a name creates the name (§3.5.2.3: a missing target is added)", async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [{ op: "replace", path: "name.givenName", value: "Ada" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "Ada" });
  });

  it("add with path `name` merges into the existing name (§3.5.2.1: sub-attributes given replace theirs, others stay)", async () => {
    const user = await createUser({ name: { givenName: "Ada", familyName: "Lovelace" } });
    const res = await patch(`/Users/${user.id}`, [
      { op: "add", path: "name", value: { middleName: "King", givenName: "Augusta" } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "Augusta", familyName: "Lovelace", middleName: "King" });
  });

  it("add of an email the user already has (same address in another case) does not duplicate it (§3.5.2.1: values already present are not added again)", async () => {
    const email = unique("dup.mail");
    const user = await createUser({ emails: [{ value: email, type: "work", primary: true }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "add", path: "emails", value: [{ value: email.toUpperCase(), type: "work" }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toHaveLength(1);
    expect(res.body.emails[0]).toMatchObject({ type: "work", primary: true });
  });

  it("add of a second email keeps the first (§3.5.2.1: add to a multi-valued attribute appends)", async () => {
    const user = await createUser({ emails: [{ value: "first@example.com", type: "work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "add", path: "emails", value: [{ value: "second@example.com", type: "home" }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { value: "first@example.com", type: "work" },
      { value: "second@example.com", type: "home" },
    ]);
  });

  it("remove of an attribute the user does not have is 200 and changes nothing, version included", async () => {
    const user = await createUser({ displayName: "Keep" });
    const res = await patch(`/Users/${user.id}`, [{ op: "remove", path: "nickName" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.displayName).toBe("Keep");
    expect(res.body.meta.version).toBe(user.meta.version);
  });

  it("replace `emails.value` (no filter) on a user without emails gives one email with that address", async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails.value", value: "x@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "x@example.com" }]);
  });

  it('Entra: add `emails[type eq "work"]` (filter, no sub-attribute) with an object creates the work email', async () => {
    const user = await createUser({ emails: [{ value: "h@example.com", type: "home" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "Add", path: 'emails[type eq "work"]', value: { value: "w@example.com", primary: true } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { value: "h@example.com", type: "home" },
      { type: "work", value: "w@example.com", primary: true },
    ]);
  });

  it('remove `emails[value eq "x"]` takes out only that address (§3.5.2.2)', async () => {
    const user = await createUser({
      emails: [
        { value: "a@example.com", type: "work" },
        { value: "b@example.com", type: "work" },
      ],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "remove", path: 'emails[value eq "A@example.com"]' },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "b@example.com", type: "work" }]);
  });

  it("replace `urn:...:enterprise:2.0:User:manager.value` sets the manager's id (Okta's enterprise mapping)", async () => {
    const boss = await createUser();
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: `${ENT}:manager.value`, value: boss.id },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({ manager: { value: boss.id } });
  });

  it("a PATCH of the read-only `id` or `groups` is 400 mutability and changes nothing (RFC 7644 §3.5.2, RFC 7643 §2.2)", async () => {
    const user = await createUser();
    for (const path of ["id", "groups"]) {
      const res = await patch(`/Users/${user.id}`, [
        { op: "replace", path, value: path === "id" ? "x" : [] },
      ]);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.scimType).toBe("mutability");
    }
    expect((await get(`/Users/${user.id}`)).status).toBe(200);
  });

  it("replace `userName` with the same name in another case renames the user (not 409 against itself)", async () => {
    const user = await createUser({ userName: unique("case.rename") });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "userName", value: user.userName.toUpperCase() },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.userName).toBe(user.userName.toUpperCase());
  });

  it('Entra `{"op":"Replace","value":{"active":"False","displayName":"Gone"}}`: both set, the user inactive', async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "Replace", value: { active: "False", displayName: "Gone" } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ active: false, displayName: "Gone" });
  });

  it("a PATCH with an unknown op (`move`) is 400 invalidSyntax and changes nothing (§3.5.2)", async () => {
    const user = await createUser({ displayName: "Stay" });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "displayName", value: "Moved" },
      { op: "move", path: "displayName", value: "x" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect((await get(`/Users/${user.id}`)).body.displayName).toBe("Stay");
  });
});

describe("user bodies and names", () => {
  it("PUT changing only the case of userName keeps the user and its new spelling is found", async () => {
    const user = await createUser({ userName: unique("Put.Case") });
    const renamed =
      user.userName.toLowerCase() === user.userName
        ? user.userName.toUpperCase()
        : user.userName.toLowerCase();
    const res = await send("put", `/Users/${user.id}`, { schemas: [USER], userName: renamed });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.userName).toBe(renamed);
    const found = await get(`/Users?filter=${q(`userName eq "${renamed}"`)}`);
    expect(ids(found)).toEqual([user.id]);
  });

  it("`schemas` URNs in another case are the same schemas (RFC 7643 §2.1: URIs of schemas are case-insensitive)", async () => {
    const lowerUser = USER.toLowerCase();
    const lowerEnt = ENT.toLowerCase();
    const res = await send("post", "/Users", {
      schemas: [lowerUser, lowerEnt],
      userName: unique("lower.urn"),
      [lowerEnt]: { department: "Ops" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.schemas).toEqual([USER, ENT]);
    expect(res.body[ENT]).toEqual({ department: "Ops" });
    expect(res.body).not.toHaveProperty(lowerEnt);
  });

  it("a client-chosen `id` in a POST is ignored; the bridge assigns its own (RFC 7643 §3.1: id is assigned by the service provider)", async () => {
    const res = await send("post", "/Users", {
      schemas: [USER],
      id: "client-chosen-1",
      userName: unique("own.id"),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.id).not.toBe("client-chosen-1");
    expect((await get("/Users/client-chosen-1")).status).toBe(404);
  });

  it("a PUT rename frees the old userName: filter by the old name finds nothing, by the new one the user", async () => {
    const user = await createUser();
    const newName = unique("renamed");
    const res = await send("put", `/Users/${user.id}`, { schemas: [USER], userName: newName });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await get(`/Users?filter=${q(`userName eq "${user.userName}"`)}`)).body.totalResults).toBe(0);
    expect(ids(await get(`/Users?filter=${q(`userName eq "${newName}"`)}`))).toEqual([user.id]);
    const again = await send("post", "/Users", { schemas: [USER], userName: user.userName });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });

  it("a PATCH of externalId moves the look-up: the old externalId finds nothing, the new one the user", async () => {
    const user = await createUser({ externalId: `old-ext-${n}` });
    const fresh = `new-ext-${n}`;
    const res = await patch(`/Users/${user.id}`, [{ op: "replace", path: "externalId", value: fresh }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await get(`/Users?filter=${q(`externalId eq "${user.externalId}"`)}`)).body.totalResults).toBe(0);
    expect(ids(await get(`/Users?filter=${q(`externalId eq "${fresh}"`)}`))).toEqual([user.id]);
  });
});

describe("groups as Okta, Entra and Keycloak push them", () => {
  it("POST with members as `{value, $ref, display, type}` stores them and GET answers them with value and type (RFC 7643 §4.2)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const res = await send("post", "/Groups", {
      schemas: [GROUP],
      displayName: "Full member objects",
      members: [
        { value: a.id, $ref: `https://idp.example.com/scim/v2/Users/${a.id}`, display: "A", type: "User" },
        { value: b.id, $ref: `Users/${b.id}`, display: "B", type: "User" },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const members = (await get(`/Groups/${res.body.id}`)).body.members as { value: string; type: string }[];
    expect(members.map((m) => m.value).sort()).toEqual([a.id, b.id].sort());
    expect(members.every((m) => m.type === "User")).toBe(true);
  });

  it("add of members already in the group does not duplicate them (§3.5.2.1)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Re-add members", [a.id]);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "add", path: "members", value: [{ value: a.id }, { value: b.id }, { value: b.id }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([a.id, b.id].sort());
  });

  it("a group's externalId is stored and found by `externalId eq` (Okta group push, Entra group matching)", async () => {
    const g = await createGroup("Group with external id", [], { externalId: `00g-ext-${n}` });
    expect(g.externalId).toBe(`00g-ext-${n}`);
    const res = await get(`/Groups?filter=${q(`externalId eq "${g.externalId}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([g.id]);
  });

  it('Entra membership check: `filter=id eq "<g>" and members[value eq "<u>"]` finds the group only when the user is a member', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Membership check", [a.id]);
    const hit = await get(
      `/Groups?excludedAttributes=members&filter=${q(`id eq "${g.id}" and members[value eq "${a.id}"]`)}`,
    );
    expect(hit.status, JSON.stringify(hit.body)).toBe(200);
    expect(ids(hit)).toEqual([g.id]);
    const miss = await get(
      `/Groups?excludedAttributes=members&filter=${q(`id eq "${g.id}" and members[value eq "${b.id}"]`)}`,
    );
    expect(miss.status, JSON.stringify(miss.body)).toBe(200);
    expect(miss.body.totalResults).toBe(0);
  });

  it('`members.value eq "<u>"` lists the groups the user is in (§3.4.2.2 attribute path with a sub-attribute)', async () => {
    const a = await createUser();
    const g1 = await createGroup("Member of 1", [a.id]);
    await createGroup("Not a member of");
    const g2 = await createGroup("Member of 2", [a.id]);
    const res = await get(`/Groups?filter=${q(`members.value eq "${a.id}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort()).toEqual([g1.id, g2.id].sort());
  });

  it("a PATCH renaming a group moves the look-up: the old displayName finds nothing", async () => {
    const g = await createGroup(`Rename me ${n}`);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "replace", path: "displayName", value: `Renamed ${n}` },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect((await get(`/Groups?filter=${q(`displayName eq "Rename me ${n}"`)}`)).body.totalResults).toBe(0);
    expect(ids(await get(`/Groups?filter=${q(`displayName eq "Renamed ${n}"`)}`))).toEqual([g.id]);
  });

  it("Okta group push import: `GET /Groups?excludedAttributes=members&startIndex=1&count=100` lists groups without members", async () => {
    const a = await createUser();
    await createGroup("Import list", [a.id]);
    const res = await get("/Groups?excludedAttributes=members&startIndex=1&count=100");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.Resources.length).toBeGreaterThan(0);
    for (const g of res.body.Resources) expect(g).not.toHaveProperty("members");
  });

  it("a deleted group is 404 afterwards and a second DELETE is 404 (RFC 7644 §3.6)", async () => {
    const g = await createGroup("Delete twice");
    const first = await t.request.delete(`${base}/Groups/${g.id}`).set(t.okta);
    expect(first.status).toBe(204);
    const second = await t.request.delete(`${base}/Groups/${g.id}`).set(t.okta);
    expect(second.status).toBe(404);
    expect(second.body.schemas).toEqual([ERROR]);
    expect((await get(`/Groups/${g.id}`)).status).toBe(404);
  });

  it("a deleted user leaves its groups: the group no longer lists it (RFC 7644 §3.6: the resource is gone)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Member deleted", [a.id, b.id]);
    expect((await t.request.delete(`${base}/Users/${a.id}`).set(t.okta)).status).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it("a trailing slash after a group id (`/Groups/<id>/`) patches the group", async () => {
    const g = await createGroup("Trailing slash patch");
    const res = await patch(`/Groups/${g.id}/`, [
      { op: "replace", path: "displayName", value: "Trailing slash 2" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect((await get(`/Groups/${g.id}`)).body.displayName).toBe("Trailing slash 2");
  });
});

describe("lists and projections", () => {
  it("`attributes=emails.value` returns id, schemas and the addresses alone (§3.9: sub-attribute names)", async () => {
    const user = await createUser({
      emails: [{ value: "p@example.com", type: "work", primary: true }],
      displayName: "P",
    });
    const res = await get(`/Users/${user.id}?attributes=emails.value`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "p@example.com" }]);
    expect(res.body).not.toHaveProperty("displayName");
    expect(res.body).not.toHaveProperty("userName");
  });

  it("`attributes=<enterprise URN>:department` returns the department only from the extension", async () => {
    const user = await createUser({
      schemas: [USER, ENT],
      [ENT]: { department: "R&D", employeeNumber: "7" },
    });
    const res = await get(`/Users/${user.id}?attributes=${q(`${ENT}:department`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({ department: "R&D" });
    expect(res.body).not.toHaveProperty("userName");
  });

  it("`excludedAttributes=emails,name` leaves those out and keeps the rest", async () => {
    const user = await createUser({
      emails: [{ value: "e@example.com" }],
      name: { givenName: "E" },
      title: "T",
    });
    const res = await get(`/Users/${user.id}?excludedAttributes=emails,name`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("emails");
    expect(res.body).not.toHaveProperty("name");
    expect(res.body).toMatchObject({ title: "T", userName: user.userName });
  });

  it("a startIndex past the end is a 200 with no resources and the real totalResults (§3.4.2.4)", async () => {
    const res = await get("/Users?startIndex=100000&count=10");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.Resources ?? []).toEqual([]);
    expect(res.body.totalResults).toBeGreaterThan(0);
    expect(res.body.startIndex).toBe(100000);
  });

  it("a negative startIndex counts as 1 (§3.4.2.4: a value less than 1 SHALL be interpreted as 1)", async () => {
    const res = await get("/Users?startIndex=-5&count=2");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.startIndex).toBe(1);
    expect(res.body.Resources).toHaveLength(2);
  });

  it("a negative count counts as 0 (§3.4.2.4: a negative value SHALL be interpreted as 0)", async () => {
    const res = await get("/Users?count=-1");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.itemsPerPage).toBe(0);
    expect(res.body.totalResults).toBeGreaterThan(0);
  });

  it('`userName sw "x" and not (active eq false)` (OneLogin/Ping import filters with not and grouping)', async () => {
    const stem = `swtest${n}`;
    const on = await createUser({ userName: `${stem}.on@example.com` });
    await createUser({ userName: `${stem}.off@example.com`, active: false });
    const res = await get(
      `/Users?filter=${q(`userName sw "${stem.toUpperCase()}" and not (active eq false)`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([on.id]);
  });

  it("`name.familyName eq` and `title pr` filters (§3.4.2.2: sub-attribute paths, presence)", async () => {
    const family = `Fam${n}`;
    const u = await createUser({ name: { familyName: family }, title: "Boss" });
    await createUser({ name: { familyName: family } });
    const res = await get(`/Users?filter=${q(`name.familyName eq "${family.toLowerCase()}" and title pr`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([u.id]);
  });

  it('an enterprise filter `<urn>:employeeNumber eq "x"` finds the user (Entra matching on employeeNumber)', async () => {
    const num = `E-${n}-${Date.now()}`;
    const u = await createUser({ schemas: [USER, ENT], [ENT]: { employeeNumber: num } });
    const res = await get(`/Users?filter=${q(`${ENT}:employeeNumber eq "${num}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([u.id]);
  });

  it("an unknown filter operator is 400 invalidFilter (RFC 7644 §3.4.2.2, §3.12)", async () => {
    const res = await get(`/Users?filter=${q('userName like "x"')}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.scimType).toBe("invalidFilter");
  });
});

describe("endpoints and headers", () => {
  it("/Me is 501 and /Bulk is 501 with a SCIM error; ServiceProviderConfig says bulk is not supported (RFC 7644 §3.11, §3.7)", async () => {
    const me = await get("/Me");
    expect(me.status).toBe(501);
    expect(me.body.schemas).toEqual([ERROR]);
    const bulk = await send("post", "/Bulk", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
      Operations: [],
    });
    expect(bulk.status).toBe(501);
    expect(bulk.body.schemas).toEqual([ERROR]);
    expect((await get("/ServiceProviderConfig")).body.bulk.supported).toBe(false);
  });

  it("HEAD on /Users answers 200 without a body", async () => {
    const res = await t.request.head(`${base}/Users?count=1`).set(t.okta);
    expect(res.status).toBe(200);
    expect(res.text ?? "").toBe("");
  });

  it("If-Match with the ETag as received applies a PATCH; with a stale one it is 412 and changes nothing (§3.14)", async () => {
    const user = await createUser({ displayName: "v1" });
    const got = await get(`/Users/${user.id}`);
    const etag = got.headers.etag as string;
    expect(etag).toBeTruthy();
    const ok = await t.request
      .patch(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("If-Match", etag)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({
          schemas: [PATCH],
          Operations: [{ op: "replace", path: "displayName", value: "v2" }],
        }),
      );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const stale = await t.request
      .patch(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("If-Match", etag)
      .set("Content-Type", "application/scim+json")
      .send(
        JSON.stringify({
          schemas: [PATCH],
          Operations: [{ op: "replace", path: "displayName", value: "v3" }],
        }),
      );
    expect(stale.status, JSON.stringify(stale.body)).toBe(412);
    expect((await get(`/Users/${user.id}`)).body.displayName).toBe("v2");
  });

  it("If-Match with the tag without its weak prefix still matches (RFC 7232 §3.1 weak comparison for SCIM versions)", async () => {
    const user = await createUser({ displayName: "w1" });
    const etag = (await get(`/Users/${user.id}`)).headers.etag as string;
    const strong = etag.replace(/^W\//, "");
    const res = await t.request
      .put(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("If-Match", strong)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify({ schemas: [USER], userName: user.userName, displayName: "w2" }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.displayName).toBe("w2");
  });

  it("`Content-Type: Application/SCIM+JSON` (media types are case-insensitive, RFC 9110 §8.3.1) is read as JSON", async () => {
    const res = await send(
      "post",
      "/Users",
      { schemas: [USER], userName: unique("upper.ct") },
      "Application/SCIM+JSON",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it("every answer carries `Content-Type: application/scim+json` (§3.1), errors included", async () => {
    const ok = await get("/Users?count=1");
    expect(ok.headers["content-type"]).toMatch(/^application\/scim\+json/);
    const missing = await get("/Users/does-not-exist");
    expect(missing.status).toBe(404);
    expect(missing.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(missing.body).toMatchObject({ schemas: [ERROR], status: "404" });
  });

  it("a POST /Users answers 201 with a Location header equal to meta.location (§3.3)", async () => {
    const res = await send("post", "/Users", { schemas: [USER], userName: unique("location") });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(res.body.meta.location);
    expect(res.body.meta).toMatchObject({ resourceType: "User" });
    expect(res.body.meta.created).toBeTruthy();
    expect(res.body.meta.lastModified).toBeTruthy();
  });
});

describe("second pass: multi-valued qualifiers, no-path PATCHes, versions", () => {
  it('`emails[type eq "work"]` matches an email stored with type "Work" (RFC 7643 §4.1.2: type is caseExact false)', async () => {
    const user = await createUser({ emails: [{ value: "old@example.com", type: "Work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "Replace", path: 'emails[type eq "work"].value', value: "new@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toHaveLength(1);
    expect(res.body.emails[0].value).toBe("new@example.com");
  });

  it('Entra: replace `emails[type eq "work"].primary` with "True" makes it the primary (string boolean)', async () => {
    const user = await createUser({
      emails: [
        { value: "h@example.com", type: "home", primary: true },
        { value: "w@example.com", type: "work" },
      ],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "Replace", path: 'emails[type eq "work"].primary', value: "True" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const work = res.body.emails.find((e: { type: string }) => e.type === "work");
    const home = res.body.emails.find((e: { type: string }) => e.type === "home");
    expect(work.primary).toBe(true);
    expect(home.primary).not.toBe(true);
  });

  it("a no-path replace with `emails` replaces the whole list (§3.5.2.3: the value's attributes replace the resource's)", async () => {
    const user = await createUser({ emails: [{ value: "a@example.com", type: "work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", value: { emails: [{ value: "b@example.com", type: "home" }] } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "b@example.com", type: "home" }]);
  });

  it("a no-path add with `emails` appends to the list (§3.5.2.1)", async () => {
    const user = await createUser({ emails: [{ value: "a@example.com", type: "work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "add", value: { emails: [{ value: "b@example.com", type: "home" }] } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { value: "a@example.com", type: "work" },
      { value: "b@example.com", type: "home" },
    ]);
  });

  it("a no-path add of `members` on a group adds them (JumpCloud/older Entra jobs)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("No-path members add", [a.id]);
    const res = await patch(`/Groups/${g.id}`, [{ op: "add", value: { members: [{ value: b.id }] } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([a.id, b.id].sort());
  });

  it("a PATCH that changes something moves meta.lastModified and the version; meta.created stays (RFC 7643 §3.1)", async () => {
    const user = await createUser();
    await new Promise((r) => setTimeout(r, 15));
    const res = await patch(`/Users/${user.id}`, [{ op: "replace", path: "title", value: "New" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const before = user.meta as unknown as { created: string; lastModified: string; version: string };
    expect(res.body.meta.created).toBe(before.created);
    expect(Date.parse(res.body.meta.lastModified)).toBeGreaterThan(Date.parse(before.lastModified));
    expect(res.body.meta.version).not.toBe(before.version);
    expect(res.headers.etag).toBe(res.body.meta.version);
  });

  it("a group PATCH adding a member changes the group's version (an IdP's cached ETag must go stale)", async () => {
    const a = await createUser();
    const g = await createGroup("Version on membership");
    const res = await patch(`/Groups/${g.id}`, [{ op: "add", path: "members", value: [{ value: a.id }] }]);
    expect(res.status).toBe(204);
    const got = await get(`/Groups/${g.id}`);
    expect(got.body.meta.version).not.toBe(g.meta.version);
    expect(res.headers.etag).toBe(got.body.meta.version);
  });

  it("a deleted group leaves its members' `groups` (RFC 7643 §4.1.2: groups lists the groups the user is in)", async () => {
    const a = await createUser();
    const g = await createGroup("Deleted group", [a.id]);
    expect((await get(`/Users/${a.id}`)).body.groups.map((x: { value: string }) => x.value)).toEqual([g.id]);
    expect((await t.request.delete(`${base}/Groups/${g.id}`).set(t.okta)).status).toBe(204);
    expect((await get(`/Users/${a.id}`)).body).not.toHaveProperty("groups");
  });

  it("a PATCH remove of `userName` (required) is 400 and the user keeps it (RFC 7644 §3.5.2: incompatible with the schema)", async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [{ op: "remove", path: "userName" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect((await get(`/Users/${user.id}`)).body.userName).toBe(user.userName);
  });

  it("a PUT renaming a user to another user's userName (other case) is 409 uniqueness and changes nothing", async () => {
    const [a, b] = [await createUser(), await createUser({ displayName: "B" })];
    const res = await send("put", `/Users/${b.id}`, {
      schemas: [USER],
      userName: a.userName.toUpperCase(),
      displayName: "B2",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
    expect((await get(`/Users/${b.id}`)).body).toMatchObject({ userName: b.userName, displayName: "B" });
  });

  it("Entra provisions a user before its manager: a manager id the bridge does not know yet is stored", async () => {
    const res = await send("post", "/Users", {
      schemas: [USER, ENT],
      userName: unique("early.report"),
      [ENT]: { manager: { value: "not-yet-provisioned-manager" } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body[ENT]).toEqual({ manager: { value: "not-yet-provisioned-manager" } });
  });

  it("a user's id under /Groups and a group's id under /Users are 404 (the types are separate)", async () => {
    const user = await createUser();
    const g = await createGroup("Cross type");
    expect((await get(`/Groups/${user.id}`)).status).toBe(404);
    expect((await get(`/Users/${g.id}`)).status).toBe(404);
    const res = await patch(`/Users/${g.id}`, [{ op: "replace", path: "displayName", value: "x" }]);
    expect(res.status).toBe(404);
  });
});

describe("second pass: lookups", () => {
  it('`externalId eq` is case-exact (RFC 7643 §3.1: externalId caseExact true): "ABC" does not find "abc"', async () => {
    const ext = `okta-00u${n}abc`;
    const user = await createUser({ externalId: ext });
    expect(ids(await get(`/Users?filter=${q(`externalId eq "${ext}"`)}`))).toEqual([user.id]);
    const other = await get(`/Users?filter=${q(`externalId eq "${ext.toUpperCase()}"`)}`);
    expect(other.status).toBe(200);
    expect(other.body.totalResults).toBe(0);
  });

  it("two users with the same externalId (HR re-hire scripts) are both found by it, or the second is a 409", async () => {
    const ext = `shared-ext-${n}`;
    const a = await createUser({ externalId: ext });
    const res = await send("post", "/Users", {
      schemas: [USER],
      userName: unique("shared"),
      externalId: ext,
    });
    if (res.status === 409) {
      expect(res.body.scimType).toBe("uniqueness");
      return;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const found = await get(`/Users?filter=${q(`externalId eq "${ext}"`)}`);
    expect(ids(found).sort()).toEqual([a.id, res.body.id].sort());
    expect(found.body.totalResults).toBe(2);
  });

  it('`groups.value eq "<g>"` on /Users lists the members of that group (RFC 7643 §4.1.2 groups is filterable)', async () => {
    const [a, b] = [await createUser(), await createUser()];
    await createUser();
    const g = await createGroup("Users by group", [a.id, b.id]);
    const res = await get(`/Users?filter=${q(`groups.value eq "${g.id}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort()).toEqual([a.id, b.id].sort());
  });

  it('`<enterprise>:manager.value eq "<boss>"` finds the boss\'s reports', async () => {
    const boss = await createUser();
    const report = await createUser({ schemas: [USER, ENT], [ENT]: { manager: { value: boss.id } } });
    const res = await get(`/Users?filter=${q(`${ENT}:manager.value eq "${boss.id}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([report.id]);
  });

  it("a filtered list pages: totalResults counts every match, Resources the page (§3.4.2.4)", async () => {
    const stem = `pagefilter${n}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createUser({ userName: `${stem}.${i}@example.com` }));
    const res = await get(`/Users?filter=${q(`userName sw "${stem}"`)}&startIndex=2&count=2`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(res.body.Resources).toHaveLength(2);
    const all = await get(`/Users?filter=${q(`userName sw "${stem}"`)}`);
    expect(ids(all).sort()).toEqual(made.map((u) => u.id).sort());
  });

  it('`(userName eq "a" OR userName eq "b") and active eq true` (upper-case OR, parentheses)', async () => {
    const a = await createUser();
    const b = await createUser({ active: false });
    const c = await createUser();
    const res = await get(
      `/Users?filter=${q(`(userName eq "${a.userName}" OR userName eq "${b.userName}" or userName eq "${c.userName}") and active eq true`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort()).toEqual([a.id, c.id].sort());
  });

  it("`attributes=urn:...:core:2.0:User:userName` (a URN-qualified core name) returns userName", async () => {
    const user = await createUser({ displayName: "Q" });
    const res = await get(`/Users/${user.id}?attributes=${q(`${USER}:userName`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.userName).toBe(user.userName);
    expect(res.body).not.toHaveProperty("displayName");
  });

  it("`attributes=members.value` on a group returns the member ids alone", async () => {
    const a = await createUser();
    const g = await createGroup("Members value", [a.id]);
    const res = await get(`/Groups/${g.id}?attributes=members.value`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.members).toEqual([{ value: a.id }]);
    expect(res.body).not.toHaveProperty("displayName");
  });

  it("POST /Groups/.search with excludedAttributes members finds the group without members (§3.4.3)", async () => {
    const a = await createUser();
    const g = await createGroup(`Search group ${n}`, [a.id]);
    const res = await send("post", "/Groups/.search", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: `displayName eq "search group ${n}"`,
      excludedAttributes: ["members"],
      startIndex: 1,
      count: 10,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([g.id]);
    expect(res.body.Resources[0]).not.toHaveProperty("members");
  });

  it("concurrent PATCHes of different attributes of one user all land (no lost update)", async () => {
    const user = await createUser();
    const paths = ["title", "nickName", "displayName", "locale", "timezone", "profileUrl"];
    const results = await Promise.all(
      paths.map((path) => patch(`/Users/${user.id}`, [{ op: "replace", path, value: `v-${path}` }])),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const got = (await get(`/Users/${user.id}`)).body;
    for (const path of paths) expect(got[path]).toBe(`v-${path}`);
  });
});

describe("third pass: deletions, re-creations and odd but valid forms", () => {
  it("Entra removes a deleted user from its groups afterwards: remove of that id is 204 and keeps the others", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Remove deleted member", [a.id, b.id]);
    expect((await t.request.delete(`${base}/Users/${a.id}`).set(t.okta)).status).toBe(204);
    const byValue = await patch(`/Groups/${g.id}`, [
      { op: "Remove", path: "members", value: [{ value: a.id }] },
    ]);
    expect(byValue.status, JSON.stringify(byValue.body)).toBe(204);
    const byFilter = await patch(`/Groups/${g.id}`, [{ op: "remove", path: `members[value eq "${a.id}"]` }]);
    expect(byFilter.status, JSON.stringify(byFilter.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it("a user deleted and created again with the same userName and externalId is a new, clean user found by both", async () => {
    const userName = unique("rehire");
    const externalId = `rehire-${n}`;
    const first = await createUser({ userName, externalId, title: "Old" });
    const g = await createGroup("Rehire group", [first.id]);
    expect((await t.request.delete(`${base}/Users/${first.id}`).set(t.okta)).status).toBe(204);
    const again = await send("post", "/Users", { schemas: [USER], userName, externalId });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.id).not.toBe(first.id);
    expect(again.body).not.toHaveProperty("title");
    expect(again.body).not.toHaveProperty("groups");
    expect(ids(await get(`/Users?filter=${q(`userName eq "${userName}"`)}`))).toEqual([again.body.id]);
    expect(ids(await get(`/Users?filter=${q(`externalId eq "${externalId}"`)}`))).toEqual([again.body.id]);
    expect(await memberIds(g.id)).toEqual([]);
  });

  it("`meta.lastModified gt` with a time-zone offset compares instants (RFC 7643 §2.3.5 xsd:dateTime)", async () => {
    const old = await createUser();
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date(Date.now() + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    // `since` names the same instant as now, written two hours ahead with a +02:00 offset.
    await new Promise((r) => setTimeout(r, 20));
    const fresh = await createUser();
    const res = await get(`/Users?filter=${q(`meta.lastModified gt "${since}"`)}&count=200`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toContain(fresh.id);
    expect(ids(res)).not.toContain(old.id);
  });

  it("a bearer token followed by trailing whitespace is the same token (RFC 9110 §5.5: OWS is not part of the value)", async () => {
    const res = await t.request.get(`${base}/Users?count=1`).set("Authorization", "Bearer okta-token-123  ");
    expect(res.status).toBe(200);
  });

  it("two groups with the same displayName (another case): the second is a 409, or a filter finds both", async () => {
    const name = `Same Name ${n}`;
    const first = await createGroup(name);
    const res = await send("post", "/Groups", { schemas: [GROUP], displayName: name.toUpperCase() });
    if (res.status === 409) {
      expect(res.body.scimType).toBe("uniqueness");
      return;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const found = await get(`/Groups?filter=${q(`displayName eq "${name}"`)}`);
    expect(ids(found).sort()).toEqual([first.id, res.body.id].sort());
  });

  it("`emails eq` follows a changed address: the old one finds nothing, the new one the user", async () => {
    const old = unique("mail.old");
    const fresh = unique("mail.new");
    const user = await createUser({ emails: [{ value: old, type: "work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: 'emails[type eq "work"].value', value: fresh },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await get(`/Users?filter=${q(`emails eq "${old}"`)}`)).body.totalResults).toBe(0);
    expect(ids(await get(`/Users?filter=${q(`emails.value eq "${fresh}"`)}`))).toEqual([user.id]);
  });

  it("a remove of `members` whose value is one object (not an array) takes out that member only", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Single object remove", [a.id, b.id]);
    const res = await patch(`/Groups/${g.id}`, [{ op: "remove", path: "members", value: { value: a.id } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it('a remove of `members` with an empty value list removes nobody (a list of none, not "all")', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Empty list remove", [a.id, b.id]);
    const res = await patch(`/Groups/${g.id}`, [{ op: "Remove", path: "members", value: [] }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([a.id, b.id].sort());
  });

  it("a replace of `members` with one object (not an array) leaves exactly that member", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Single object replace", [a.id]);
    const res = await patch(`/Groups/${g.id}`, [{ op: "replace", path: "members", value: { value: b.id } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it("add with path `<enterprise URN>` merges into the extension, keeping what the value does not name (§3.5.2.1)", async () => {
    const user = await createUser({ schemas: [USER, ENT], [ENT]: { department: "R&D", costCenter: "42" } });
    const res = await patch(`/Users/${user.id}`, [
      { op: "add", path: ENT, value: { department: "Ops", division: "EU" } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({ department: "Ops", costCenter: "42", division: "EU" });
  });

  it('`not(active eq true)` without a space after not (RFC 7644 §3.4.2.2 ABNF: "not" "(" valFilter ")")', async () => {
    const off = await createUser({ userName: unique("notspace"), active: false });
    const res = await get(`/Users?filter=${q(`userName eq "${off.userName}" and not(active eq true)`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([off.id]);
  });

  it("`emails.value ew` and `<enterprise>:manager pr` filters", async () => {
    const domain = `ew${n}.example.org`;
    const boss = await createUser();
    const u = await createUser({
      schemas: [USER, ENT],
      emails: [{ value: `x@${domain}`, type: "work" }],
      [ENT]: { manager: { value: boss.id } },
    });
    await createUser({ emails: [{ value: `y@${domain}`, type: "work" }] });
    const res = await get(
      `/Users?filter=${q(`emails.value ew "@${domain.toUpperCase()}" and ${ENT}:manager pr`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([u.id]);
  });
});

describe("fourth pass: member filters, PUT of keys, discovery, races", () => {
  it('remove `members[value eq "a" and type eq "User"]` takes out that member (filter naming the member\'s type)', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Typed member filter", [a.id, b.id]);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "remove", path: `members[value eq "${a.id}" and type eq "User"]` },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it("a PUT without externalId clears it: the old externalId finds nothing and another user may take it", async () => {
    const ext = `put-clears-${n}`;
    const user = await createUser({ externalId: ext });
    const res = await send("put", `/Users/${user.id}`, { schemas: [USER], userName: user.userName });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("externalId");
    expect((await get(`/Users?filter=${q(`externalId eq "${ext}"`)}`)).body.totalResults).toBe(0);
    const other = await createUser({ externalId: ext });
    expect(ids(await get(`/Users?filter=${q(`externalId eq "${ext}"`)}`))).toEqual([other.id]);
  });

  it("the same externalId POSTed for two userNames at once: at most one user holds it", async () => {
    const ext = `race-ext-${n}`;
    const results = await Promise.all(
      [0, 1, 2].map((i) =>
        send("post", "/Users", { schemas: [USER], userName: unique(`race${i}`), externalId: ext }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const found = await get(`/Users?filter=${q(`externalId eq "${ext}"`)}`);
    expect(found.body.totalResults).toBe(created.length);
    for (const r of results) expect([201, 409]).toContain(r.status);
  });

  it("ten concurrent member adds to one group all land", async () => {
    const users = [];
    for (let i = 0; i < 10; i++) users.push(await createUser());
    const g = await createGroup("Concurrent adds");
    const results = await Promise.all(
      users.map((u) => patch(`/Groups/${g.id}`, [{ op: "add", path: "members", value: [{ value: u.id }] }])),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual(users.map((u) => u.id).sort());
  });

  it("discovery as the Microsoft SCIM validator reads it: ResourceTypes/User names the enterprise extension, Schemas/<enterprise> exists", async () => {
    const rt = await get("/ResourceTypes/User");
    expect(rt.status, JSON.stringify(rt.body)).toBe(200);
    expect(rt.body).toMatchObject({ id: "User", endpoint: "/Users", schema: USER });
    expect(rt.body.schemaExtensions).toEqual([expect.objectContaining({ schema: ENT, required: false })]);
    const ent = await get(`/Schemas/${ENT}`);
    expect(ent.status, JSON.stringify(ent.body)).toBe(200);
    expect(ent.body.id).toBe(ENT);
    const spc = await get("/ServiceProviderConfig");
    expect(spc.body.patch.supported).toBe(true);
    expect(spc.body.filter).toMatchObject({ supported: true });
    expect(spc.body.authenticationSchemes.length).toBeGreaterThan(0);
  });

  it("ResourceTypes and Schemas lists are ListResponses with totalResults (RFC 7644 §4)", async () => {
    for (const path of ["/ResourceTypes", "/Schemas"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:ListResponse"]);
      expect(res.body.totalResults).toBe(res.body.Resources.length);
    }
  });
});

describe("custom schema extensions as Entra and Okta send them", () => {
  const CUSTOM = "urn:ietf:params:scim:schemas:extension:custom:2.0:User";

  it("Entra's POST with a custom extension its `schemas` does not list (Microsoft Q&A 1684621) stores and lists it", async () => {
    const res = await send("post", "/Users", {
      schemas: [USER, ENT],
      userName: unique("custom.ext"),
      active: true,
      emails: [{ primary: true, type: "work", value: "c@example.com" }],
      meta: { resourceType: "User" },
      name: { familyName: "Tester", givenName: "Joe" },
      title: "scim tester",
      [CUSTOM]: { employeeNumber: "99887766", worksiteId: "180" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body[CUSTOM]).toEqual({ employeeNumber: "99887766", worksiteId: "180" });
    expect(res.body.schemas).toContain(CUSTOM);
    const found = await get(`/Users?filter=${q(`${CUSTOM}:employeeNumber eq "99887766"`)}`);
    expect(ids(found)).toEqual([res.body.id]);
  });

  it("PATCH paths and no-path keys under a custom extension set, replace and remove its attributes", async () => {
    const user = await createUser({
      schemas: [USER, CUSTOM],
      [CUSTOM]: { worksiteId: "180", costCenter: "A" },
    });
    const set = await patch(`/Users/${user.id}`, [
      { op: "Replace", path: `${CUSTOM}:worksiteId`, value: "181" },
      { op: "Replace", value: { [`${CUSTOM}:costCenter`]: "B" } },
      { op: "Add", value: { [CUSTOM]: { badge: "42" } } },
    ]);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body[CUSTOM]).toEqual({ worksiteId: "181", costCenter: "B", badge: "42" });
    const removed = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: `${CUSTOM}:worksiteId` },
      { op: "Remove", path: `${CUSTOM}:costCenter` },
      { op: "Remove", path: `${CUSTOM}:badge` },
    ]);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).not.toHaveProperty(CUSTOM);
    expect(removed.body.schemas).toEqual([USER]);
  });

  it("Entra's Add of a multi-value custom attribute with `[{value}]` (Microsoft Q&A 1693075) stores that value list", async () => {
    const GH = "urn:ietf:params:scim:schemas:extension:greenhouse:2.0:User";
    const user = await createUser({ schemas: [USER, GH], [GH]: { department_ids: [{ value: "7" }] } });
    const res = await patch(`/Users/${user.id}`, [
      { op: "Add", path: `${GH}:department_ids`, value: [{ value: "1" }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const values = (res.body[GH].department_ids as { value: string }[]).map((v) => v.value);
    expect(values).toContain("1");
  });

  it("`attributes=<custom URN>:worksiteId` returns that attribute alone", async () => {
    const user = await createUser({ schemas: [USER, CUSTOM], [CUSTOM]: { worksiteId: "9", other: "x" } });
    const res = await get(`/Users/${user.id}?attributes=${q(`${CUSTOM}:worksiteId`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[CUSTOM]).toEqual({ worksiteId: "9" });
    expect(res.body).not.toHaveProperty("userName");
  });
});

describe("fifth pass: projections that empty values, renames that collide", () => {
  it("`excludedAttributes=name.givenName` on a user whose name has only givenName leaves no empty `name` (RFC 7643 §2.5)", async () => {
    const user = await createUser({ name: { givenName: "Only" }, emails: [{ value: "only@example.com" }] });
    const res = await get(`/Users/${user.id}?excludedAttributes=name.givenName,emails.value`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("name");
    expect(res.body).not.toHaveProperty("emails");
    expect(res.body.userName).toBe(user.userName);
  });

  it("`attributes=name.givenName,name.familyName,meta.lastModified` returns both name parts and that meta field", async () => {
    const user = await createUser({ name: { givenName: "G", familyName: "F", middleName: "M" } });
    const res = await get(`/Users/${user.id}?attributes=name.givenName,name.familyName,meta.lastModified`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "G", familyName: "F" });
    expect(Object.keys(res.body.meta)).toEqual(["lastModified"]);
  });

  it("a group PATCH renaming to another group's displayName and adding a member is 409 and applies neither (§3.5.2 atomic)", async () => {
    const a = await createUser();
    const taken = await createGroup(`Taken ${n}`);
    const g = await createGroup(`Mine ${n}`);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "add", path: "members", value: [{ value: a.id }] },
      { op: "replace", path: "displayName", value: String(taken.displayName).toLowerCase() },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
    const after = await get(`/Groups/${g.id}`);
    expect(after.body.displayName).toBe(g.displayName);
    expect(after.body.members ?? []).toEqual([]);
  });

  it("a group renamed by PUT to another group's displayName is 409 and keeps its members", async () => {
    const a = await createUser();
    const taken = await createGroup(`PutTaken ${n}`);
    const g = await createGroup(`PutMine ${n}`, [a.id]);
    const res = await send("put", `/Groups/${g.id}`, {
      schemas: [GROUP],
      displayName: taken.displayName,
      members: [],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(await memberIds(g.id)).toEqual([a.id]);
  });

  it("a group renamed in case only keeps its id and is found by the new spelling", async () => {
    const g = await createGroup(`case group ${n}`);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "replace", path: "displayName", value: String(g.displayName).toUpperCase() },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    const got = await get(`/Groups/${g.id}`);
    expect(got.body.displayName).toBe(String(g.displayName).toUpperCase());
  });

  it("a user PATCH taking another user's externalId is 409 and leaves the rest of the PATCH unapplied", async () => {
    const a = await createUser({ externalId: `taken-ext-${n}` });
    const b = await createUser({ displayName: "Before" });
    const res = await patch(`/Users/${b.id}`, [
      { op: "replace", path: "displayName", value: "After" },
      { op: "replace", path: "externalId", value: a.externalId },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
    expect((await get(`/Users/${b.id}`)).body.displayName).toBe("Before");
  });
});

describe("an embed-tenant source's group names (platform-api.yaml createEmbedGroup: name maxLength 200)", () => {
  it("a name of 200 characters outside the BMP (emoji: 400 UTF-16 units) is accepted; 201 of them are refused", async () => {
    // JSON Schema's maxLength counts characters (code points), as the sync's check does
    // (sync-embed-group.ts); "🌍" is one character and two UTF-16 code units.
    const embed = await createScimTestApp("acceptance-idp-probes-e-embed", {
      sources: { kc: { tokens: ["kc-token"], target: { embedTenant: "acme" } } },
    });
    try {
      const post = (displayName: string) =>
        embed.request
          .post("/scim/v2/kc/Groups")
          .set("Authorization", "Bearer kc-token")
          .set("Content-Type", "application/scim+json")
          .send(JSON.stringify({ schemas: [GROUP], displayName }));
      const fits = await post("🌍".repeat(200));
      expect(fits.status, JSON.stringify(fits.body)).toBe(201);
      const over = await post("🌏".repeat(201));
      expect(over.status, JSON.stringify(over.body)).toBe(400);
      expect(over.body.scimType).toBe("invalidValue");
    } finally {
      await embed.close();
    }
  });
});

describe("elements without their value in a POST or PUT body (RFC 7643 §2.4, §2.5)", () => {
  it("a work email whose `value` is null is no email: the user keeps the home email alone, as a PATCH leaves it", async () => {
    // PingFederate and HR connectors map an empty directory attribute to null. RFC 7643 §2.5: null
    // is unassigned; §2.4: `value` is an email's significant value. Kept, `{type: "work", primary:
    // true}` would be a primary email without an address (what a PATCH clearing it drops).
    const user = await createUser({
      emails: [
        { type: "work", primary: true, value: null },
        { type: "home", value: "home@example.com" },
      ],
      addresses: [{ type: "work", formatted: null, locality: null }],
    });
    expect(user.emails).toEqual([{ type: "home", value: "home@example.com" }]);
    expect(user).not.toHaveProperty("addresses");
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: user.userName,
      emails: [
        { type: "work", value: "w@example.com" },
        { type: "other", primary: true },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.emails).toEqual([{ type: "work", value: "w@example.com" }]);
  });
});
