/**
 * Runs of slashes after the source (routes/scim/scim-routes.ts, scimTargetOf): an identity provider
 * whose base URL ends in "/" (Okta and others) asks for /scim/v2/<source>//Users. They are served as
 * /scim/v2/<source>/Users, and `Location` and `meta.location` stay the canonical single-slash URL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("double-slash");
});
afterAll(async () => {
  await t.close();
});

describe("a double slash after the source", () => {
  it("creates, gets and lists users at //Users, with single-slash Location and meta.location", async () => {
    const created = await t.request
      .post("/scim/v2/okta//Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "double-slash@x.com" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const canonical = new RegExp(`^http://[^/]+/scim/v2/okta/Users/${id}$`);
    expect(String(created.headers.location)).toMatch(canonical);
    expect(created.body.meta.location).toBe(created.headers.location);

    const got = await t.request.get(`/scim/v2/okta//Users/${id}`).set(t.okta);
    expect(got.status).toBe(200);
    expect(got.body.userName).toBe("double-slash@x.com");
    expect(String(got.headers.location)).toMatch(canonical);
    expect(got.body.meta.location).toMatch(canonical);

    const listed = await t.request
      .get("/scim/v2/okta//Users?filter=userName%20eq%20%22double-slash@x.com%22")
      .set(t.okta);
    expect(listed.status).toBe(200);
    expect(listed.body.schemas).toEqual([LIST]);
    expect(listed.body.totalResults).toBe(1);
    expect(listed.body.Resources[0].id).toBe(id);
    expect(listed.body.Resources[0].meta.location).toMatch(canonical);

    const none = await t.request.get("/scim/v2/okta//Users?filter=userName%20eq%20%22x%22").set(t.okta);
    expect(none.status).toBe(200);
    expect(none.body.totalResults).toBe(0);
  });

  it("patches a group at //Groups/<id>, and takes runs of slashes anywhere after the source", async () => {
    const created = await t.request
      .post("/scim/v2/okta//Groups")
      .set(t.okta)
      .send({ schemas: [GROUP], displayName: "double-slash group" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const canonical = new RegExp(`^http://[^/]+/scim/v2/okta/Groups/${id}$`);
    expect(String(created.headers.location)).toMatch(canonical);
    expect(created.body.meta.location).toBe(created.headers.location);

    const patched = await t.request
      .patch(`/scim/v2/okta//Groups/${id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "renamed" }] });
    expect(patched.status).toBe(204);
    const got = await t.request.get(`/scim/v2/okta///Groups//${id}//`).set(t.okta);
    expect(got.status).toBe(200);
    expect(got.body.displayName).toBe("renamed");
    expect(String(got.headers.location)).toMatch(canonical);
    expect(got.body.meta.location).toMatch(canonical);
  });

  it("still needs a token, and still 404s an empty source (/scim/v2//okta)", async () => {
    expect((await t.request.get("/scim/v2/okta//Users")).status).toBe(401);
    expect((await t.request.get("/scim/v2//okta/Users").set(t.okta)).status).toBe(404);
  });
});
