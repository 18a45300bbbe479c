/**
 * Probes (round n2) of the SCIM intake as the keycloak-scim plugin (libre.sh's, in the
 * pelotech/keycloak-scim fork, built on the Captain-P-Goldfish SCIM-SDK client) updates a user
 * with `user-patchOp` on (intake only, real Redis), beside the Keycloak pins of idp-probes-i/l:
 * UserAdapter.toPatchBuilder sends one PatchOp replacing `active` (as the string
 * `active.toString()`), `userName` and `displayName` by path, then one replace per mapped extension
 * attribute (ExtensionAttributeMappings.patchValues) built with `valueNode(...)`, which SCIM-SDK's
 * PatchRequestOperation.setValueNode always wraps in an array: a single value arrives as
 * `[value]`, a multi-valued one (`;multi`) as `[[v1, v2]]`, a list inside the list. SCIM has no
 * list of lists (RFC 7643 §2.4: a multi-valued attribute's values are its elements).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const KC = "urn:ietf:params:scim:schemas:extension:keycloak:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.n2-${++n}@keycloak.example`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("conformance-keycloak-probes-n2");
});
afterAll(async () => {
  await t.close();
});

type User = { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;

const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);
const send = (method: "post" | "patch", path: string, body: unknown) =>
  t.send(method, `${base}${path}`, body);

/** The create keycloak-scim sends (UserAdapter.toSCIM with the extension mappings attached). */
async function createUser(userName: string): Promise<User> {
  const res = await send("post", "/Users", {
    schemas: [USER, ENT, KC],
    externalId: `kc-${n}`,
    userName,
    displayName: "Kay Cloak",
    name: { givenName: "Kay", familyName: "Cloak" },
    emails: [{ value: userName, type: "work", primary: true }],
    active: true,
    roles: [],
    [ENT]: { department: "Eng" },
    [KC]: { badges: ["a"], level: 1 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as User;
}

/** UserAdapter.toPatchBuilder's operations, the extension values as SCIM-SDK's valueNode carries them. */
function update(userName: string, active: boolean, extension: Array<{ path: string; value: unknown }>) {
  return {
    schemas: [PATCH],
    Operations: [
      { op: "replace", path: "active", value: String(active) },
      { op: "replace", path: "userName", value: userName },
      { op: "replace", path: "displayName", value: "Kay Cloak" },
      ...extension.map(({ path, value }) => ({ op: "replace", path, value: [value] })),
    ],
  };
}

describe("keycloak-scim's user update PatchOp", () => {
  it("active as a string, names by path, an enterprise value as [value]", async () => {
    const userName = unique("kay");
    const user = await createUser(userName);
    const res = await send(
      "patch",
      `/Users/${user.id}`,
      update(userName, false, [{ path: `${ENT}:department`, value: "Platform" }]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.active).toBe(false);
    expect(res.body[ENT]).toEqual({ department: "Platform" });
    expect(res.body.displayName).toBe("Kay Cloak");
    const again = await send("patch", `/Users/${user.id}`, update(userName, true, []));
    expect(again.status).toBe(200);
    expect(again.body.active).toBe(true);
  });

  it("a multi-valued custom attribute sent as [[v1, v2]] is the list [v1, v2], found by its values", async () => {
    const userName = unique("multi");
    const user = await createUser(userName);
    const res = await send(
      "patch",
      `/Users/${user.id}`,
      update(userName, true, [{ path: `${KC}:badges`, value: ["gold", "silver"] }]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[KC]).toEqual({ badges: ["gold", "silver"], level: 1 });
    const stored = (await get(`/Users/${user.id}`)).body as User;
    expect(stored[KC]).toEqual({ badges: ["gold", "silver"], level: 1 });
    const found = await get(`/Users?filter=${q(`${KC}:badges eq "silver"`)}`);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect((found.body.Resources as User[]).map((u) => u.id)).toEqual([user.id]);
  });
});
