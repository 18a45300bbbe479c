/**
 * Queries at the server root (RFC 7644 §3.4.2.1, §3.4.3): POST /scim/v2/<source>/.search and
 * GET /scim/v2/<source>/ search the source's users and groups together, with the same parameters
 * as /Users and /Groups, in a stable order (users, then groups, each in creation order).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
const userIds: string[] = [];
const groupIds: string[] = [];

beforeAll(async () => {
  t = await createScimTestApp("root-search");
  for (const name of ["ada", "grace", "edsger"]) {
    const res = await t.request
      .post(`${base}/Users`)
      .set(t.okta)
      .send({ schemas: [USER], userName: `${name}@example.com`, displayName: `Root ${name}` });
    userIds.push(res.body.id);
  }
  for (const name of ["Root admins", "Readers"]) {
    const res = await t.request
      .post(`${base}/Groups`)
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: name, members: [{ value: userIds[0] }] });
    groupIds.push(res.body.id);
  }
  // Another source's resources are never in this source's results.
  await t.request
    .post("/scim/v2/entra/Users")
    .set(t.entra)
    .send({ schemas: [USER], userName: "other@example.com" });
});
afterAll(async () => {
  await t.close();
});

const search = (body: Record<string, unknown>) =>
  t.request
    .post(`${base}/.search`)
    .set(t.okta)
    .send({ schemas: [SEARCH], ...body });

const idsOf = (res: { body: { Resources: Array<{ id: string }> } }) => res.body.Resources.map((r) => r.id);

describe("POST /.search at the root", () => {
  it("answers every user, then every group, with their schemas and meta.resourceType", async () => {
    const res = await search({});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 5, startIndex: 1, itemsPerPage: 5 });
    expect(idsOf(res)).toEqual([...userIds, ...groupIds]);
    const [user, , , group] = res.body.Resources;
    expect(user).toMatchObject({
      schemas: [USER],
      userName: "ada@example.com",
      meta: { resourceType: "User" },
    });
    expect(user.meta.location).toMatch(new RegExp(`/scim/v2/okta/Users/${userIds[0]}$`));
    expect(group).toMatchObject({
      schemas: [GROUP],
      displayName: "Root admins",
      members: [{ value: userIds[0] }],
      meta: { resourceType: "Group" },
    });
  });

  it("pages across both types: every page size gives the same order, no gaps, no repeats", async () => {
    const all = [...userIds, ...groupIds];
    for (const count of [1, 2, 3, 4]) {
      const seen: string[] = [];
      for (let startIndex = 1; startIndex <= all.length; startIndex += count) {
        const res = await search({ startIndex, count });
        expect(res.body).toMatchObject({ totalResults: 5, startIndex });
        expect(res.body.itemsPerPage).toBe(Math.min(count, all.length - startIndex + 1));
        seen.push(...idsOf(res));
      }
      expect(seen, `count ${count}`).toEqual(all);
    }
    const past = await search({ startIndex: 9, count: 2 });
    expect(past.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    const none = await search({ count: 0 });
    expect(none.body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
  });

  it("applies the filter to each type; an attribute a type lacks matches none of it", async () => {
    const both = await search({ filter: 'displayName sw "root"' });
    expect(idsOf(both)).toEqual([...userIds, groupIds[0]]);
    expect(both.body.totalResults).toBe(4);
    const user = await search({ filter: 'userName eq "GRACE@example.com"' });
    expect(idsOf(user)).toEqual([userIds[1]]);
    const groups = await search({ filter: 'meta.resourceType eq "Group"' });
    expect(idsOf(groups)).toEqual(groupIds);
    const byMember = await search({ filter: `members eq "${userIds[0]}"` });
    expect(idsOf(byMember)).toEqual(groupIds);
    const nothing = await search({ filter: 'externalId eq "nobody"' });
    expect(nothing.status).toBe(200);
    expect(nothing.body).toMatchObject({ totalResults: 0, Resources: [] });
  });

  it("a path qualified by one type's core schema URN matches none of the other type (not a 400)", async () => {
    // /Users and /Groups answer such a path 400 invalidFilter; the root serves both types, so the
    // type that lacks the attribute simply contributes nothing (RFC 7644 §3.4.2.1).
    const user = await search({ filter: `${USER}:userName eq "grace@example.com"` });
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    expect(idsOf(user)).toEqual([userIds[1]]);
    expect(user.body.totalResults).toBe(1);
    const group = await t.request
      .get(`${base}/`)
      .query({ filter: `${GROUP}:displayName eq "Readers"` })
      .set(t.okta);
    expect(group.status, JSON.stringify(group.body)).toBe(200);
    expect(idsOf(group)).toEqual([groupIds[1]]);
    // A Group-qualified displayName is not the users' displayName ("Root ada" and so on).
    const prefixed = await search({ filter: `${GROUP}:displayName sw "root"` });
    expect(idsOf(prefixed)).toEqual([groupIds[0]]);
    // Still 400 when no type can read the filter.
    const broken = await search({ filter: `${USER}:userName eq` });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ schemas: [ERROR], scimType: "invalidFilter" });
  });

  it("projects attributes and excludedAttributes on both types", async () => {
    const res = await search({ attributes: ["displayName"], count: 10 });
    expect(res.body.Resources[0]).toEqual({ schemas: [USER], id: userIds[0], displayName: "Root ada" });
    expect(res.body.Resources[3]).toEqual({ schemas: [GROUP], id: groupIds[0], displayName: "Root admins" });
    const excluded = await search({ excludedAttributes: "members,userName" });
    expect(excluded.body.Resources[0]).not.toHaveProperty("userName");
    expect(excluded.body.Resources[3]).not.toHaveProperty("members");
    expect(excluded.body.Resources[3].displayName).toBe("Root admins");
  });

  it("400 with a SCIM error body for a filter or attributes that do not parse", async () => {
    const filter = await search({ filter: 'userName eq "unterminated' });
    expect(filter.status).toBe(400);
    expect(filter.body).toMatchObject({ schemas: [ERROR], scimType: "invalidFilter" });
    const attributes = await search({ attributes: ["emails["] });
    expect(attributes.status).toBe(400);
    expect(attributes.body).toMatchObject({ schemas: [ERROR], scimType: "invalidValue" });
    const notObject = await t.request
      .post(`${base}/.search`)
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send("[]");
    expect(notObject.status).toBe(400);
    expect(notObject.body).toMatchObject({ schemas: [ERROR], scimType: "invalidSyntax" });
  });
});

describe("GET at the root", () => {
  it("is the same query, with its parameters in the query string, with or without the trailing slash", async () => {
    for (const path of [`${base}/`, base]) {
      const all = await t.request.get(path).set(t.okta);
      expect(all.status).toBe(200);
      expect(all.headers["content-type"]).toMatch(/application\/scim\+json/);
      expect(idsOf(all)).toEqual([...userIds, ...groupIds]);
    }
    const page = await t.request
      .get(`${base}/`)
      .query({ filter: 'displayName sw "root"', startIndex: 3, count: 2, attributes: "displayName" })
      .set(t.okta);
    expect(page.body).toMatchObject({ totalResults: 4, startIndex: 3, itemsPerPage: 2 });
    expect(page.body.Resources).toEqual([
      { schemas: [USER], id: userIds[2], displayName: "Root edsger" },
      { schemas: [GROUP], id: groupIds[0], displayName: "Root admins" },
    ]);
  });
});

describe("the root's other methods", () => {
  it("needs the source's token, and answers 405 with Allow for a method it does not serve", async () => {
    expect((await t.request.post(`${base}/.search`).send({})).status).toBe(401);
    expect((await t.request.get(`${base}/`)).status).toBe(401);
    expect((await t.request.post(`${base}/.search`).set(t.entra).send({})).status).toBe(401);
    const getSearch = await t.request.get(`${base}/.search`).set(t.okta);
    expect(getSearch.status).toBe(405);
    expect(getSearch.headers.allow).toBe("POST");
    expect(getSearch.body.schemas).toEqual([ERROR]);
    const postRoot = await t.request.post(`${base}/`).set(t.okta).send({});
    expect(postRoot.status).toBe(405);
    expect(postRoot.headers.allow).toBe("GET");
    expect(postRoot.body.schemas).toEqual([ERROR]);
  });

  it("/scim/v2/ without a source answers a SCIM 404", async () => {
    for (const path of ["/scim/v2/", "/scim/v2"]) {
      const res = await t.request.get(path).set(t.okta);
      expect([path, res.status, res.body.schemas]).toEqual([path, 404, [ERROR]]);
    }
  });
});
