/**
 * keycloak-scim's list-in-list (round o2): SCIM-SDK wraps a `;multi` extension attribute's list in
 * a list (`[["a", "b"]]`: keycloak-probes-n2). A PATCH by path reads it as the inner list
 * (listInList in dialects.ts); a POST or PUT, and a PATCH without path, kept `[["a", "b"]]`, a
 * list of lists SCIM does not have (RFC 7643 §2.4). Every write now stores `["a", "b"]`, so the
 * same attribute is the same value whichever request set it, and a filter on its values finds it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const KC = "urn:ietf:params:scim:schemas:extension:keycloak:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;

beforeAll(async () => {
  t = await createScimTestApp("conformance-keycloak-list-in-list-o2");
});
afterAll(async () => {
  await t.close();
});

const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);

describe("a custom attribute sent as [[v1, v2]]", () => {
  it("is stored as [v1, v2] by POST, PUT and a PATCH with or without path alike", async () => {
    const userName = `kc.o2-${++n}@keycloak.example`;
    const created = await t.send("post", `${base}/Users`, {
      schemas: [USER, KC],
      userName,
      [KC]: { badges: [["gold", "silver"]], level: 1 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body[KC]).toEqual({ badges: ["gold", "silver"], level: 1 });
    const id = created.body.id as string;
    expect((await get(`/Users/${id}`)).body[KC]).toEqual({ badges: ["gold", "silver"], level: 1 });

    const put = await t.send("put", `${base}/Users/${id}`, {
      schemas: [USER, KC],
      userName,
      [`${KC}:badges`]: [["bronze", "gold"]],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body[KC]).toEqual({ badges: ["bronze", "gold"] });

    const byPath = await t.send("patch", `${base}/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: `${KC}:badges`, value: [["a", "b"]] }],
    });
    expect(byPath.status, JSON.stringify(byPath.body)).toBe(200);
    expect(byPath.body[KC]).toEqual({ badges: ["a", "b"] });

    const noPath = await t.send("patch", `${base}/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", value: { [KC]: { badges: [["c", "d"]] } } }],
    });
    expect(noPath.status, JSON.stringify(noPath.body)).toBe(200);
    expect(noPath.body[KC]).toEqual({ badges: ["c", "d"] });

    const found = await get(`/Users?filter=${encodeURIComponent(`${KC}:badges eq "d"`)}`);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect((found.body.Resources as Array<{ id: string }>).map((r) => r.id)).toEqual([id]);
  });

  it("a list of several lists is not a wrapped list and is kept as it is", async () => {
    const res = await t.send("post", `${base}/Users`, {
      schemas: [USER, KC],
      userName: `kc.o2-${++n}@keycloak.example`,
      [KC]: { pairs: [["a"], ["b"]] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body[KC]).toEqual({ pairs: [["a"], ["b"]] });
  });
});
