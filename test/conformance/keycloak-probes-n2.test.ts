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
 *
 * keycloak-scim2-storage (suvera) looks a group up before every user sync by pasting its name into
 * `?filter=displayName+eq+%22<name>%22` unencoded (Scim2ClientImpl.filter), and OkHttp leaves a
 * `&` of a query as it is: a group named "R&D" is looked up as `filter=displayName+eq+%22R&D%22`.
 * Read as two parameters, the filter's string never closed (400 invalidFilter); the client took
 * the group for missing, created it again (409) and lost the group's id for its member PATCHes.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const KC = "urn:ietf:params:scim:schemas:extension:keycloak:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2-${++n}@keycloak.example`;
const q = (filter: string) => encodeURIComponent(filter);

const { get, send } = scimSourceSuite("conformance-keycloak-probes-n2", "okta");

type User = { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;

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

describe("keycloak-scim2-storage's group look-up with the name pasted in unencoded", () => {
  const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
  const lookUp = (raw: string) => get(`/Groups?filter=displayName+eq+%22${raw}%22`);

  it("a name with `&` (and `=` after it) is one filter value: the group is found, not a 400", async () => {
    for (const name of [`R&D ${++n}`, `Sales&Marketing=EMEA ${n}`]) {
      const created = await send("post", "/Groups", { schemas: [GROUP], displayName: name });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // OkHttp's canonical form of the pasted URL: the space percent-encoded, `&` and `=` as they are.
      const res = await lookUp(name.replaceAll(" ", "%20"));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((res.body.Resources as User[]).map((g) => g.id)).toEqual([created.body.id]);
    }
  });

  it("a name with `&` that no group has is a 200 with no resources; other parameters still apply", async () => {
    const res = await lookUp(`Nobody%20R&D%20${++n}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.totalResults).toBe(0);
    const paged = await get(`/Groups?filter=displayName+eq+%22R&D%20x%22&count=0&startIndex=1`);
    expect(paged.status, JSON.stringify(paged.body)).toBe(200);
    expect(paged.body).toMatchObject({ totalResults: 0, itemsPerPage: 0 });
  });

  it("a filter whose string is still open after every parameter stays a 400 invalidFilter", async () => {
    const res = await get(`/Groups?filter=displayName+eq+%22R&D`);
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidFilter");
  });
});
