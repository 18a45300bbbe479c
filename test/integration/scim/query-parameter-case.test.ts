/**
 * List and projection parameters named in another case (`Filter=`, `COUNT=`, `excludedattributes=`,
 * and a SearchRequest's `Filter`). RFC 7643 §2.1 makes attribute names case-insensitive, and the
 * SearchRequest's parameters are its attributes (RFC 7644 §3.4.3); the query string carries the
 * same parameters (§3.4.2). Ignoring a filter in another case answers a look-up-before-create
 * with every user, which an identity provider reads as "found" and links to the wrong account.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let t: ScimTestApp;
let groupId = "";
beforeAll(async () => {
  t = await createScimTestApp("query-case");
  const ids: string[] = [];
  for (const userName of ["ada@example.com", "grace@example.com"]) {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName });
    ids.push(res.body.id);
  }
  const group = await t.request
    .post("/scim/v2/okta/Groups")
    .set(t.okta)
    .send({ schemas: [GROUP], displayName: "Engineering", members: [{ value: ids[0] }] });
  groupId = group.body.id;
});
afterAll(async () => {
  await t.close();
});

describe("list parameters whose names come in another case", () => {
  it("Filter / FILTER is the filter: a look-up of an unknown userName finds nothing", async () => {
    for (const name of ["Filter", "FILTER"]) {
      const res = await t.request
        .get("/scim/v2/okta/Users")
        .query({ [name]: 'userName eq "nobody@example.com"' })
        .set(t.okta);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ totalResults: 0, Resources: [] });
    }
  });

  it("StartIndex and Count page, attributes in any case project", async () => {
    const res = await t.request
      .get("/scim/v2/okta/Users?StartIndex=2&COUNT=1&Attributes=userName")
      .set(t.okta);
    expect(res.body).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 });
    expect(res.body.Resources[0]).toEqual({
      schemas: [USER],
      id: expect.any(String),
      userName: "grace@example.com",
    });
  });

  it("excludedattributes=members leaves a group's members out, in a list and by id", async () => {
    const list = await t.request.get("/scim/v2/okta/Groups?excludedattributes=members").set(t.okta);
    expect(list.body.Resources[0]).not.toHaveProperty("members");
    const one = await t.request.get(`/scim/v2/okta/Groups/${groupId}?EXCLUDEDATTRIBUTES=members`).set(t.okta);
    expect(one.body.displayName).toBe("Engineering");
    expect(one.body).not.toHaveProperty("members");
  });

  it("a group PATCH with Attributes= answers 200 with the projection asked for", async () => {
    const res = await t.request
      .patch(`/scim/v2/okta/Groups/${groupId}?Attributes=displayName`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "Eng" }] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ schemas: [GROUP], id: groupId, displayName: "Eng" });
  });

  it("POST /.search reads Filter, StartIndex and Count in any case", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users/.search")
      .set(t.okta)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        Filter: 'userName eq "nobody@example.com"',
        StartIndex: 1,
        Count: 10,
      });
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(0);
  });
});
