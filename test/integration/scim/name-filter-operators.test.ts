import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

/**
 * userName and a Group's displayName are stored trimmed. A filter literal compared with them is
 * trimmed only for eq/ne (the whole name, as an identity provider looks it up before creating);
 * co, sw, ew, gt, ge, lt and le compare the literal as sent. Over HTTP, through the index (eq)
 * and the scan (everything else), for GET and POST .search.
 */
let t: ScimTestApp;
const userIds = new Map<string, string>();
const groupIds = new Map<string, string>();

beforeAll(async () => {
  t = await createScimTestApp("name-filter-ops");
  for (const userName of ["ada@example.com", "Ada Lovelace", "bob@example.com"]) {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName });
    expect(res.status).toBe(201);
    userIds.set(userName, res.body.id);
  }
  for (const displayName of ["Ops Team", "Admins"]) {
    const res = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName });
    expect(res.status).toBe(201);
    groupIds.set(displayName, res.body.id);
  }
});
afterAll(async () => {
  await t.close();
});

async function users(filter: string): Promise<string[]> {
  const get = await t.request.get("/scim/v2/okta/Users").query({ filter }).set(t.okta);
  expect(get.status).toBe(200);
  const search = await t.request
    .post("/scim/v2/okta/Users/.search")
    .set(t.okta)
    .send({ schemas: [SEARCH], filter });
  expect(search.status).toBe(200);
  const names = (get.body.Resources ?? []).map((r: { userName: string }) => r.userName).sort();
  expect((search.body.Resources ?? []).map((r: { userName: string }) => r.userName).sort()).toEqual(names);
  expect(get.body.totalResults).toBe(names.length);
  return names;
}

async function groups(filter: string): Promise<string[]> {
  const get = await t.request.get("/scim/v2/okta/Groups").query({ filter }).set(t.okta);
  expect(get.status).toBe(200);
  expect(get.body.totalResults).toBe((get.body.Resources ?? []).length);
  return (get.body.Resources ?? []).map((r: { displayName: string }) => r.displayName).sort();
}

describe("userName filters over HTTP", () => {
  it('co " " finds the names with an inner space, not every user', async () => {
    expect(await users('userName co " "')).toEqual(["Ada Lovelace"]);
    expect(await users('userName co "a L"')).toEqual(["Ada Lovelace"]);
    expect(await users('userName co " ada@example.com "')).toEqual([]);
  });

  it('sw " x" and ew "x " find nothing: no stored name starts or ends with a space', async () => {
    expect(await users('userName sw " ada"')).toEqual([]);
    expect(await users('userName ew "example.com "')).toEqual([]);
    expect(await users('userName sw "ada"')).toEqual(["Ada Lovelace", "ada@example.com"]);
    expect(await users('userName sw "ada "')).toEqual(["Ada Lovelace"]);
    expect(await users('userName ew "example.com"')).toEqual(["ada@example.com", "bob@example.com"]);
  });

  it('eq " x " keeps finding "x" (index), and ne " x " excludes it (scan)', async () => {
    const found = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName eq " ada@example.com "' })
      .set(t.okta);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0].id).toBe(userIds.get("ada@example.com"));
    expect(await users('userName eq "\\u00a0ADA LOVELACE\\t"')).toEqual(["Ada Lovelace"]);
    expect(await users('userName ne " ada@example.com "')).toEqual(["Ada Lovelace", "bob@example.com"]);
    expect(await users('userName eq " ada@example.com " and userName sw " ada"')).toEqual([]);
  });

  it("gt/ge/lt/le order against the literal as sent", async () => {
    expect(await users('userName ge "bob@example.com "')).toEqual([]);
    expect(await users('userName ge "bob@example.com"')).toEqual(["bob@example.com"]);
    expect(await users('userName lt " b"')).toEqual([]);
    expect((await users('userName gt " b"')).length).toBe(3);
  });
});

describe("group displayName filters over HTTP", () => {
  it('co " ", sw " x", ew "x " compare as sent; eq " x " finds the trimmed group', async () => {
    expect(await groups('displayName co " "')).toEqual(["Ops Team"]);
    expect(await groups('displayName sw " Ops"')).toEqual([]);
    expect(await groups('displayName ew "Team "')).toEqual([]);
    expect(await groups('displayName sw "ops"')).toEqual(["Ops Team"]);
    expect(await groups('displayName eq " ops team "')).toEqual(["Ops Team"]);
    expect(await groups('displayName ne " Admins\\t"')).toEqual(["Ops Team"]);
  });
});
