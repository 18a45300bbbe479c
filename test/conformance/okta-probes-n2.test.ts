/**
 * Probes (round n2) of the SCIM intake as Okta's less common flows send requests (intake only,
 * real Redis), beside the Okta pins of idp-probes-d/e/g and the okta-* replays:
 * - the Okta SCIM 2.0 CRUD test (Runscope, "Okta-SCIM-20-CRUD-Test.json") updates a user by a
 *   read-modify-write PUT: it GETs the user and PUTs the whole answer back with one attribute
 *   changed, so the body echoes `id`, `meta`, `schemas` and the read-only `groups` (RFC 7643
 *   §4.1.2: groups is readOnly, membership is changed on the Group), and Okta's create carries a
 *   `password` placeholder even without password sync;
 * - Okta's import pages `/Groups` with `startIndex` and `count` (Okta's SCIM 2.0 reference,
 *   "Retrieve Groups": the same order whatever the page size); the spec test's paging edge cases
 *   (`count=0`, `startIndex=0`, negative values, RFC 7644 §3.4.2.4) were pinned on /Users only;
 * - an Okta AIW (custom) app pushes a group rename as a PUT carrying the whole member list, then
 *   the OIN form, a no-path replace holding `id` and `displayName` (Okta's reference, "Update a
 *   specific Group name"), which it sends with every membership update.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2-${++n}@okta.example`;
const q = (filter: string) => encodeURIComponent(filter);

const suite = scimSourceSuite("conformance-okta-probes-n2", "okta");
const { get, send } = suite;

type Resource = { id: string; meta: { version: string } } & Record<string, unknown>;

const created = (path: string, body: Record<string, unknown>) => suite.created<Resource>(path, body);

async function read(path: string): Promise<Resource> {
  const res = await get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Resource;
}

const memberIds = async (groupId: string) =>
  ((await read(`/Groups/${groupId}`)).members as Array<{ value: string }> | undefined)?.map((m) => m.value) ??
  [];

describe("the CRUD test's read-modify-write PUT of a user", () => {
  it("echoing id, meta, schemas, groups and a password changes the one attribute; membership stays", async () => {
    const userName = unique("riley");
    const user = await created("/Users", {
      schemas: [USER, ENT],
      userName,
      name: { givenName: "Riley", familyName: "Okta" },
      emails: [{ value: userName, type: "work", primary: true }],
      displayName: "Riley Okta",
      phoneNumbers: [{ value: "415.123.4567" }],
      password: "N3verSt0red!",
      active: true,
      [ENT]: { department: "Eng" },
    });
    expect(user).not.toHaveProperty("password");
    const team = await created("/Groups", {
      schemas: [GROUP],
      displayName: `Team ${n}`,
      members: [{ value: user.id }],
    });
    const other = await created("/Groups", { schemas: [GROUP], displayName: `Other ${n}` });

    const before = await read(`/Users/${user.id}`);
    expect(before.groups).toEqual([expect.objectContaining({ value: team.id })]);
    const echoed = {
      ...before,
      name: { ...(before.name as Record<string, unknown>), givenName: "Rileyupdate" },
      password: "N3verSt0red!",
      // The read-only groups as a client might change them: still not a membership change.
      groups: [{ value: other.id, display: other.displayName }],
    };
    const res = await send("put", `/Users/${user.id}`, echoed);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).not.toHaveProperty("password");
    expect(res.body.name).toEqual({ givenName: "Rileyupdate", familyName: "Okta" });
    expect(res.body.meta.version).not.toBe(before.meta.version);
    const after = await read(`/Users/${user.id}`);
    expect(after[ENT]).toEqual({ department: "Eng" });
    expect(after.emails).toEqual(before.emails);
    expect(after.phoneNumbers).toEqual([{ value: "415.123.4567" }]);
    expect(after.active).toBe(true);
    expect(await memberIds(team.id)).toEqual([user.id]);
    expect(await memberIds(other.id)).toEqual([]);
  });

  it("a create carrying `groups` puts the user in no group", async () => {
    const group = await created("/Groups", { schemas: [GROUP], displayName: `Named ${++n}` });
    const user = await created("/Users", {
      schemas: [USER],
      userName: unique("grouped"),
      password: "placeholder",
      groups: [{ value: group.id, display: group.displayName }],
    });
    expect(user.groups ?? []).toEqual([]);
    expect(await memberIds(group.id)).toEqual([]);
  });
});

describe("Okta's import of /Groups, page by page (RFC 7644 §3.4.2.4)", () => {
  let ids: string[] = [];
  // Every group of the source so far (the ones above and three more), in the order /Groups lists them.
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) await created("/Groups", { schemas: [GROUP], displayName: `Page ${++n}` });
    const all = await get("/Groups?startIndex=1&count=100&excludedAttributes=members");
    ids = (all.body.Resources as Resource[]).map((g) => g.id);
  });

  it("count=0 answers totalResults and no resources; the total counts every group", async () => {
    const res = await get("/Groups?count=0");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ totalResults: ids.length, itemsPerPage: 0, startIndex: 1 });
    expect(res.body.Resources ?? []).toEqual([]);
  });

  it("startIndex=0 and a negative startIndex count as 1, a negative count as 0", async () => {
    for (const startIndex of ["0", "-5"]) {
      const res = await get(`/Groups?startIndex=${startIndex}&count=1&excludedAttributes=members`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.startIndex).toBe(1);
      expect((res.body.Resources as Resource[]).map((g) => g.id)).toEqual([ids[0]]);
    }
    const negative = await get("/Groups?count=-1");
    expect(negative.status).toBe(200);
    expect(negative.body).toMatchObject({ totalResults: ids.length, itemsPerPage: 0 });
  });

  it("pages of one, as Okta steps startIndex, list every group once in the same order", async () => {
    const seen: string[] = [];
    for (let startIndex = 1; startIndex <= ids.length; startIndex++) {
      const res = await get(`/Groups?startIndex=${startIndex}&count=1&excludedAttributes=members`);
      expect(res.body).toMatchObject({ totalResults: ids.length, startIndex, itemsPerPage: 1 });
      seen.push(...(res.body.Resources as Resource[]).map((g) => g.id));
    }
    expect(seen).toEqual(ids);
    const past = await get(`/Groups?startIndex=${ids.length + 1}&count=100`);
    expect(past.body).toMatchObject({ totalResults: ids.length, itemsPerPage: 0 });
  });
});

describe("an Okta group rename: a PUT with the member list (AIW), then the OIN no-path replace", () => {
  it("the PUT renames and sets the members; the replace of id and displayName keeps them", async () => {
    const [a, b] = [
      await created("/Users", { schemas: [USER], userName: unique("a") }),
      await created("/Users", { schemas: [USER], userName: unique("b") }),
    ];
    const oldName = `Test SCIMv2 ${++n}`;
    const group = await created("/Groups", {
      schemas: [GROUP],
      displayName: oldName,
      members: [{ value: a.id }],
    });
    const newName = `Test SCIMv20 ${n}`;
    const put = await send("put", `/Groups/${group.id}`, {
      schemas: [GROUP],
      id: group.id,
      displayName: newName,
      members: [
        { value: b.id, display: b.userName },
        { value: a.id, display: a.userName },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.displayName).toBe(newName);
    expect((await memberIds(group.id)).sort()).toEqual([a.id, b.id].sort());
    const byOld = await get(`/Groups?filter=${q(`displayName eq "${oldName}"`)}&startIndex=1&count=100`);
    expect(byOld.body.totalResults).toBe(0);
    const byNew = await get(
      `/Groups?filter=${q(`displayName eq "${newName.toUpperCase()}"`)}&excludedAttributes=members`,
    );
    expect((byNew.body.Resources as Resource[]).map((g) => g.id)).toEqual([group.id]);

    const renamed = `Test SCIMv21 ${n}`;
    const patch = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", value: { id: group.id, displayName: renamed } }],
    });
    expect(patch.status, JSON.stringify(patch.body)).toBe(204);
    const after = await read(`/Groups/${group.id}`);
    expect(after.displayName).toBe(renamed);
    expect((await memberIds(group.id)).sort()).toEqual([a.id, b.id].sort());
    // Sent again with the next membership update: nothing changes, the version stays.
    const again = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", value: { id: group.id, displayName: renamed } }],
    });
    expect(again.status).toBe(204);
    expect((await read(`/Groups/${group.id}`)).meta.version).toBe(after.meta.version);
  });
});
