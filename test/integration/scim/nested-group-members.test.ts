/**
 * A group as a member (a nested group, `type: "Group"`, as Entra and JumpCloud can send) is not a
 * member the platform's groups can hold: the write is refused with a SCIM error that says so, and
 * nothing of it is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("nested-group-members");
});
afterAll(async () => {
  await t.close();
});

describe("a group as a member", () => {
  it("is refused with invalidValue naming it and saying groups are not members; the group is unchanged", async () => {
    const user = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "nested-member@example.com" });
    expect(user.status).toBe(201);
    const inner = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Nested inner" });
    expect(inner.status).toBe(201);
    const outer = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Nested outer", members: [{ value: user.body.id }] });
    expect(outer.status).toBe(201);

    const res = await t.request
      .patch(`/scim/v2/okta/Groups/${outer.body.id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "add", path: "members", value: [{ value: inner.body.id, type: "Group" }] }],
      });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      scimType: "invalidValue",
    });
    expect(res.body.detail).toContain(inner.body.id);
    expect(res.body.detail).toMatch(/groups as members are not supported/);

    const after = await t.request.get(`/scim/v2/okta/Groups/${outer.body.id}`).set(t.okta);
    expect(after.body.members.map((m: { value: string }) => m.value)).toEqual([user.body.id]);

    const created = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({
        schemas: [GROUP],
        displayName: "Nested on create",
        members: [{ value: inner.body.id, type: "Group" }],
      });
    expect(created.status).toBe(400);
    expect(created.body.detail).toMatch(/groups as members are not supported/);
    const list = await t.request
      .get(`/scim/v2/okta/Groups?filter=${encodeURIComponent('displayName eq "Nested on create"')}`)
      .set(t.okta);
    expect(list.body.totalResults).toBe(0);
  });
});
