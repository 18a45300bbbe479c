import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

/** C1 controls (U+0080-U+009F) are refused in userName, displayName and externalId, as C0 and DEL are. */
let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("c1-controls");
});
afterAll(async () => {
  await t.close();
});

type Res = { status: number; headers: Record<string, string>; body: Record<string, unknown> };

function expectInvalid(res: Res, attr: string): void {
  expect(res.status).toBe(400);
  expect(res.headers["content-type"]).toMatch(/application\/scim\+json/);
  expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
  expect(res.body.detail).toMatch(new RegExp(`"${attr}".*control characters`));
}

describe("C1 control characters over SCIM", () => {
  it("POST /Users with one in userName or externalId: 400 invalidValue, nothing stored", async () => {
    const before = await t.directory.countEntities("okta", "user");
    for (const userName of ["nel\u0085@example.com", "\u0080c1@example.com", "c1@example.com\u009f"]) {
      expectInvalid(
        await t.request
          .post("/scim/v2/okta/Users")
          .set(t.okta)
          .send({ schemas: [USER], userName }),
        "userName",
      );
    }
    expectInvalid(
      await t.request
        .post("/scim/v2/okta/Users")
        .set(t.okta)
        .send({ schemas: [USER], userName: "c1.ext@example.com", externalId: "00u\u009b1" }),
      "externalId",
    );
    expect(await t.directory.countEntities("okta", "user")).toBe(before);
    const found = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName sw "nel" or userName eq "c1.ext@example.com"' })
      .set(t.okta);
    expect(found.body.totalResults).toBe(0);
  });

  it("PUT and PATCH /Users with one: 400 invalidValue, the user unchanged", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "c1.keep@example.com" });
    expect(created.status).toBe(201);
    const url = `/scim/v2/okta/Users/${created.body.id}`;
    expectInvalid(
      await t.request
        .put(url)
        .set(t.okta)
        .send({ schemas: [USER], userName: "c1.keep\u0085@example.com" }),
      "userName",
    );
    expectInvalid(
      await t.request
        .patch(url)
        .set(t.okta)
        .send({
          schemas: [PATCH],
          Operations: [{ op: "replace", path: "userName", value: "c1\u0090@x.com" }],
        }),
      "userName",
    );
    expectInvalid(
      await t.request
        .patch(url)
        .set(t.okta)
        .send({ schemas: [PATCH], Operations: [{ op: "add", path: "externalId", value: "e\u0085" }] }),
      "externalId",
    );
    const after = await t.request.get(url).set(t.okta);
    expect(after.body).toMatchObject({ userName: "c1.keep@example.com" });
    expect(after.body.externalId).toBeUndefined();
    expect(after.body.meta.version).toBe(created.body.meta.version);
  });

  it("POST, PUT and PATCH /Groups with one in displayName or externalId: 400, nothing stored or changed", async () => {
    const before = await t.directory.countEntities("okta", "group");
    expectInvalid(
      await t.request
        .post("/scim/v2/okta/Groups")
        .set(t.okta)
        .send({ schemas: [GROUP], displayName: "C1\u0085Team" }),
      "displayName",
    );
    expectInvalid(
      await t.request
        .post("/scim/v2/okta/Groups")
        .set(t.okta)
        .send({ schemas: [GROUP], displayName: "C1 Ext", externalId: "g\u0080" }),
      "externalId",
    );
    expect(await t.directory.countEntities("okta", "group")).toBe(before);
    const g = await t.request
      .post("/scim/v2/okta/Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "C1 Ok" });
    expect(g.status).toBe(201);
    const url = `/scim/v2/okta/Groups/${g.body.id}`;
    expectInvalid(
      await t.request
        .put(url)
        .set(t.okta)
        .send({ schemas: [GROUP], displayName: "C1 Ok\u009f" }),
      "displayName",
    );
    expectInvalid(
      await t.request
        .patch(url)
        .set(t.okta)
        .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "\u0086C1" }] }),
      "displayName",
    );
    const after = await t.request.get(url).set(t.okta);
    expect(after.body.displayName).toBe("C1 Ok");
    expect(after.body.meta.version).toBe(g.body.meta.version);
  });

  it("zero-width and other format characters are accepted (not control characters)", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "zero\u200bwidth@example.com" });
    expect(res.status).toBe(201);
    expect(res.body.userName).toBe("zero\u200bwidth@example.com");
  });
});
