/**
 * Acceptance probes (round j) of the SCIM intake, as identity providers put requests on the wire
 * (intake only, real Redis):
 * - schema extensions named in the SCIM 1.1 way, with a version as the URN's last segment: Okta's
 *   group description (`urn:okta:custom:group:1.0`, "sent automatically" for a group that has a
 *   description, with no way to turn it off: Okta's SCIM reference), and the custom extensions
 *   admins write after OneLogin's documented templates (`urn:scim:schemas:extension:enterprise:1.0`
 *   beside their own `urn:scim:schemas:extension:<company>:1.0`). Such a URN was read as an
 *   attribute "1.0" of a schema, not a valid name, so the whole create, PUT or PATCH was a 400;
 * - an extension sent as `null` (serializers that write every property, null ones included):
 *   RFC 7643 §2.5 makes null unassigned, as it is for every other attribute; it was a 400;
 * - Entra ID's default role mappings (`roles[primary eq "True"].value`, `.display`, `.type`).
 * Earlier rounds: idp-probes-a/d/e/g/i, idp-intake-edges, scim-edges.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/** Okta's group description extension (Okta SCIM reference, "Create Groups"). */
const OKTA_GROUP = "urn:okta:custom:group:1.0";
/** A custom extension named as OneLogin's templates name the enterprise one (SCIM 1.1 style). */
const ACME_1_0 = "urn:scim:schemas:extension:acme:1.0";
const ENTRA_CUSTOM = "urn:ietf:params:scim:schemas:extension:Acme:2.0:User";

