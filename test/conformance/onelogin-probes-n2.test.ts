/**
 * Probes (round n2) of the SCIM intake as OneLogin's SCIM provisioner sends users (intake only,
 * real Redis), beside the OneLogin pins of idp-probes-d/l and the onelogin-templates replay (which
 * pins the SCIM 1.x template: `urn:scim:schemas:extension:enterprise:1.0`, `managerId`):
 * OneLogin's SCIM v2 user templates name the enterprise extension `urn:scim:schemas:extension:
 * enterprise:2.0`, without the `:User` of RFC 7643 §4.3's
 * `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User` (service providers that take
 * OneLogin's traffic map one onto the other, e.g. "OneLogin compatibility: Handle non-standard
 * enterprise extension key" in their request models). Kept as an unknown extension of its own,
 * the user's department, employee number and manager were invisible to the attribute mappings
 * (`from: urn:ietf:...:enterprise:2.0:User:department`), to filters on them and to the manager
 * normalisation (`managerId`), and a later PUT in the RFC's name left the stale copy beside it.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const ONELOGIN_ENT = "urn:scim:schemas:extension:enterprise:2.0";
const ONELOGIN_CORE = "urn:scim:schemas:core:2.0";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2-${++n}@onelogin.example`;

const { get, send, ids } = scimSourceSuite("conformance-onelogin-probes-n2", "okta");

type User = { id: string; userName: string } & Record<string, unknown>;

/** OneLogin's SCIM v2 Enterprise template, its placeholders filled in. */
function template(userName: string, department: string, managerId: string) {
  return {
    schemas: [ONELOGIN_CORE, ONELOGIN_ENT],
    userName,
    name: { familyName: "Lovelace", givenName: "Ada", formatted: "Ada Lovelace" },
    emails: [{ value: userName, type: "work", primary: true }],
    title: "Analyst",
    [ONELOGIN_ENT]: { department, employeeNumber: "1815", manager: { managerId } },
  };
}

describe("OneLogin's `urn:scim:schemas:extension:enterprise:2.0`", () => {
  it("is the enterprise extension: a create keeps it under the RFC's URN, manager from managerId", async () => {
    const boss = await send("post", "/Users", { schemas: [ONELOGIN_CORE], userName: unique("grace") });
    expect(boss.status, JSON.stringify(boss.body)).toBe(201);
    const userName = unique("ada");
    const res = await send("post", "/Users", template(userName, "R&D", boss.body.id));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const user = res.body as User;
    expect(user.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:User", ENT]);
    expect(user[ENT]).toEqual({
      department: "R&D",
      employeeNumber: "1815",
      manager: { value: boss.body.id },
    });
    expect(user).not.toHaveProperty(ONELOGIN_ENT);
    expect(await ids(`${ENT}:department eq "R&D"`)).toContain(user.id);
    expect(await ids(`${ENT}:manager.value eq "${boss.body.id}"`)).toEqual([user.id]);
  });

  it("a PUT of the template replaces the extension's values, with nothing left under the other name", async () => {
    const userName = unique("put");
    const created = await send("post", "/Users", template(userName, "R&D", "m-1"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as User).id;
    const res = await send("put", `/Users/${id}`, template(userName, "Research", "m-2"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const stored = (await get(`/Users/${id}`)).body as User;
    expect(stored[ENT]).toEqual({
      department: "Research",
      employeeNumber: "1815",
      manager: { value: "m-2" },
    });
    expect(stored).not.toHaveProperty(ONELOGIN_ENT);
    expect(await ids(`${ENT}:department eq "Research"`)).toContain(id);
  });

  it("a PATCH path, a no-path key and a filter in that name read the enterprise attribute", async () => {
    const created = await send("post", "/Users", template(unique("patch"), "R&D", "m-1"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as User).id;
    const res = await send("patch", `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [
        { op: "replace", path: `${ONELOGIN_ENT}:department`, value: "Ops" },
        { op: "replace", value: { [ONELOGIN_ENT]: { costCenter: "CC-9" } } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENT]).toEqual({
      department: "Ops",
      employeeNumber: "1815",
      manager: { value: "m-1" },
      costCenter: "CC-9",
    });
    expect(res.body).not.toHaveProperty(ONELOGIN_ENT);
    expect(await ids(`${ONELOGIN_ENT}:department eq "Ops"`)).toEqual([id]);
  });
});

describe("OneLogin's request lines as a service provider logged them (goauthentik/authentik#11249)", () => {
  it("a look-up ending in `&`, a PUT and a group PATCH ending in `?` answer as without them", async () => {
    const userName = `onelogin-test-user${++n}`;
    const created = await send("post", "/Users", template(userName, "R&D", "m-1"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as User).id;
    const found = await get(`/Users?filter=userName+eq+%22${userName}%22&`);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect((found.body.Resources as User[]).map((u) => u.id)).toEqual([id]);

    const put = await send("put", `/Users/${id}?`, {
      ...template(userName, "R&D", "m-1"),
      name: { familyName: " User 01", givenName: "AAA Test" },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.name).toEqual({ familyName: " User 01", givenName: "AAA Test" });

    const group = await send("post", "/Groups?", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: `OL ${n}`,
    });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const patch = await send("patch", `/Groups/${group.body.id}?`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: id }] }],
    });
    expect(patch.status, JSON.stringify(patch.body)).toBe(204);
    const members = (await get(`/Groups/${group.body.id}`)).body.members as Array<{ value: string }>;
    expect(members.map((m) => m.value)).toEqual([id]);
  });
});
