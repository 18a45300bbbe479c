import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

let t: ScimTestApp;
const ids: string[] = [];
beforeAll(async () => {
  t = await createScimTestApp("groups");
  for (let i = 0; i < 4; i++) {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: `member${i}@example.com` });
    ids.push(res.body.id);
  }
});
afterAll(async () => {
  await t.close();
});

const members = (res: { body: { members?: Array<{ value: string }> } }) =>
  (res.body.members ?? []).map((m) => m.value).sort();

describe("/Groups", () => {
  it("creates a group with members, kept in both directions", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({
        schemas: [GROUP],
        displayName: "Engineering",
        members: [{ value: ids[0] }, { value: ids[1] }],
      });
    expect(res.status).toBe(201);
    expect(members(res)).toEqual([ids[0], ids[1]].sort());
    const user = await t.request.get(`/scim/v2/okta/Users/${ids[0]}`).set(t.okta);
    expect(user.body.groups.map((g: { value: string }) => g.value)).toContain(res.body.id);
  });

  it("409 for a displayName that differs only in case", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "ENGINEERING" });
    expect(res.status).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
  });

  it("400 for a member that is not a user of this source, and nothing stored", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({
        schemas: [GROUP],
        displayName: "Ghosts",
        members: [{ value: "00000000-0000-0000-0000-000000000000" }],
      });
    expect(res.status).toBe(400);
    const list = await t.request
      .get("/scim/v2/okta/Groups")
      .query({ filter: 'displayName eq "Ghosts"' })
      .set(t.okta);
    expect(list.body.totalResults).toBe(0);
  });

  it("Okta: remove-and-add in one PATCH applies in order; replace members with [] empties", async () => {
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Push", members: [{ value: ids[0] }] });
    const patch = await t.request
      .patch(`/scim/v2/okta/Groups/${g.body.id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [
          { op: "remove", path: `members[value eq "${ids[0]}"]` },
          { op: "add", path: "members", value: [{ value: ids[2] }, { value: ids[3] }] },
        ],
      });
    expect([200, 204]).toContain(patch.status);
    const after = await t.request.get(`/scim/v2/okta/Groups/${g.body.id}`).set(t.okta);
    expect(members(after)).toEqual([ids[2], ids[3]].sort());
    await t.request
      .patch(`/scim/v2/okta/Groups/${g.body.id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "members", value: [] }] });
    const empty = await t.request.get(`/scim/v2/okta/Groups/${g.body.id}`).set(t.okta);
    expect(members(empty)).toEqual([]);
  });

  it("Entra: remove with a value list removes only those members", async () => {
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Entra-style", members: ids.map((value) => ({ value })) });
    const patch = await t.request
      .patch(`/scim/v2/okta/Groups/${g.body.id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "Remove", path: "members", value: [{ value: ids[1] }] }],
      });
    expect([200, 204]).toContain(patch.status);
    const after = await t.request.get(`/scim/v2/okta/Groups/${g.body.id}`).set(t.okta);
    expect(members(after)).toEqual([ids[0], ids[2], ids[3]].sort());
  });

  it("excludedAttributes=members leaves members out", async () => {
    const res = await t.request
      .get("/scim/v2/okta/Groups")
      .query({ filter: 'displayName eq "engineering"', excludedAttributes: "members" })
      .set(t.okta);
    expect(res.body.totalResults).toBe(1);
    expect(res.body.Resources[0].members).toBeUndefined();
    expect(res.body.Resources[0].displayName).toBe("Engineering");
  });

  it("deleting a user removes it from its groups", async () => {
    const u = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "leaver@example.com" });
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Leavers", members: [{ value: u.body.id }] });
    await t.request.delete(`/scim/v2/okta/Users/${u.body.id}`).set(t.okta);
    const after = await t.request.get(`/scim/v2/okta/Groups/${g.body.id}`).set(t.okta);
    expect(members(after)).toEqual([]);
  });

  it("PUT replaces name and members; DELETE answers 204 and never touches members", async () => {
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Temp", members: [{ value: ids[0] }] });
    const put = await t.request
      .put(`/scim/v2/okta/Groups/${g.body.id}`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Temp Renamed", members: [{ value: ids[3] }] });
    expect(put.status).toBe(200);
    expect(put.body.displayName).toBe("Temp Renamed");
    expect(members(put)).toEqual([ids[3]]);
    expect((await t.request.delete(`/scim/v2/okta/Groups/${g.body.id}`).set(t.okta)).status).toBe(204);
    expect((await t.request.get(`/scim/v2/okta/Users/${ids[3]}`).set(t.okta)).status).toBe(200);
  });
});

describe("PATCH /Groups members filters beyond value eq (RFC 7644 §3.5.2.2-3)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const createGroup = async (displayName: string, memberIds: string[]) => {
    const res = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName, members: memberIds.map((value) => ({ value })) });
    expect(res.status).toBe(201);
    return res.body as { id: string; meta: { version: string } };
  };
  const patchGroup = (id: string, Operations: object[]) =>
    t.request
      .patch(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations });
  const getGroup = (id: string) => t.request.get(`/scim/v2/okta/Groups/${id}`).set(t.okta);
  const groupsOf = async (userId: string) =>
    ((await t.request.get(`/scim/v2/okta/Users/${userId}`).set(t.okta)).body.groups ?? []).map(
      (g: { value: string }) => g.value,
    );

  it("remove members[value ne x] keeps only x, in both directions", async () => {
    const g = await createGroup("Filter-ne", ids);
    const res = await patchGroup(g.id, [{ op: "remove", path: `members[value ne "${ids[1]}"]` }]);
    expect(res.status).toBe(204);
    expect(members(await getGroup(g.id))).toEqual([ids[1]]);
    expect(await groupsOf(ids[0]!)).not.toContain(g.id);
    expect(await groupsOf(ids[1]!)).toContain(g.id);
  });

  it("remove by type, and by value eq or-ed with another comparison", async () => {
    const g = await createGroup("Filter-or", ids);
    const or = await patchGroup(g.id, [
      { op: "remove", path: `members[value eq "${ids[0]}" or value sw "${ids[2]}"]` },
    ]);
    expect(or.status).toBe(204);
    expect(members(await getGroup(g.id))).toEqual([ids[1], ids[3]].sort());
    const all = await patchGroup(g.id, [{ op: "remove", path: 'members[type eq "User"]' }]);
    expect(all.status).toBe(204);
    expect(members(await getGroup(g.id))).toEqual([]);
  });

  it("a remove whose filter matches no member changes nothing (204, same version)", async () => {
    const g = await createGroup("Filter-none", [ids[0]!, ids[1]!]);
    const res = await patchGroup(g.id, [{ op: "remove", path: 'members[display eq "Ada"]' }]);
    expect(res.status).toBe(204);
    const after = await getGroup(g.id);
    expect(members(after)).toEqual([ids[0], ids[1]].sort());
    expect(after.body.meta.version).toBe(g.meta.version);
  });

  it("replace members[filter] swaps the matching member for the value's", async () => {
    const g = await createGroup("Filter-replace", [ids[0]!, ids[1]!]);
    const res = await patchGroup(g.id, [
      { op: "replace", path: `members[value eq "${ids[0]}" and type eq "User"]`, value: { value: ids[2] } },
    ]);
    expect(res.status).toBe(204);
    expect(members(await getGroup(g.id))).toEqual([ids[1], ids[2]].sort());
    expect(await groupsOf(ids[0]!)).not.toContain(g.id);
    expect(await groupsOf(ids[2]!)).toContain(g.id);
  });

  it("400 noTarget for a replace whose filter matches nothing, and nothing changes", async () => {
    const g = await createGroup("Filter-notarget", [ids[0]!]);
    const res = await patchGroup(g.id, [
      { op: "replace", path: "displayName", value: "Filter-renamed" },
      { op: "replace", path: 'members[value sw "nobody"]', value: { value: ids[1] } },
    ]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "noTarget" });
    const after = await getGroup(g.id);
    expect(after.body.displayName).toBe("Filter-notarget");
    expect(members(after)).toEqual([ids[0]]);
    expect(after.body.meta.version).toBe(g.meta.version);
  });

  it("400 invalidFilter for a members filter that does not parse, and nothing changes", async () => {
    const g = await createGroup("Filter-bad", [ids[0]!]);
    for (const path of ['members[value eq "a" or]', 'members[value zz "a"]']) {
      const res = await patchGroup(g.id, [{ op: "remove", path }]);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidFilter" });
    }
    const after = await getGroup(g.id);
    expect(members(after)).toEqual([ids[0]]);
    expect(after.body.meta.version).toBe(g.meta.version);
  });

  it("reads the member list only for a filter that needs it", async () => {
    const g = await createGroup("Filter-reads", [ids[0]!, ids[1]!]);
    const update = vi.spyOn(t.directory, "updateGroup");
    await patchGroup(g.id, [{ op: "remove", path: `members[value eq "${ids[0]}"]` }]);
    await patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: ids[0] }] }]);
    await patchGroup(g.id, [{ op: "remove", path: `members[value ne "${ids[0]}"]` }]);
    expect(update.mock.calls.map((call) => call[3]?.withMembers)).toEqual([false, false, true]);
    expect(members(await getGroup(g.id))).toEqual([ids[0]]);
  });

  it("a membership change between reading the members and writing makes the PATCH start over", async () => {
    const g = await createGroup("Filter-race", [ids[0]!, ids[1]!]);
    // Right after the PATCH has read the group (and its members), another client adds a member.
    const pipeline = t.redis.pipeline.bind(t.redis);
    const update = t.directory.updateGroup.bind(t.directory);
    let competing: (() => Promise<unknown>) | undefined = () =>
      update("okta", g.id, (cur) => ({ resource: cur.resource, members: { add: [ids[2]!] } }));
    let runs = 0;
    vi.spyOn(t.directory, "updateGroup").mockImplementation((source, id, mutate, options) =>
      update(
        source,
        id,
        (cur) => {
          runs += 1;
          return mutate(cur);
        },
        options,
      ),
    );
    vi.spyOn(t.redis, "pipeline").mockImplementation((...args: Parameters<typeof t.redis.pipeline>) => {
      const p = pipeline(...args);
      const exec = p.exec.bind(p);
      p.exec = async (...execArgs: Parameters<typeof exec>) => {
        const out = await exec(...execArgs);
        const run = competing;
        competing = undefined;
        if (run) await run();
        return out;
      };
      return p;
    });
    const res = await patchGroup(g.id, [{ op: "remove", path: `members[value ne "${ids[0]}"]` }]);
    expect(res.status).toBe(204);
    expect(competing).toBeUndefined();
    expect(runs).toBe(2);
    // The member added meanwhile is removed too: the filter saw the list as it was when written.
    expect(members(await getGroup(g.id))).toEqual([ids[0]]);
    expect(await groupsOf(ids[2]!)).not.toContain(g.id);
  });
});

describe("group displayName hygiene at intake", () => {
  it("POST trims displayName (409 against the stored one) and refuses control characters", async () => {
    const first = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: " Trimmed Team " });
    expect(first.status).toBe(201);
    expect(first.body.displayName).toBe("Trimmed Team");
    const again = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "trimmed team\u2003" });
    expect(again.status).toBe(409);
    expect(again.body.scimType).toBe("uniqueness");
    const before = await t.directory.countEntities("okta", "group");
    const bad = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Bad\u0000Team" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
    expect(bad.body.detail).toMatch(/displayName/);
    expect(await t.directory.countEntities("okta", "group")).toBe(before);
  });

  it("PATCH trims a new displayName and refuses one with control characters", async () => {
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Hygiene" });
    const url = `/scim/v2/okta/Groups/${g.body.id}`;
    const ok = await t.request
      .patch(url)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: " Hygiene 2 " }] });
    expect(ok.status).toBe(204);
    expect((await t.request.get(url).set(t.okta)).body.displayName).toBe("Hygiene 2");
    const bad = await t.request
      .patch(url)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "Hygiene\n3" }] });
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe("invalidValue");
    expect((await t.request.get(url).set(t.okta)).body.displayName).toBe("Hygiene 2");
  });

  it("a filter on displayName with surrounding spaces finds the trimmed group (look up before create)", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Spaced Lookup" });
    expect(created.status).toBe(201);
    const spaced = 'displayName eq " Spaced Lookup "';
    const get = await t.request.get("/scim/v2/okta/Groups").query({ filter: spaced }).set(t.okta);
    expect(get.status).toBe(200);
    expect(get.body.totalResults).toBe(1);
    expect(get.body.Resources[0]).toMatchObject({ id: created.body.id, displayName: "Spaced Lookup" });
    const search = await t.request
      .post("/scim/v2/okta/Groups/.search")
      .set(t.okta)
      .send({ schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], filter: spaced });
    expect(search.status).toBe(200);
    expect(search.body.totalResults).toBe(1);
    expect(search.body.Resources[0].id).toBe(created.body.id);
    // Through the scan (not the index) too.
    const scanned = await t.request
      .get("/scim/v2/okta/Groups")
      .query({
        filter:
          'displayName eq " spaced lookup\u00a0" and displayName sw "spaced look" or displayName eq "\u00a0nothing "',
      })
      .set(t.okta);
    expect(scanned.body.totalResults).toBe(1);
    // sw compares the literal as sent: no stored displayName starts with a space.
    const startsWithSpace = await t.request
      .get("/scim/v2/okta/Groups")
      .query({ filter: 'displayName sw " spaced look"' })
      .set(t.okta);
    expect(startsWithSpace.body.totalResults).toBe(0);
  });
});
