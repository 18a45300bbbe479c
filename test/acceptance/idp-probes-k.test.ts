/**
 * Acceptance probes (round k) of the SCIM intake, as identity providers put requests on the wire
 * (intake only, real Redis):
 * - Entra ID's Add of a multi-valued custom attribute carries the whole new list (pinned: it sets
 *   the list, since no Remove of the values dropped at the source follows);
 * - a replace of an object held by a custom extension with some of its sub-attributes (RFC 7644
 *   §3.5.2.3: the others are left unchanged): the object was replaced whole, and a sub-attribute
 *   sent as null was stored as null;
 * - a remove of one value of such a list by a value filter (`tags[value eq "b"]`, RFC 7644
 *   §3.5.2.2): answered 200, and nothing was removed.
 * Earlier rounds: idp-probes-a/d/e/g/i/j, idp-intake-edges, scim-edges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/** A custom extension named as Entra ID documents them (urn:...:extension:<Name>:2.0:User). */
const ACME = "urn:ietf:params:scim:schemas:extension:Acme:2.0:User";
const base = "/scim/v2/entra";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.k${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("acceptance-idp-probes-k");
});
afterAll(async () => {
  await t.close();
});

const send = (method: "post" | "put" | "patch", path: string, body: unknown) =>
  t.request[method](`${base}${path}`)
    .set(t.entra)
    .set("Content-Type", "application/scim+json")
    .send(JSON.stringify(body));
const get = (path: string) => t.request.get(`${base}${path}`).set(t.entra);
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

type Resource = { id: string; meta: { version: string }; schemas: string[] } & Record<string, unknown>;

async function created(res: { status: number; body: unknown }): Promise<Resource> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}

describe("lists held by a custom extension (Entra ID custom extension attributes)", () => {
  it("Add of a multi-valued custom attribute sets its list, as Entra ID means it (no Remove follows)", async () => {
    // Entra's request when department changes from "2" to "1" under the expression
    // Split([department], ","): an Add of the whole new list (Microsoft Q&A 1693075).
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ACME],
        userName: unique("departments"),
        [ACME]: { department_ids: [{ value: "2" }], costCenter: "4711" },
      }),
    );
    const added = await patch(`/Users/${user.id}`, [
      { op: "Add", path: `${ACME}:department_ids`, value: [{ value: "1" }] },
    ]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body[ACME]).toEqual({ department_ids: [{ value: "1" }], costCenter: "4711" });
    const stale = await get(
      `/Users?filter=${q(`${ACME}:department_ids[value eq "2"] and id eq "${user.id}"`)}`,
    );
    expect(stale.body.totalResults).toBe(0);
  });

  it("Replace of an object with some of its sub-attributes leaves the others (RFC 7644 §3.5.2.3); null clears one", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ACME],
        userName: unique("site"),
        [ACME]: { site: { city: "Berlin", zip: "10115", building: "B2" } },
      }),
    );
    const replaced = await patch(`/Users/${user.id}`, [
      { op: "Replace", path: `${ACME}:site`, value: { city: "Bonn", zip: "53111" } },
    ]);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body[ACME]).toEqual({ site: { city: "Bonn", zip: "53111", building: "B2" } });
    const cleared = await patch(`/Users/${user.id}`, [
      { op: "Replace", value: { [ACME]: { site: { building: null } } } },
    ]);
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body[ACME]).toEqual({ site: { city: "Bonn", zip: "53111" } });
    expect((await get(`/Users/${user.id}`)).body[ACME]).toEqual({ site: { city: "Bonn", zip: "53111" } });
  });

  it("Remove of one value of the list by a value filter removes that value (RFC 7644 §3.5.2.2)", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ACME],
        userName: unique("tags"),
        [ACME]: { otherMails: ["grace@home.example", "grace@club.example"] },
      }),
    );
    const removed = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: `${ACME}:otherMails[value eq "grace@club.example"]` },
    ]);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body[ACME]).toEqual({ otherMails: ["grace@home.example"] });
    expect(removed.headers.etag).not.toBe(user.meta.version);
    expect(t.notified.filter((ref) => ref.id === user.id).length).toBe(2);
    expect((await get(`/Users/${user.id}`)).body[ACME]).toEqual({ otherMails: ["grace@home.example"] });
    // The same value filter in a query finds the user by the value it holds, and not by the one removed.
    const found = await get(`/Users?filter=${q(`${ACME}:otherMails[value eq "GRACE@home.example"]`)}`);
    expect(found.body.Resources.map((r: Resource) => r.id)).toEqual([user.id]);
    const gone = await get(`/Users?filter=${q(`${ACME}:otherMails[value eq "grace@club.example"]`)}`);
    expect(gone.body.totalResults).toBe(0);
  });
});
