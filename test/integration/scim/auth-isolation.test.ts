import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("auth");
});
afterAll(async () => {
  await t.close();
});

describe("authentication (bearer token, one source per token)", () => {
  it("needs a bearer token: 401 with a SCIM error body", async () => {
    const res = await t.request.get("/scim/v2/okta/Users");
    expect(res.status).toBe(401);
    expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
  });

  it("refuses another source's token, an admin token, and a cookie", async () => {
    expect((await t.request.get("/scim/v2/okta/Users").set(t.entra)).status).toBe(401);
    expect(
      (await t.request.get("/scim/v2/okta/Users").set("Authorization", `Bearer ${ADMIN_TOKEN}`)).status,
    ).toBe(401);
    expect((await t.request.get("/scim/v2/okta/Users").set("Cookie", "token=okta-token-123")).status).toBe(
      401,
    );
  });

  it("takes the token from the Authorization header only, never from the query string or body", async () => {
    // A token in a URL ends up in access logs and proxies (RFC 6750 §2.3 discourages it).
    const token = t.okta.Authorization.replace(/^Bearer /, "");
    const query = await t.request.get("/scim/v2/okta/Users").query({ access_token: token });
    expect(query.status).toBe(401);
    expect(query.headers["www-authenticate"]).toBe('Bearer realm="scim-bridge"');
    const body = await t.request
      .post("/scim/v2/okta/Users")
      .send({ schemas: [USER], userName: "body-token@x.com", access_token: token });
    expect(body.status).toBe(401);
    expect(
      (await t.request.get("/scim/v2/okta/Users").set("Authorization", `bearer   ${token}`)).status,
    ).toBe(200);
  });

  it("a wrong token learns nothing about a resource (401, not 404)", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "secret@x.com" });
    const res = await t.request.get(`/scim/v2/okta/Users/${created.body.id}`).set(t.entra);
    expect(res.status).toBe(401);
    expect(JSON.stringify(res.body)).not.toContain("secret@x.com");
  });
});

describe("isolation between sources", () => {
  it("two sources with the same userNames do not see or change each other's users", async () => {
    const a = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "same@example.com", title: "okta" });
    const b = await t.request
      .post("/scim/v2/entra/Users")
      .set(t.entra)
      .send({ schemas: [USER], userName: "same@example.com", title: "entra" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.id).not.toBe(b.body.id);

    const seenByEntra = await t.request
      .get("/scim/v2/entra/Users")
      .query({ filter: 'userName eq "same@example.com"' })
      .set(t.entra);
    expect(seenByEntra.body.totalResults).toBe(1);
    expect(seenByEntra.body.Resources[0].title).toBe("entra");

    // Entra cannot read, change or delete Okta's user through its own endpoint
    expect((await t.request.get(`/scim/v2/entra/Users/${a.body.id}`).set(t.entra)).status).toBe(404);
    expect((await t.request.delete(`/scim/v2/entra/Users/${a.body.id}`).set(t.entra)).status).toBe(404);
    const patch = await t.request
      .patch(`/scim/v2/entra/Users/${a.body.id}`)
      .set(t.entra)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "title", value: "x" }],
      });
    expect(patch.status).toBe(404);
    const still = await t.request.get(`/scim/v2/okta/Users/${a.body.id}`).set(t.okta);
    expect(still.body.title).toBe("okta");
  });

  it("an unknown source answers 404", async () => {
    expect((await t.request.get("/scim/v2/nosuch/Users").set(t.okta)).status).toBe(404);
  });
});

describe("discovery (RFC 7644 §4)", () => {
  it("serves ServiceProviderConfig, ResourceTypes and Schemas", async () => {
    const spc = await t.request.get("/scim/v2/okta/ServiceProviderConfig").set(t.okta);
    expect(spc.status).toBe(200);
    expect(spc.body.patch.supported).toBe(true);
    expect(spc.body.filter.supported).toBe(true);
    const types = await t.request.get("/scim/v2/okta/ResourceTypes").set(t.okta);
    expect(types.status).toBe(200);
    expect(JSON.stringify(types.body)).toContain("urn:ietf:params:scim:schemas:core:2.0:Group");
    const schemas = await t.request.get("/scim/v2/okta/Schemas").set(t.okta);
    const ids = schemas.body.Resources.map((s: { id: string }) => s.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        "urn:ietf:params:scim:schemas:core:2.0:User",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
        "urn:ietf:params:scim:schemas:core:2.0:Group",
      ]),
    );
    const one = await t.request
      .get("/scim/v2/okta/Schemas/urn:ietf:params:scim:schemas:core:2.0:User")
      .set(t.okta);
    expect(one.status).toBe(200);
  });

  it("answers write methods on discovery with 405 before reading the body", async () => {
    for (const path of ["ServiceProviderConfig", "ResourceTypes", "Schemas"]) {
      const res = await t.request
        .post(`/scim/v2/okta/${path}`)
        .set(t.okta)
        .set("Content-Type", "application/json")
        .send("{not json");
      expect(res.status).toBe(405);
      expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    }
  });

  it("answers unknown SCIM paths with a SCIM 404", async () => {
    const res = await t.request.get("/scim/v2/okta/Widgets").set(t.okta);
    expect(res.status).toBe(404);
    expect(res.body.status).toBe("404");
  });
});
