/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): a value that is not a list of
 * attribute paths (RFC 7643 §2.1 ATTRNAME, an optional schema URN, one `.subAttr`) is a 400
 * invalidValue (RFC 7644 §3.12 lists invalidValue for GET, query and create POST, PUT and PATCH;
 * invalidPath is the PATCH "path" attribute's). Answering the whole resource instead hides the
 * client's mistake and sends it data it did not ask for. A valid name the schema does not have
 * is still ignored: identity providers send those.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

const BAD = ["emails[", "name..givenName", "user name", "name.givenName.x", 'emails[type eq "work"]', "1st"];

let t: ScimTestApp;
let userId = "";
let groupId = "";
beforeAll(async () => {
  t = await createScimTestApp("attribute-parameters");
  const user = await t.request
    .post(`${base}/Users`)
    .set(t.okta)
    .send({ schemas: [USER], userName: "attrs@example.com", name: { givenName: "Ada" } });
  userId = user.body.id;
  const group = await t.request
    .post(`${base}/Groups`)
    .set(t.okta)
    .send({ schemas: [GROUP], displayName: "Attrs", members: [{ value: userId }] });
  groupId = group.body.id;
});
afterAll(async () => {
  await t.close();
});

function expectInvalid(res: { status: number; body: Record<string, unknown> }, bad: string) {
  expect(res.status, `${bad}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
  expect(String(res.body.detail)).toContain(bad);
}

describe("attributes / excludedAttributes that cannot be parsed", () => {
  it("GET by id and list, Users and Groups, either parameter: 400 invalidValue naming the value", async () => {
    for (const bad of BAD) {
      for (const name of ["attributes", "excludedAttributes"]) {
        for (const path of [
          `${base}/Users/${userId}`,
          `${base}/Users`,
          `${base}/Groups/${groupId}`,
          `${base}/Groups`,
        ]) {
          const res = await t.request
            .get(path)
            .query({ [name]: `userName,${bad}` })
            .set(t.okta);
          expectInvalid(res, bad);
        }
      }
    }
  });

  it("a .search body: 400 invalidValue, as a list or a comma-separated string", async () => {
    for (const attributes of [["userName", "emails["], "userName,emails["]) {
      for (const kind of ["Users", "Groups"]) {
        const res = await t.request
          .post(`${base}/${kind}/.search`)
          .set(t.okta)
          .send({ schemas: [SEARCH], attributes });
        expectInvalid(res, "emails[");
      }
    }
    const excluded = await t.request
      .post(`${base}/Users/.search`)
      .set(t.okta)
      .send({ schemas: [SEARCH], excludedAttributes: ["name..givenName"] });
    expectInvalid(excluded, "name..givenName");
  });

  it("POST, PUT and PATCH refuse it before writing anything", async () => {
    const create = await t.request
      .post(`${base}/Users?attributes=emails[`)
      .set(t.okta)
      .send({ schemas: [USER], userName: "never@example.com" });
    expectInvalid(create, "emails[");
    const createGroup = await t.request
      .post(`${base}/Groups?excludedAttributes=members[`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Never" });
    expectInvalid(createGroup, "members[");
    const found = await t.request
      .get(`${base}/Users`)
      .query({ filter: 'userName eq "never@example.com"' })
      .set(t.okta);
    expect(found.body.totalResults).toBe(0);
    const groups = await t.request
      .get(`${base}/Groups`)
      .query({ filter: 'displayName eq "Never"' })
      .set(t.okta);
    expect(groups.body.totalResults).toBe(0);

    const before = await t.request.get(`${base}/Users/${userId}`).set(t.okta);
    const put = await t.request
      .put(`${base}/Users/${userId}?attributes=name..givenName`)
      .set(t.okta)
      .send({ schemas: [USER], userName: "attrs@example.com", displayName: "Changed" });
    expectInvalid(put, "name..givenName");
    const patch = await t.request
      .patch(`${base}/Users/${userId}?excludedAttributes=emails[`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "Changed" }] });
    expectInvalid(patch, "emails[");
    const groupPut = await t.request
      .put(`${base}/Groups/${groupId}?attributes=emails[`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "Changed" });
    expectInvalid(groupPut, "emails[");
    const groupPatch = await t.request
      .patch(`${base}/Groups/${groupId}?attributes=emails[`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "Changed" }] });
    expectInvalid(groupPatch, "emails[");
    const after = await t.request.get(`${base}/Users/${userId}`).set(t.okta);
    expect(after.body.meta.version).toBe(before.body.meta.version);
    const group = await t.request.get(`${base}/Groups/${groupId}`).set(t.okta);
    expect(group.body.displayName).toBe("Attrs");
    expect(group.body.meta.version).toBe('W/"1"');
  });
});

describe("attribute names that parse", () => {
  it("unknown names are ignored, known ones project; empty items and surrounding spaces are fine", async () => {
    const unknown = await t.request
      .get(`${base}/Users/${userId}`)
      .query({
        attributes: "userName, nickName2,urn:example:params:scim:schemas:extension:acme:2.0:User:badge,,",
      })
      .set(t.okta);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ schemas: [USER], id: userId, userName: "attrs@example.com" });
    const excluded = await t.request
      .get(`${base}/Users/${userId}`)
      .query({ excludedAttributes: "noSuchThing,name.givenName" })
      .set(t.okta);
    expect(excluded.status).toBe(200);
    expect(excluded.body.userName).toBe("attrs@example.com");
    expect(excluded.body).not.toHaveProperty("name");
    const empty = await t.request.get(`${base}/Users/${userId}?attributes=`).set(t.okta);
    expect(empty.status).toBe(200);
    expect(empty.body.name).toEqual({ givenName: "Ada" });
    const search = await t.request
      .post(`${base}/Groups/.search`)
      .set(t.okta)
      .send({ schemas: [SEARCH], attributes: ["displayName", "$ref", "members.value"] });
    expect(search.status).toBe(200);
    expect(search.body.Resources[0]).toEqual({
      schemas: [GROUP],
      id: groupId,
      displayName: "Attrs",
      members: [{ value: userId }],
    });
  });
});
