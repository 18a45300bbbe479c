/**
 * A filter that compares an attribute in a way its type cannot answer is a 400 invalidFilter
 * (RFC 7644 §3.4.2.2, §3.12), not a 200 with an empty list: a dateTime attribute with a value that
 * is no dateTime (`meta.lastModified gt "garbage"`), gt/ge/lt/le on a boolean (`active gt "true"`).
 * On every route that takes a filter: GET and POST .search of /Users and /Groups, and at the root.
 * filterProblem in src/scim/filter-validate.ts; unit tests in test/unit/scim/filter-validate.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let userId: string;
let groupId: string;

beforeAll(async () => {
  t = await createScimTestApp("filter-comparison-types");
  const user = await t.request
    .post(`${base}/Users`)
    .set(t.okta)
    .send({
      schemas: [USER],
      userName: "dated@example.com",
      active: true,
      emails: [{ value: "dated@example.com", type: "work", primary: true }],
    });
  expect(user.status).toBe(201);
  userId = user.body.id;
  const group = await t.request
    .post(`${base}/Groups`)
    .set(t.okta)
    .send({ schemas: [GROUP], displayName: "Dated group" });
  expect(group.status).toBe(201);
  groupId = group.body.id;
});
afterAll(async () => {
  await t.close();
});

const get = (path: string, filter: string) => t.request.get(`${base}${path}`).query({ filter }).set(t.okta);
const search = (path: string, filter: string) =>
  t.request
    .post(`${base}${path}`)
    .set(t.okta)
    .send({ schemas: [SEARCH], filter });
const ids = (res: { body: { Resources?: Array<{ id: string }> } }) =>
  (res.body.Resources ?? []).map((r) => r.id);

function expectInvalidFilter(res: { status: number; body: Record<string, unknown> }, detail: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidFilter" });
  expect(res.body.detail).toMatch(detail);
}

const DATE_DETAIL = /"meta\.lastModified" is a dateTime and "garbage" is not one/;

describe("a dateTime attribute compared with a value that is not a dateTime", () => {
  it('GET /Users?filter=meta.lastModified gt "garbage" is 400 invalidFilter naming the attribute', async () => {
    expectInvalidFilter(await get("/Users", 'meta.lastModified gt "garbage"'), DATE_DETAIL);
  });

  it.each(["eq", "ne", "ge", "lt", "le"])("and so with %s, and for meta.created", async (op) => {
    expectInvalidFilter(await get("/Users", `meta.lastModified ${op} "garbage"`), DATE_DETAIL);
    expectInvalidFilter(
      await get("/Users", `meta.created ${op} "yesterday"`),
      /"meta\.created" is a dateTime/,
    );
  });

  it("also inside a larger filter, and with an indexed lookup beside it", async () => {
    expectInvalidFilter(
      await get("/Users", 'userName eq "dated@example.com" and meta.lastModified gt "garbage"'),
      DATE_DETAIL,
    );
    expectInvalidFilter(await get("/Users", 'not (meta.lastModified gt "garbage")'), DATE_DETAIL);
  });

  it("on POST /Users/.search, /Groups, /Groups/.search, the root and the root's /.search", async () => {
    const filter = 'meta.lastModified gt "garbage"';
    expectInvalidFilter(await search("/Users/.search", filter), DATE_DETAIL);
    expectInvalidFilter(await get("/Groups", filter), DATE_DETAIL);
    expectInvalidFilter(await search("/Groups/.search", filter), DATE_DETAIL);
    expectInvalidFilter(await get("/", filter), DATE_DETAIL);
    expectInvalidFilter(await search("/.search", filter), DATE_DETAIL);
  });
});

describe("a valid dateTime is still a query", () => {
  it.each([
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00.123+02:00",
    "2026-01-01T00:00:00.0000000Z",
    "2026-01-01",
  ])("meta.lastModified gt %j answers 200 with a list", async (date) => {
    const res = await get("/Users", `meta.lastModified gt "${date}"`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.schemas).toEqual([LIST]);
  });

  it("orders as instants: the user is after 2000 and before 9999, on every route", async () => {
    expect(ids(await get("/Users", 'meta.lastModified gt "2000-01-01T00:00:00.123+02:00"'))).toEqual([
      userId,
    ]);
    expect(ids(await search("/Users/.search", 'meta.created ge "2000-01-01T00:00:00Z"'))).toEqual([userId]);
    const later = await get("/Users", 'meta.lastModified gt "9999-01-01T00:00:00Z"');
    expect(later.status).toBe(200);
    expect(later.body.totalResults).toBe(0);
    expect(ids(await get("/Groups", 'meta.lastModified lt "9999-12-31T23:59:59Z"'))).toEqual([groupId]);
    expect(ids(await search("/.search", 'meta.created gt "2000-01-01"'))).toEqual([userId, groupId]);
  });

  it("eq null, pr and co of a dateTime are not checked", async () => {
    expect((await get("/Users", "meta.lastModified eq null")).status).toBe(200);
    expect(ids(await get("/Users", "meta.lastModified pr"))).toEqual([userId]);
    expect((await get("/Users", 'meta.lastModified co "garbage"')).status).toBe(200);
  });
});

describe("gt/ge/lt/le on a boolean attribute (RFC 7644 §3.4.2.2)", () => {
  it("active gt true is 400 invalidFilter", async () => {
    expectInvalidFilter(await get("/Users", "active gt true"), /"gt" cannot compare with true/);
  });

  it('active gt "true" (a boolean as Entra ID writes it), active le 1, emails[primary ge "True"] too', async () => {
    expectInvalidFilter(
      await get("/Users", 'active gt "true"'),
      /"gt" cannot compare "active", a boolean attribute/,
    );
    expectInvalidFilter(await search("/Users/.search", "active le 1"), /"le" cannot compare "active"/);
    expectInvalidFilter(await get("/", 'emails[primary ge "True"]'), /"ge" cannot compare "primary"/);
  });

  it('active eq "True" and active eq "maybe" are still queries', async () => {
    expect(ids(await get("/Users", 'active eq "True"'))).toEqual([userId]);
    const maybe = await get("/Users", 'active eq "maybe"');
    expect(maybe.status).toBe(200);
    expect(maybe.body.totalResults).toBe(0);
  });
});

describe("PATCH value filters", () => {
  it('emails[type eq "work"] still selects the element', async () => {
    const res = await t.request
      .patch(`${base}/Users/${userId}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "replace", path: 'emails[type eq "work"].value', value: "dated2@example.com" }],
      });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "dated2@example.com", type: "work", primary: true }]);
  });

  it('emails[primary gt "true"] is 400 invalidFilter, and nothing changes', async () => {
    const before = await t.request.get(`${base}/Users/${userId}`).set(t.okta);
    const res = await t.request
      .patch(`${base}/Users/${userId}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "replace", path: 'emails[primary gt "true"].value', value: "x@example.com" }],
      });
    expectInvalidFilter(res, /"gt" cannot compare "primary", a boolean attribute/);
    const after = await t.request.get(`${base}/Users/${userId}`).set(t.okta);
    expect(after.body.meta.version).toBe(before.body.meta.version);
  });
});
