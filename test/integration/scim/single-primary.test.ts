/**
 * RFC 7643 §2.4: "The primary attribute value 'true' MUST appear no more than once" in a
 * multi-valued attribute. A POST, PUT or PATCH replace that flags several elements keeps the last
 * one flagged as primary (as a PATCH add already does: the one written last wins), so a later
 * `emails[primary eq true]` names one element, not several.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("single-primary");
});
afterAll(async () => {
  await t.close();
});

const primaries = (list: Array<{ value: string; primary?: boolean }> | undefined) =>
  (list ?? []).filter((e) => e.primary === true).map((e) => e.value);

describe("at most one primary element (RFC 7643 §2.4)", () => {
  it("POST with two primary emails and two primary phone numbers keeps the last one of each", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({
        schemas: [USER],
        userName: "two-primaries@example.com",
        emails: [
          { value: "work@example.com", type: "work", primary: true },
          { value: "home@example.com", type: "home", primary: "True" },
        ],
        phoneNumbers: [
          { value: "+1 555 0100", type: "work", primary: true },
          { value: "+1 555 0101", type: "mobile", primary: true },
        ],
      });
    expect(res.status).toBe(201);
    expect(primaries(res.body.emails)).toEqual(["home@example.com"]);
    expect(res.body.emails[0]).toEqual({ value: "work@example.com", type: "work", primary: false });
    expect(primaries(res.body.phoneNumbers)).toEqual(["+1 555 0101"]);
    const stored = await t.request.get(`/scim/v2/okta/Users/${res.body.id}`).set(t.okta);
    expect(stored.body.emails).toEqual(res.body.emails);
  });

  it("PUT and PATCH replace of the whole list keep one primary; a primary eq true path then names one", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], userName: "replaced@example.com" });
    const id = created.body.id;
    const put = await t.request
      .put(`/scim/v2/okta/Users/${id}`)
      .set(t.okta)
      .send({
        schemas: [USER],
        userName: "replaced@example.com",
        emails: [
          { value: "a@example.com", primary: true },
          { value: "b@example.com", primary: true },
        ],
      });
    expect(primaries(put.body.emails)).toEqual(["b@example.com"]);

    const patched = await t.request
      .patch(`/scim/v2/okta/Users/${id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [
          {
            op: "replace",
            path: "emails",
            value: [
              { value: "c@example.com", primary: true },
              { value: "d@example.com", primary: true },
            ],
          },
          { op: "replace", path: "emails[primary eq true].value", value: "e@example.com" },
        ],
      });
    expect(patched.status).toBe(200);
    expect(patched.body.emails).toEqual([
      { value: "c@example.com", primary: false },
      { value: "e@example.com", primary: true },
    ]);
  });
});
