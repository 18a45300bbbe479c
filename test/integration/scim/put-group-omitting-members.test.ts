/**
 * A group PUT that leaves `members` out does not assert them (RFC 7644 §3.5.1: omitted readWrite
 * attributes "MAY be assumed to be not asserted by the client"): a rename by PUT keeps everyone in
 * the group. `"members": []` still empties it, and a stated list replaces it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

let t: ScimTestApp;
const ids: string[] = [];
beforeAll(async () => {
  t = await createScimTestApp("put-group-omitting-members");
  for (const userName of ["m1@example.com", "m2@example.com"]) {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName });
    ids.push(res.body.id);
  }
});
afterAll(async () => {
  await t.close();
});

const memberIds = (body: { members?: Array<{ value: string }> }) =>
  (body.members ?? []).map((m) => m.value).sort();

describe("PUT /Groups without members keeps them", () => {
  it("a rename keeps the members, in the answer and in the store; [] empties them", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Before", members: ids.map((value) => ({ value })) });
    const id = created.body.id as string;
    const put = await t.request
      .put(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [GROUP], id, displayName: "After" });
    expect(put.status).toBe(200);
    expect(put.body.displayName).toBe("After");
    expect(memberIds(put.body)).toEqual([...ids].sort());
    expect(put.headers.etag).toBe(put.body.meta.version);
    const read = await t.request.get(`/scim/v2/okta/Groups/${id}`).set(t.okta);
    expect(memberIds(read.body)).toEqual([...ids].sort());
    expect(read.body.meta.version).toBe(put.body.meta.version);

    const nulled = await t.request
      .put(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "After", members: null });
    expect(memberIds(nulled.body)).toEqual([...ids].sort());

    const emptied = await t.request
      .put(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "After", Members: [] });
    expect(emptied.status).toBe(200);
    expect(memberIds(emptied.body)).toEqual([]);
  });

  it("a stale If-Match is still 412, and a bad body still 400, with nothing changed", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Guarded", members: [{ value: ids[0] }] });
    const id = created.body.id as string;
    const stale = await t.request
      .put(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .set("If-Match", 'W/"999"')
      .send({ schemas: [GROUP], displayName: "Guarded Renamed" });
    expect(stale.status).toBe(412);
    const bad = await t.request
      .put(`/scim/v2/okta/Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "" });
    expect(bad.status).toBe(400);
    const read = await t.request.get(`/scim/v2/okta/Groups/${id}`).set(t.okta);
    expect(read.body.displayName).toBe("Guarded");
    expect(memberIds(read.body)).toEqual([ids[0]]);
  });
});
