/**
 * A custom schema extension named as a whole by its URN (RFC 7643 §3.3, RFC 7644 §3.5.2 and
 * §3.9), in the form Entra ID gives its custom extensions:
 * `urn:ietf:params:scim:schemas:extension:<Name>:2.0:User`. As a PATCH path, or in `attributes`
 * and `excludedAttributes`, the URN names the whole extension, as the enterprise URN does; it is
 * not an attribute "User" of a schema "...:<Name>:2.0".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const CUSTOM = "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User";

let t: ScimTestApp;
let id = "";
beforeAll(async () => {
  t = await createScimTestApp("custom-extension");
  const res = await t.request
    .post("/scim/v2/entra/Users")
    .set(t.entra)
    .send({
      schemas: [USER, CUSTOM],
      userName: "custom@example.com",
      [CUSTOM]: { CustomAttribute: "one", badge: "7" },
    });
  id = res.body.id;
});
afterAll(async () => {
  await t.close();
});

const patch = (Operations: unknown[]) =>
  t.request
    .patch(`/scim/v2/entra/Users/${id}`)
    .set(t.entra)
    .send({ schemas: [PATCH], Operations });

describe("a custom extension named by its URN", () => {
  it("attributes=<URN> returns the extension; excludedAttributes=<URN> leaves it out", async () => {
    const picked = await t.request
      .get(`/scim/v2/entra/Users/${id}`)
      .query({ attributes: CUSTOM })
      .set(t.entra);
    expect(picked.body[CUSTOM]).toEqual({ CustomAttribute: "one", badge: "7" });
    expect(picked.body).not.toHaveProperty("userName");
    const left = await t.request
      .get(`/scim/v2/entra/Users/${id}`)
      .query({ excludedAttributes: CUSTOM })
      .set(t.entra);
    expect(left.body.userName).toBe("custom@example.com");
    expect(left.body).not.toHaveProperty(CUSTOM);
  });

  it("PATCH add and replace with path <URN> set its attributes", async () => {
    const replaced = await patch([{ op: "Replace", path: CUSTOM, value: { CustomAttribute: "two" } }]);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body[CUSTOM]).toEqual({ CustomAttribute: "two", badge: "7" });
    const added = await patch([{ op: "Add", path: CUSTOM, value: { level: "3" } }]);
    expect(added.status).toBe(200);
    expect(added.body[CUSTOM]).toEqual({ CustomAttribute: "two", badge: "7", level: "3" });
    expect(added.body).not.toHaveProperty("urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0");
  });

  it("PATCH remove with path <URN> removes the extension, and its URN from schemas", async () => {
    const res = await patch([{ op: "Remove", path: CUSTOM }]);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty(CUSTOM);
    expect(res.body.schemas).toEqual([USER]);
  });

  it("an attribute of the extension is still an attribute (…:2.0:User:group is not an extension)", async () => {
    const res = await patch([{ op: "add", path: `${CUSTOM}:group`, value: "g1" }]);
    expect(res.status).toBe(200);
    expect(res.body[CUSTOM]).toEqual({ group: "g1" });
  });
});