let n = 0;
const unique = (stem: string) => `${stem}.j${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const { get, send } = scimSourceSuite("acceptance-idp-probes-j", "okta");
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

type Resource = { id: string; meta: { version: string }; schemas: string[] } & Record<string, unknown>;

async function created(res: { status: number; body: unknown }): Promise<Resource> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}

describe("schema extensions whose URN ends in a version (SCIM 1.1 naming: Okta, OneLogin templates)", () => {
  it("Okta's group push of a group with a description (`urn:okta:custom:group:1.0`) creates the group with it", async () => {
    const displayName = `West ${++n}`;
    const group = await created(
      await send("post", "/Groups", {
        schemas: [GROUP, OKTA_GROUP],
        displayName,
        members: [],
        [OKTA_GROUP]: { description: "All Users West of the Rockies" },
      }),
    );
    expect(group.displayName).toBe(displayName);
    expect(group[OKTA_GROUP]).toEqual({ description: "All Users West of the Rockies" });
    expect(group.schemas).toEqual([GROUP, OKTA_GROUP]);
    const read = await get(`/Groups/${group.id}`);
    expect(read.status).toBe(200);
    expect(read.body[OKTA_GROUP]).toEqual({ description: "All Users West of the Rockies" });
    // Found by its name, as Okta looks a pushed group up; and by the description, URN-qualified.
    const byName = await get(
      `/Groups?filter=${q(`displayName eq "${displayName}"`)}&excludedAttributes=members`,
    );
    expect(byName.body.Resources.map((r: Resource) => r.id)).toEqual([group.id]);
    const byDescription = await get(
      `/Groups?filter=${q(`${OKTA_GROUP}:description eq "all users west of the rockies"`)}`,
    );
    expect(byDescription.body.Resources.map((r: Resource) => r.id)).toEqual([group.id]);
  });

  it("a PUT and the PATCHes Okta and others send carry the extension: replaced, patched by path and without path, removed", async () => {
    const group = await created(
      await send("post", "/Groups", { schemas: [GROUP], displayName: `East ${++n}` }),
    );
    const put = await send("put", `/Groups/${group.id}`, {
      schemas: [GROUP, OKTA_GROUP],
      id: group.id,
      displayName: group.displayName,
      [OKTA_GROUP]: { description: "one" },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body[OKTA_GROUP]).toEqual({ description: "one" });

    const byPath = await patch(`/Groups/${group.id}`, [
      { op: "replace", path: `${OKTA_GROUP}:description`, value: "two" },
    ]);
    expect(byPath.status, JSON.stringify(byPath.body)).toBe(204);
    expect((await get(`/Groups/${group.id}`)).body[OKTA_GROUP]).toEqual({ description: "two" });

    // Okta's group rename: a no-path replace of the group's attributes (id included).
    const noPath = await patch(`/Groups/${group.id}`, [
      {
        op: "replace",
        value: { id: group.id, displayName: group.displayName, [OKTA_GROUP]: { description: "three" } },
      },
    ]);
    expect(noPath.status, JSON.stringify(noPath.body)).toBe(204);
    expect((await get(`/Groups/${group.id}`)).body[OKTA_GROUP]).toEqual({ description: "three" });

    const whole = await patch(`/Groups/${group.id}`, [
      { op: "add", path: OKTA_GROUP, value: { region: "east" } },
    ]);
    expect(whole.status, JSON.stringify(whole.body)).toBe(204);
    expect((await get(`/Groups/${group.id}`)).body[OKTA_GROUP]).toEqual({
      description: "three",
      region: "east",
    });

    const removed = await patch(`/Groups/${group.id}`, [{ op: "remove", path: OKTA_GROUP }]);
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    const after = await get(`/Groups/${group.id}`);
    expect(after.body).not.toHaveProperty(OKTA_GROUP);
    expect(after.body.schemas).toEqual([GROUP]);
  });

  it("a user carrying a custom extension named like OneLogin's enterprise one (`urn:scim:schemas:extension:acme:1.0`)", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: ["urn:scim:schemas:core:1.0", "urn:scim:schemas:extension:enterprise:1.0", ACME_1_0],
        userName: unique("acme"),
        "urn:scim:schemas:extension:enterprise:1.0": { department: "Sales" },
        [ACME_1_0]: { badge: "B-7", site: "Lyon" },
      }),
    );
    expect(user[ENTERPRISE]).toEqual({ department: "Sales" });
    expect(user[ACME_1_0]).toEqual({ badge: "B-7", site: "Lyon" });

    // attributes= and excludedAttributes= name the whole extension by its URN (RFC 7644 §3.9).
    const picked = await get(`/Users/${user.id}?attributes=${q(ACME_1_0)}`);
    expect(picked.status, JSON.stringify(picked.body)).toBe(200);
    expect(picked.body[ACME_1_0]).toEqual({ badge: "B-7", site: "Lyon" });
    expect(picked.body).not.toHaveProperty("userName");
    const left = await get(`/Users/${user.id}?excludedAttributes=${q(ACME_1_0)}`);
    expect(left.status).toBe(200);
    expect(left.body).not.toHaveProperty(ACME_1_0);
    expect(left.body[ENTERPRISE]).toEqual({ department: "Sales" });

    const patched = await patch(`/Users/${user.id}`, [
      { op: "replace", path: `${ACME_1_0}:site`, value: "Paris" },
      { op: "remove", path: `${ACME_1_0}:badge` },
    ]);
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body[ACME_1_0]).toEqual({ site: "Paris" });

    // A full PUT without the extension clears it, as it clears any attribute it leaves out.
    const put = await send("put", `/Users/${user.id}`, { schemas: [USER], userName: user.userName });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).not.toHaveProperty(ACME_1_0);
    expect(put.body.schemas).toEqual([USER]);
  });

  it("names that are still no schema and no attribute stay a 400 and write nothing", async () => {
    const user = await created(await send("post", "/Users", { schemas: [USER], userName: unique("strict") }));
    // A known schema's attribute must be a name: `1x` is none (RFC 7643 §2.1 ATTRNAME).
    const badAttr = await patch(`/Users/${user.id}`, [{ op: "add", path: `${ENTERPRISE}:1x`, value: "y" }]);
    expect(badAttr.status).toBe(400);
    expect(badAttr.body.scimType).toBe("invalidPath");
    // The RFC's own namespaces hold no extensions.
    const coreVersion = await send("post", "/Users", {
      schemas: [USER],
      userName: unique("never"),
      "urn:ietf:params:scim:schemas:core:2.0": { a: "b" },
    });
    expect(coreVersion.status).toBe(400);
    expect((await get(`/Users/${user.id}`)).body.meta.version).toBe(user.meta.version);
  });
});

describe("an extension sent as null (RFC 7643 §2.5: null is unassigned)", () => {
  it("a POST naming the enterprise or a custom extension as null creates the user without it", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ENTERPRISE, ENTRA_CUSTOM],
        userName: unique("nulls"),
        name: { givenName: "Nell", familyName: null },
        [ENTERPRISE]: null,
        [ENTRA_CUSTOM]: null,
        [OKTA_GROUP]: null,
      }),
    );
    expect(user.schemas).toEqual([USER]);
    expect(user).not.toHaveProperty(ENTERPRISE);
    expect(user).not.toHaveProperty(ENTRA_CUSTOM);
    expect(user.name).toEqual({ givenName: "Nell" });
  });

  it("a PUT with the extension as null clears it, as a PUT leaving it out does", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ENTERPRISE, ENTRA_CUSTOM],
        userName: unique("put-null"),
        [ENTERPRISE]: { department: "Ops", employeeNumber: "42" },
        [ENTRA_CUSTOM]: { badge: "7" },
      }),
    );
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER, ENTERPRISE],
      id: user.id,
      userName: user.userName,
      [ENTERPRISE]: null,
      [ENTRA_CUSTOM]: null,
      groups: null,
      meta: null,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).not.toHaveProperty(ENTERPRISE);
    expect(put.body).not.toHaveProperty(ENTRA_CUSTOM);
    expect(put.body.schemas).toEqual([USER]);
    const byDepartment = await get(`/Users?filter=${q(`${ENTERPRISE}:department eq "Ops"`)}`);
    expect(byDepartment.body.totalResults).toBe(0);
  });

  it("a PATCH replacing the extension with null, by path or without, removes it; on a user without it nothing changes", async () => {
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER, ENTERPRISE, ENTRA_CUSTOM],
        userName: unique("patch-null"),
        [ENTERPRISE]: { department: "Ops", manager: { value: "boss-1" } },
        [ENTRA_CUSTOM]: { badge: "7" },
      }),
    );
    const byPath = await patch(`/Users/${user.id}`, [{ op: "replace", path: ENTERPRISE, value: null }]);
    expect(byPath.status, JSON.stringify(byPath.body)).toBe(200);
    expect(byPath.body).not.toHaveProperty(ENTERPRISE);
    expect(byPath.body[ENTRA_CUSTOM]).toEqual({ badge: "7" });
    expect(byPath.body.schemas).toEqual([USER, ENTRA_CUSTOM]);

    const noPath = await patch(`/Users/${user.id}`, [{ op: "replace", value: { [ENTRA_CUSTOM]: null } }]);
    expect(noPath.status, JSON.stringify(noPath.body)).toBe(200);
    expect(noPath.body).not.toHaveProperty(ENTRA_CUSTOM);
    expect(noPath.body.schemas).toEqual([USER]);

    // Nothing left to clear: the write changes nothing (version as it was).
    const again = await patch(`/Users/${user.id}`, [
      { op: "replace", path: ENTERPRISE, value: null },
      { op: "replace", value: { [ENTRA_CUSTOM]: null } },
    ]);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.meta.version).toBe(noPath.body.meta.version);
  });

  it("a group PUT with an extension as null is the group without it", async () => {
    const group = await created(
      await send("post", "/Groups", {
        schemas: [GROUP, OKTA_GROUP],
        displayName: `Null ext ${++n}`,
        [OKTA_GROUP]: { description: "d" },
      }),
    );
    const put = await send("put", `/Groups/${group.id}`, {
      schemas: [GROUP],
      displayName: group.displayName,
      [OKTA_GROUP]: null,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).not.toHaveProperty(OKTA_GROUP);
  });
});

describe('Entra ID\'s default role mappings (`roles[primary eq "True"].value|display|type`)', () => {
  it("add creates the primary role from the filter; replace of its display and type; remove of its value takes it out", async () => {
    const user = await created(await send("post", "/Users", { schemas: [USER], userName: unique("roles") }));
    const added = await patch(`/Users/${user.id}`, [
      { op: "Add", path: 'roles[primary eq "True"].value', value: "Reader" },
      { op: "Add", path: 'roles[primary eq "True"].display', value: "Reader" },
      { op: "Add", path: 'roles[primary eq "True"].type', value: "WindowsAzureActiveDirectoryRole" },
    ]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.roles).toEqual([
      { primary: true, value: "Reader", display: "Reader", type: "WindowsAzureActiveDirectoryRole" },
    ]);

    const replaced = await patch(`/Users/${user.id}`, [
      { op: "Replace", path: 'roles[primary eq "True"].value', value: "Admin" },
      { op: "Replace", path: 'roles[primary eq "True"].display', value: "Admin" },
    ]);
    expect(replaced.status).toBe(200);
    expect(replaced.body.roles).toEqual([
      { primary: true, value: "Admin", display: "Admin", type: "WindowsAzureActiveDirectoryRole" },
    ]);
    const found = await get(
      `/Users?filter=${q('roles[primary eq true and value eq "admin"]')}&attributes=userName`,
    );
    expect(found.body.Resources.map((r: Resource) => r.id)).toEqual([user.id]);

    const removed = await patch(`/Users/${user.id}`, [
      { op: "Remove", path: 'roles[primary eq "True"].value', value: "Admin" },
    ]);
    expect(removed.status).toBe(200);
    expect(removed.body).not.toHaveProperty("roles");
  });
});
