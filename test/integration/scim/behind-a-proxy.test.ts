/**
 * Behind a reverse proxy or ingress that terminates TLS, Location and meta.location must say the
 * address the identity provider called (https, the public host), when server.trustProxy says
 * which hops to believe; without it, forwarded headers are ignored (a client could set them).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const FORWARDED = { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "scim.example.com" };

describe("Location and meta.location behind a proxy", () => {
  let t: ScimTestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("take the forwarded scheme and host when server.trustProxy is set", async () => {
    t = await createScimTestApp("behind-proxy", {
      server: { port: 0, host: "127.0.0.1", trustProxy: true },
    } as never);
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .set(FORWARDED)
      .send({ schemas: [USER], userName: "ada@example.com" })
      .expect(201);
    const id = created.body.id as string;
    const expected = `https://scim.example.com/scim/v2/okta/Users/${id}`;
    expect(created.headers.location).toBe(expected);
    expect(created.body.meta.location).toBe(expected);
    const read = await t.request.get(`/scim/v2/okta/Users/${id}`).set(t.okta).set(FORWARDED).expect(200);
    expect(read.body.meta.location).toBe(expected);
  });

  it("ignore forwarded headers by default", async () => {
    t = await createScimTestApp("not-behind-proxy");
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .set(FORWARDED)
      .send({ schemas: [USER], userName: "ada@example.com" })
      .expect(201);
    expect(created.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/scim\/v2\/okta\/Users\//);
  });
});
