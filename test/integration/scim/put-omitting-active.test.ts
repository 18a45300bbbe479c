/**
 * A PUT that leaves `active` out does not assert it (RFC 7644 §3.5.1: omitted readWrite attributes
 * "MAY be assumed to be not asserted by the client"): the user keeps the state they have. A client
 * that PUTs profiles without `active` (some Keycloak and HR-script clients do) must not reactivate a
 * user an admin deactivated, nor deactivate an active one. A POST without `active` creates an
 * active user (RFC 7643 §4.1), and a PUT that states `active` sets it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("put-omitting-active");
});
afterAll(async () => {
  await t.close();
});

async function createUser(userName: string) {
  const res = await t.request
    .post("/scim/v2/okta/Users")
    .set(t.okta)
    .send({ schemas: [USER], userName });
  expect(res.status).toBe(201);
  expect(res.body.active).toBe(true);
  return res.body.id as string;
}

const put = (id: string, body: Record<string, unknown>) =>
  t.request
    .put(`/scim/v2/okta/Users/${id}`)
    .set(t.okta)
    .send({ schemas: [USER], ...body });

describe("PUT without active keeps the user's state", () => {
  it("a deactivated user stays deactivated; the rest of the body replaces the profile", async () => {
    const id = await createUser("put-keeps-inactive@example.com");
    const off = await t.request
      .patch(`/scim/v2/okta/Users/${id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);

    const res = await put(id, { userName: "put-keeps-inactive@example.com", displayName: "Renamed" });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(false);
    expect(res.body.displayName).toBe("Renamed");
    const read = await t.request.get(`/scim/v2/okta/Users/${id}`).set(t.okta);
    expect(read.body.active).toBe(false);
  });

  it("an active user stays active", async () => {
    const id = await createUser("put-keeps-active@example.com");
    const res = await put(id, { userName: "put-keeps-active@example.com", title: "Engineer" });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(true);
  });

  it("a PUT that states active sets it, in any case of the name and as a string", async () => {
    const id = await createUser("put-states-active@example.com");
    const off = await put(id, { userName: "put-states-active@example.com", Active: "False" });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    const on = await put(id, { userName: "put-states-active@example.com", active: true });
    expect(on.body.active).toBe(true);
  });

  it("a PUT without active to an unknown id is 404, and an invalid one is 400 before the lookup", async () => {
    const missing = await put("00000000-0000-4000-8000-000000000000", { userName: "nobody@example.com" });
    expect(missing.status).toBe(404);
    const invalid = await put("00000000-0000-4000-8000-000000000000", { userName: "" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
  });
});

/**
 * The same rule for PATCH: an operation that leaves `active` unassigned (remove, or null) does not
 * assert it. Unassigned is not true (RFC 7643 §2.5: null is "unassigned"), so it must not reactivate
 * a user an admin deactivated, as the POST default of `true` would.
 */
describe("PATCH that leaves active unassigned keeps the user's state", () => {
  const patch = (id: string, operations: unknown[]) =>
    t.request
      .patch(`/scim/v2/okta/Users/${id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: operations });

  const cases: Array<[string, unknown[]]> = [
    ["remove path active", [{ op: "remove", path: "active" }]],
    ["replace path active with null", [{ op: "replace", path: "active", value: null }]],
    ["no-path replace with active null", [{ op: "replace", value: { active: null, displayName: "Y" } }]],
    ["no-path replace with Active null (any case)", [{ op: "Replace", value: { Active: null } }]],
    [
      "URN-qualified path, removed",
      [{ op: "remove", path: "urn:ietf:params:scim:schemas:core:2.0:User:active" }],
    ],
  ];
  for (const [name, operations] of cases) {
    it(`a deactivated user stays deactivated: ${name}`, async () => {
      const id = await createUser(`patch-keeps-inactive-${cases.findIndex(([n]) => n === name)}@example.com`);
      const off = await patch(id, [{ op: "replace", value: { active: false } }]);
      expect(off.body.active).toBe(false);
      const res = await patch(id, operations);
      expect(res.status).toBe(200);
      expect(res.body.active).toBe(false);
      const read = await t.request.get(`/scim/v2/okta/Users/${id}`).set(t.okta);
      expect(read.body.active).toBe(false);
    });
  }

  it("an active user stays active when active is removed", async () => {
    const id = await createUser("patch-keeps-active@example.com");
    const res = await patch(id, [{ op: "remove", path: "active" }]);
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(true);
  });

  it("a PATCH that states active still sets it", async () => {
    const id = await createUser("patch-states-active@example.com");
    const off = await patch(id, [{ op: "replace", path: "active", value: "False" }]);
    expect(off.body.active).toBe(false);
    const on = await patch(id, [{ op: "add", path: "active", value: true }]);
    expect(on.body.active).toBe(true);
  });
});
