import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

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
