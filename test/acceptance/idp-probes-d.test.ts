/**
 * Acceptance probes (round d) of the SCIM intake with requests as identity providers' HTTP
 * clients put them on the wire (intake only, real Redis). Each case names who sends it and what
 * an identity admin expects, citing the RFC where it speaks. Earlier rounds: idp-probes-a,
 * idp-intake-edges, scim-edges, idp-dialects-e2e.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("acceptance-idp-probes-d");
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
  return res.body as { id: string; userName: string } & Record<string, unknown>;
}

async function createGroup(displayName: string, memberIds: string[] = []) {
  const res = await send("post", "/Groups", {
    schemas: [GROUP],
    displayName,
    members: memberIds.map((value) => ({ value })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; meta: { version: string } };
}

const ids = (res: { body: { Resources?: { id: string }[] } }) => (res.body.Resources ?? []).map((r) => r.id);
const memberIds = async (gid: string) => {
  const res = await get(`/Groups/${gid}`);
  return ((res.body.members ?? []) as { value: string }[]).map((m) => m.value).sort();
};

describe("group membership PATCHes as Entra ID, Okta, OneLogin and JumpCloud send them", () => {
  it('Okta/Entra: remove `members[value eq "a" or value eq "b"]` takes out both and keeps the rest (RFC 7644 §3.5.2.2)', async () => {
    const [a, b, c] = [await createUser(), await createUser(), await createUser()];
    const g = await createGroup("Or filter remove", [a.id, b.id, c.id]);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "remove", path: `members[value eq "${a.id}" or value eq "${b.id}"]` },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([c.id]);
  });

  it("Entra: remove of members by value list naming one who is not a member removes the others, no error", async () => {
    const [a, b, outsider] = [await createUser(), await createUser(), await createUser()];
    const g = await createGroup("Remove not-a-member", [a.id, b.id]);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "Remove", path: "members", value: [{ value: a.id }, { value: outsider.id }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
  });

  it("Okta: replace `members` with a list on a group of 300 leaves exactly that list (§3.5.2.3)", async () => {
    const users = [];
    for (let i = 0; i < 305; i++) users.push(await createUser());
    const before = users.slice(0, 300).map((u) => u.id);
    const after = users.slice(298).map((u) => u.id);
    const g = await createGroup("Large replace", before);
    const res = await patch(`/Groups/${g.id}`, [
      { op: "replace", path: "members", value: after.map((value) => ({ value })) },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([...after].sort());
  });

  it("OneLogin: an add of members whose value is one object, not an array, adds that member", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("Single object member", [a.id]);
    const res = await patch(`/Groups/${g.id}`, [{ op: "add", path: "members", value: { value: b.id } }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([a.id, b.id].sort());
  });

  it("a group PATCH with `?attributes=` answers 200 with the group (§3.5.2: MUST return 200 when attributes is given)", async () => {
    const a = await createUser();
    const g = await createGroup("Attributes on patch");
    const res = await patch(`/Groups/${g.id}?attributes=members`, [
      { op: "add", path: "members", value: [{ value: a.id }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
  });
});

describe("user attribute PATCHes as Entra ID writes them", () => {
  it('add `phoneNumbers[type eq "mobile"].value` on a user without phone numbers creates the mobile number', async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "+1 555 0100" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.phoneNumbers).toEqual([{ type: "mobile", value: "+1 555 0100" }]);
  });

  it('two sub-attributes of `addresses[type eq "work"]` in one PATCH make one work address, not two', async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "Add", path: 'addresses[type eq "work"].formatted', value: "1 Main St, Springfield" },
      { op: "Add", path: 'addresses[type eq "work"].streetAddress', value: "1 Main St" },
      { op: "Add", path: 'addresses[type eq "work"].locality', value: "Springfield" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.addresses).toEqual([
      {
        type: "work",
        formatted: "1 Main St, Springfield",
        streetAddress: "1 Main St",
        locality: "Springfield",
      },
    ]);
  });

  it('a path in another case (`Name.GivenName`, `EMAILS[TYPE eq "work"].VALUE`) is the same attribute (RFC 7643 §2.1)', async () => {
    const user = await createUser({
      name: { givenName: "Ada", familyName: "Lovelace" },
      emails: [{ value: "old@example.com", type: "work" }],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "Name.GivenName", value: "Augusta" },
      { op: "replace", path: 'EMAILS[TYPE eq "work"].VALUE', value: "new@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "Augusta", familyName: "Lovelace" });
    expect(res.body.emails).toEqual([{ value: "new@example.com", type: "work" }]);
  });

  it('a value-filter path after the core URN (`urn:...:User:emails[type eq "work"].value`) sets the work email', async () => {
    const user = await createUser({ emails: [{ value: "a@example.com", type: "work" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: `${USER}:emails[type eq "work"].value`, value: "b@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "b@example.com", type: "work" }]);
  });

  it('`active` as "TRUE", "False " and "true" is a boolean (Entra\'s string booleans, RFC 7643 §2.3.2)', async () => {
    const user = await createUser({ active: "TRUE" });
    expect(user.active).toBe(true);
    const off = await patch(`/Users/${user.id}`, [{ op: "Replace", path: "active", value: "False " }]);
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.active).toBe(false);
    const on = await patch(`/Users/${user.id}`, [{ op: "Replace", value: { active: "true" } }]);
    expect(on.body.active).toBe(true);
  });

  it('Entra: `roles` with `primary: "True"` is stored with a boolean primary', async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      {
        op: "Add",
        path: "roles",
        value: [{ primary: "True", type: "WindowsAzureActiveDirectoryRole", value: "Admin" }],
      },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.roles).toEqual([
      { primary: true, type: "WindowsAzureActiveDirectoryRole", value: "Admin" },
    ]);
  });

  it('Entra clearing the work email: remove `emails[type eq "work"].value` (with its old value) takes the work email out', async () => {
    // Entra sends the address being cleared as `value`; RFC 7644 §3.5.2.2 removes the sub-attribute.
    // An element left without its `value` (RFC 7643 §2.4: the attribute's significant value) is no
    // email: `[{type: "work", primary: true}]` would be a primary email with no address.
    const user = await createUser({
      emails: [
        { value: "w@example.com", type: "work", primary: true },
        { value: "h@example.com", type: "home" },
      ],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: 'emails[type eq "work"].value', value: "w@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "h@example.com", type: "home" }]);
    const phone = await createUser({ phoneNumbers: [{ value: "+1 555 0100", type: "mobile" }] });
    const cleared = await patch(`/Users/${phone.id}`, [
      { op: "Replace", path: 'phoneNumbers[type eq "mobile"].value', value: null },
    ]);
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body).not.toHaveProperty("phoneNumbers");
  });

  it('removing the last part of `addresses[type eq "work"]` leaves no work address; other parts keep it', async () => {
    const user = await createUser({
      addresses: [{ type: "work", formatted: "1 Main St", locality: "Springfield" }],
    });
    const partial = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: 'addresses[type eq "work"].formatted' },
    ]);
    expect(partial.body.addresses).toEqual([{ type: "work", locality: "Springfield" }]);
    const last = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: 'addresses[type eq "work"].locality' },
    ]);
    expect(last.status, JSON.stringify(last.body)).toBe(200);
    expect(last.body).not.toHaveProperty("addresses");
  });

  it("Entra clearing the manager: remove `<enterprise>:manager` leaves no manager", async () => {
    const boss = await createUser();
    const user = await createUser({
      schemas: [USER, ENT],
      [ENT]: { manager: { value: boss.id }, department: "R&D" },
    });
    const res = await patch(`/Users/${user.id}`, [{ op: "Remove", path: `${ENT}:manager` }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({ department: "R&D" });
  });
});

describe("user bodies", () => {
  it("Okta with password sync: the password is accepted and never returned (RFC 7643 §4.1.1 returned: never)", async () => {
    const user = await createUser({ password: "t1meMa$heen" });
    expect(user).not.toHaveProperty("password");
    const got = await get(`/Users/${user.id}`);
    expect(got.body).not.toHaveProperty("password");
    const asked = await get(`/Users/${user.id}?attributes=password,userName`);
    expect(asked.body).not.toHaveProperty("password");
  });

  it("a PUT without `schemas` replaces the user (Okta's and some HR connectors' PUT bodies)", async () => {
    const user = await createUser({ displayName: "Before" });
    const res = await send("put", `/Users/${user.id}`, {
      userName: user.userName,
      displayName: "After",
      active: false,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ displayName: "After", active: false });
  });

  it("a POST whose `schemas` names only the enterprise extension creates the user with its extension (RFC 7643 §3: the core schema is implied by the endpoint)", async () => {
    const res = await send("post", "/Users", {
      schemas: [ENT],
      userName: unique("ent-only"),
      [ENT]: { employeeNumber: "42" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.schemas).toEqual([USER, ENT]);
    expect(res.body[ENT]).toEqual({ employeeNumber: "42" });
  });

  it("a userName that differs only in case is the same user: a second POST is 409 uniqueness (RFC 7643 §4.1.1 caseExact false)", async () => {
    const userName = unique("Case.Dup");
    await createUser({ userName });
    const res = await send("post", "/Users", { schemas: [USER], userName: userName.toUpperCase() });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
  });

  it("a PATCH renaming a user to another user's userName is 409 uniqueness and changes nothing (§3.5.2)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const res = await patch(`/Users/${b.id}`, [{ op: "replace", path: "userName", value: a.userName }]);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
    expect((await get(`/Users/${b.id}`)).body.userName).toBe(b.userName);
  });
});

describe("lookups", () => {
  it('PingFederate\'s "workEmail" match: `emails eq "x"` finds the user by any email value (§3.4.2.2)', async () => {
    const email = unique("ping.work");
    const user = await createUser({ emails: [{ value: email, type: "work" }] });
    const res = await get(`/Users?filter=${q(`emails eq "${email.toUpperCase()}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([user.id]);
  });

  it('`meta.lastModified gt "<time>"` lists only the users changed after that time (§3.4.2.2 dateTime)', async () => {
    const old = await createUser();
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const fresh = await createUser();
    const res = await get(`/Users?filter=${q(`meta.lastModified gt "${since}"`)}&count=200`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toContain(fresh.id);
    expect(ids(res)).not.toContain(old.id);
  });

  it('`externalId eq "x" and userName eq "y"` matches only when both do (Okta/OneLogin import matching)', async () => {
    const user = await createUser({ externalId: "00u-ext-1" });
    const hit = await get(
      `/Users?filter=${q(`externalId eq "00u-ext-1" and userName eq "${user.userName}"`)}`,
    );
    expect(ids(hit)).toEqual([user.id]);
    const miss = await get(
      `/Users?filter=${q('externalId eq "00u-ext-1" and userName eq "someone@else.com"')}`,
    );
    expect(miss.status).toBe(200);
    expect(miss.body.totalResults).toBe(0);
  });

  it('`filter=id eq "<id>"` finds the user (OneLogin\'s read-back)', async () => {
    const user = await createUser();
    const res = await get(`/Users?filter=${q(`id eq "${user.id}"`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([user.id]);
  });

  it("`sortBy=userName&sortOrder=descending` is ignored, not refused: sort is not supported (RFC 7644 §3.4.2.3)", async () => {
    const config = await get("/ServiceProviderConfig");
    expect(config.body.sort).toEqual({ supported: false });
    const res = await get("/Users?sortBy=userName&sortOrder=descending&startIndex=1&count=2");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.Resources.length).toBe(2);
  });

  it("`count` without `startIndex` is the first page of that size (§3.4.2.4)", async () => {
    const res = await get("/Users?count=3");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ startIndex: 1, itemsPerPage: 3 });
    expect(res.body.Resources).toHaveLength(3);
  });

  it('Entra group look-up: `GET /Groups?excludedAttributes=members&filter=displayName eq "x"` has no members', async () => {
    const a = await createUser();
    const g = await createGroup("Entra Lookup Group", [a.id]);
    const res = await get(
      `/Groups?excludedAttributes=members&filter=${q('displayName eq "entra lookup group"')}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([g.id]);
    expect(res.body.Resources[0]).not.toHaveProperty("members");
    expect(res.body.Resources[0].displayName).toBe("Entra Lookup Group");
  });

  it("`GET /Users/<id>?attributes=groups` returns id and the user's groups (RFC 7643 §4.1.2)", async () => {
    const a = await createUser();
    const g = await createGroup("Groups attribute", [a.id]);
    const res = await get(`/Users/${a.id}?attributes=groups`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(a.id);
    expect(res.body.groups.map((x: { value: string }) => x.value)).toEqual([g.id]);
    expect(res.body).not.toHaveProperty("userName");
  });
});

describe('OneLogin\'s SCIM JSON templates (developers.onelogin.com, "Define your SCIM user schema")', () => {
  it("the documented Enterprise User template (SCIM 1.x URNs, `emails` as one object, `managerId`) creates the user with its enterprise attributes", async () => {
    // OneLogin's documented template names the SCIM 1.1 schemas; the SCIM v2 connectors send it
    // as the admin pasted it. RFC 7643 §4.3 names the same attributes under the 2.0 URN, with the
    // manager's id in `value` (SCIM 1.1's enterprise extension called it `managerId`).
    const boss = await createUser();
    const userName = unique("onelogin");
    const res = await send("post", "/Users", {
      schemas: ["urn:scim:schemas:core:1.0", "urn:scim:schemas:extension:enterprise:1.0"],
      userName,
      name: { familyName: "Lovelace", givenName: "Ada", formatted: "Ada Lovelace" },
      emails: { value: userName, type: "work", primary: true },
      title: "Analyst",
      "urn:scim:schemas:extension:enterprise:1.0": {
        department: "R&D",
        manager: { managerId: boss.id, displayName: "The Boss" },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.emails).toEqual([{ value: userName, type: "work", primary: true }]);
    expect(res.body[ENT]).toEqual({
      department: "R&D",
      manager: { value: boss.id, displayName: "The Boss" },
    });
    expect(res.body).not.toHaveProperty("urn:scim:schemas:extension:enterprise:1.0");
    const found = await get(`/Users?filter=${q(`${ENT}:department eq "r&d" and userName eq "${userName}"`)}`);
    expect(ids(found)).toEqual([res.body.id]);
  });

  it("`managerId` under the 2.0 enterprise URN (templates mixing both versions) is the manager's id", async () => {
    const boss = await createUser();
    const res = await send("post", "/Users", {
      schemas: [USER, ENT],
      userName: unique("onelogin-mixed"),
      [ENT]: { manager: { managerId: boss.id, displayName: "The Boss" } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body[ENT]).toEqual({ manager: { value: boss.id, displayName: "The Boss" } });
  });

  it("a PATCH path under the SCIM 1.1 enterprise URN sets the 2.0 attribute", async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "urn:scim:schemas:extension:enterprise:1.0:department", value: "Ops" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({ department: "Ops" });
  });
});

describe("Keycloak's SCIM client (mitodl/keycloak-scim, on the Captain-P-Goldfish SCIM SDK)", () => {
  it('a user PATCH with `active` as the string "false" and userName/displayName replaced deactivates the user', async () => {
    // UserAdapter.toPatchBuilder: `.value(active.toString())`.
    const user = await createUser({ displayName: "KC" });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "active", value: "false" },
      { op: "replace", path: "userName", value: user.userName },
      { op: "replace", path: "displayName", value: "KC User" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ active: false, displayName: "KC User", userName: user.userName });
  });

  it("a group PATCH replacing members, displayName and externalId; with no members left, a remove of `members` without value", async () => {
    // GroupAdapter.toPatchBuilder: members as {value, type: "User"}, `$ref` relative in toSCIM.
    const [a, b] = [await createUser(), await createUser()];
    const g = await createGroup("kc-group", [a.id]);
    const replace = await patch(`/Groups/${g.id}`, [
      { op: "replace", path: "members", value: [{ value: b.id, type: "User", $ref: `Users/${b.id}` }] },
      { op: "replace", path: "displayName", value: "kc-group" },
      { op: "replace", path: "externalId", value: "kc-6f1e" },
    ]);
    expect(replace.status, JSON.stringify(replace.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([b.id]);
    const emptied = await patch(`/Groups/${g.id}`, [
      { op: "remove", path: "members" },
      { op: "replace", path: "displayName", value: "kc-group" },
      { op: "replace", path: "externalId", value: "kc-6f1e" },
    ]);
    expect(emptied.status, JSON.stringify(emptied.body)).toBe(204);
    expect(await memberIds(g.id)).toEqual([]);
    expect((await get(`/Groups/${g.id}`)).body.externalId).toBe("kc-6f1e");
  });

  it("a PUT echoing a relative `meta.location`, an email without type and roles stores them", async () => {
    const user = await createUser();
    const res = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      id: user.id,
      externalId: "kc-user-1",
      userName: user.userName,
      name: {},
      emails: [{ value: user.userName }],
      roles: [{ value: "analyst" }],
      active: true,
      meta: { location: `Users/${user.id}` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ externalId: "kc-user-1", emails: [{ value: user.userName }] });
    expect(res.body.roles).toEqual([{ value: "analyst" }]);
    expect(res.body.meta.location).toMatch(new RegExp(`^https?://.+/scim/v2/okta/Users/${user.id}$`));
  });
});

describe("headers", () => {
  it("`Accept: application/json` only is answered, not 406 (RFC 7644 §3.8: SHOULD support it), as application/scim+json (issue 2)", async () => {
    const res = await t.request.get(`${base}/Users?count=1`).set(t.okta).set("Accept", "application/json");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
  });

  it('`Content-Type: application/scim+json; charset="utf-8"` (a quoted charset, RFC 9110 §5.6.6) is accepted', async () => {
    for (const type of ['application/scim+json; charset="utf-8"', "application/scim+json;charset=UTF-8"]) {
      const res = await send("post", "/Users", { schemas: [USER], userName: unique("quoted") }, type);
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });

  it("a lower-case `bearer` scheme is accepted (RFC 9110 §11.1: the scheme is case-insensitive)", async () => {
    const res = await t.request.get(`${base}/Users?count=1`).set("Authorization", "bearer okta-token-123");
    expect(res.status).toBe(200);
  });

  it("a DELETE with a JSON body (some HTTP clients send `{}` or the resource) deletes", async () => {
    const user = await createUser();
    const res = await t.request
      .delete(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify({ schemas: [USER], id: user.id }));
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect((await get(`/Users/${user.id}`)).status).toBe(404);
  });

  it("a user PATCH answers 200 with the user; a group PATCH without attributes 204 (RFC 7644 §3.5.2)", async () => {
    const user = await createUser();
    const u = await patch(`/Users/${user.id}`, [{ op: "replace", path: "displayName", value: "X" }]);
    expect(u.status).toBe(200);
    expect(u.body.id).toBe(user.id);
    const g = await createGroup("Patch status");
    const gr = await patch(`/Groups/${g.id}`, [
      { op: "replace", path: "displayName", value: "Patch status 2" },
    ]);
    expect(gr.status).toBe(204);
    expect(gr.text ?? "").toBe("");
  });
});
