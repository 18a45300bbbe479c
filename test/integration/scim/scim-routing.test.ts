/**
 * The SCIM routes over HTTP (routes/scim/scim-router.ts): what the routing table decides, as a
 * client sees it. Each answer on a SCIM path is a SCIM error body, whatever went wrong.
 */
import express from "express";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScimRouter } from "../../../routes/scim/scim-router.js";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("routing");
});
afterAll(async () => {
  await t.close();
});

describe("SCIM routing", () => {
  it("matches names in any case and one trailing slash, and serves HEAD as GET without a body", async () => {
    const created = await t.request
      .post("/SCIM/V2/okta/users/")
      .set(t.okta)
      .send({ schemas: [USER], userName: "route-case@x.com" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(String(created.headers.location)).toMatch(new RegExp(`^http://[^/]+/scim/v2/okta/Users/${id}$`));
    const got = await t.request.get(`/scim/v2/okta/USERS/${id}/`).set(t.okta);
    expect(got.status).toBe(200);
    expect(got.body.userName).toBe("route-case@x.com");
    const head = await t.request.head(`/scim/v2/okta/Users/${id}`).set(t.okta);
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe(got.headers.etag);
    expect(head.text ?? "").toBe("");
  });

  it("percent-decodes ids, and answers 400 (SCIM body) for an id that is not valid percent-encoding", async () => {
    const missing = await t.request.get("/scim/v2/okta/Users/no%20such").set(t.okta);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("no such");
    const bad = await t.request.get("/scim/v2/okta/Users/%E0%A4%A").set(t.okta);
    expect(bad.status).toBe(400);
    expect(bad.body.schemas).toEqual([ERROR]);
  });

  it("answers an unknown source and an unknown path with 404 and a SCIM error body", async () => {
    const source = await t.request.get("/scim/v2/nobody/Users").set(t.okta);
    expect(source.status).toBe(404);
    expect(source.body.schemas).toEqual([ERROR]);
    // Runs of slashes count as one (double-slash.test.ts): "/Users//a//b" is still two segments below.
    for (const path of ["/scim/v2/okta/Devices", "/scim/v2/okta/Users/a/b", "/scim/v2/okta/Users//a//b"]) {
      const res = await t.request.get(path).set(t.okta);
      expect([path, res.status, res.body.schemas]).toEqual([path, 404, [ERROR]]);
    }
  });

  it("authenticates before saying what a path is (unknown paths, 405s and 501s alike)", async () => {
    for (const [method, path] of [
      ["get", "/scim/v2/okta/Devices"],
      ["delete", "/scim/v2/okta/Users"],
      ["post", "/scim/v2/okta/Bulk"],
    ] as const) {
      const res = await t.request[method](path);
      expect([method, path, res.status]).toEqual([method, path, 401]);
    }
  });

  it("answers /Bulk and /Me with 501, and GET on .search with 405 Allow: POST", async () => {
    expect((await t.request.post("/scim/v2/okta/Bulk").set(t.okta).send({})).status).toBe(501);
    expect((await t.request.get("/scim/v2/okta/Me").set(t.okta)).status).toBe(501);
    const search = await t.request.get("/scim/v2/okta/Users/.search").set(t.okta);
    expect(search.status).toBe(405);
    expect(search.headers.allow).toBe("POST");
    expect(search.body.schemas).toEqual([ERROR]);
  });

  it("serves discovery without a token, by name in any case", async () => {
    const one = await t.request.get("/scim/v2/okta/ResourceTypes/User");
    expect(one.status).toBe(200);
    expect(one.body.name).toBe("User");
    expect((await t.request.get("/scim/v2/okta/schemas")).body.Resources.length).toBeGreaterThan(2);
    const unknown = await t.request.get("/scim/v2/okta/Schemas/urn:nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.schemas).toEqual([ERROR]);
  });

  it("leaves other paths to the next handler, and works mounted below /scim/v2/:source too", async () => {
    const deps = { config: t.config, directory: t.directory, logger: { warn() {}, error() {} } as never };
    const app = express();
    app.use(createScimRouter(deps));
    app.use((_req, res) => {
      res.status(418).end();
    });
    expect((await supertest(app).get("/elsewhere")).status).toBe(418);
    const mounted = express();
    mounted.use("/scim/v2/:source", createScimRouter(deps));
    const res = await supertest(mounted).get("/scim/v2/okta/Users?count=1").set(t.okta);
    expect(res.status).toBe(200);
    expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:ListResponse"]);
  });
});
