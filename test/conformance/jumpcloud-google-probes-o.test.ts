/**
 * Probes (round o) of the SCIM intake with the generic RFC 7644 edge cases that JumpCloud's custom
 * SCIM integration, Google Workspace's auto-provisioning (custom SAML app) and other clients send,
 * beside the JumpCloud and Google pins of idp-probes-g/i/l and the replays (intake only, real
 * Redis):
 * - PATCH `op` in any case with paths qualified by the resource's own schema URN (RFC 7644 §3.10,
 *   §3.5.2); a path, or a no-path value key or object, qualified by the *other* resource type's
 *   core schema URN names no attribute of the resource (RFC 7643 §3: a User has no attribute of
 *   the Group schema): 400 invalidPath (PATCH) or invalidValue (POST/PUT body), nothing stored;
 * - `filter=userName eq "x"` as clients encode it: `%2B`, a raw `+` inside a `%20`-encoded
 *   filter, raw `"`, an escaped `\"`, an upper-case operator and schema-qualified attribute; a
 *   literal that is not a JSON string is 400 invalidFilter;
 * - `startIndex`/`count` past any page (huge, not a number) and in a SearchRequest;
 * - `attributes` / `excludedAttributes` with URN-qualified names (RFC 7644 §3.9, §3.10);
 * - a full PUT (JumpCloud updates users by PUT) that leaves out, nulls or empties optional
 *   attributes clears them (RFC 7644 §3.5.1);
 * - group member PATCHes whose members carry `display`, `$ref` and `type` (RFC 7643 §4.2); a
 *   member without `value` is 400 and nothing of the PATCH is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.o-${++n}@jc.example`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("conformance-jumpcloud-google-probes-o");
});
afterAll(async () => {
  await t.close();
});

type Resource = { id: string; meta: { version: string } } & Record<string, unknown>;

const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);
const send = (method: "post" | "put" | "patch", path: string, body: unknown) =>
  t.send(method, `${base}${path}`, body);
const ops = (...operations: unknown[]) => ({ schemas: [PATCH], Operations: operations });

async function read(path: string): Promise<Resource> {
  const res = await get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Resource;
}

/** A user as JumpCloud's custom SCIM integration creates one (core attributes, enterprise extension). */
async function createUser(userName = unique("ann")): Promise<Resource> {
  const res = await send("post", "/Users", {
    schemas: [USER, ENT],
    userName,
    externalId: `jc-${n}`,
    name: { givenName: "Ann", familyName: "Lee" },
    displayName: "Ann Lee",
    title: "Engineer",
    emails: [{ value: userName, type: "work", primary: true }],
    phoneNumbers: [{ value: "+1 555 0100", type: "work" }],
    addresses: [{ type: "work", country: "DE" }],
    active: true,
    [ENT]: { department: "R&D", employeeNumber: "42", manager: { value: "m-1", displayName: "Boss" } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}

async function createGroup(displayName: string, members: string[] = []): Promise<Resource> {
  const res = await send("post", "/Groups", {
    schemas: [GROUP],
    displayName,
    members: members.map((value) => ({ value })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}

function expectScimError(
  res: { status: number; body: Record<string, unknown> },
  status: number,
  scimType: string,
) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
  expect(res.body.scimType).toBe(scimType);
}

const memberIds = (g: Resource) =>
  ((g.members as Array<{ value: string }> | undefined) ?? []).map((m) => m.value).sort();

describe("PATCH op in odd case, paths qualified by the resource's own schema URN", () => {
  it("REPLACE/Add/Remove with core- and enterprise-URN paths apply and are stored", async () => {
    const user = await createUser();
    const res = await send(
      "patch",
      `/Users/${user.id}`,
      ops(
        { op: "REPLACE", path: `${USER}:name.givenName`, value: "Anne" },
        { op: "Add", path: `${USER}:emails[type eq "work"].value`, value: "anne@jc.example" },
        { op: "Remove", path: `${USER}:phoneNumbers[type eq "work"]` },
        { op: "remove", path: `${USER}:title` },
        { op: " replace ", path: `${ENT.toLowerCase()}:department`, value: "Ops" },
        { op: "replace", path: `${ENT}:manager.value`, value: "m-2" },
        { op: "Replace", path: `${USER}:active`, value: "False" },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const stored = await read(`/Users/${user.id}`);
    expect(stored.name).toEqual({ givenName: "Anne", familyName: "Lee" });
    expect(stored.emails).toEqual([{ value: "anne@jc.example", type: "work", primary: true }]);
    expect(stored.phoneNumbers).toBeUndefined();
    expect(stored.title).toBeUndefined();
    expect(stored.active).toBe(false);
    expect(stored[ENT]).toEqual({
      department: "Ops",
      employeeNumber: "42",
      manager: { value: "m-2", displayName: "Boss" },
    });
  });

  it("a good operation before one refused (read-only id) leaves nothing stored", async () => {
    const user = await createUser();
    const res = await send(
      "patch",
      `/Users/${user.id}`,
      ops(
        { op: "replace", path: "title", value: "Changed" },
        { op: "Replace", path: `${USER}:id`, value: "x" },
      ),
    );
    expectScimError(res, 400, "mutability");
    const stored = await read(`/Users/${user.id}`);
    expect(stored.title).toBe("Engineer");
    expect(stored.meta.version).toBe(user.meta.version);
  });
});

describe("a path or key qualified by the other resource type's core schema URN", () => {
  it("a user PATCH naming the Group schema's displayName or members is 400 invalidPath, nothing stored", async () => {
    const user = await createUser();
    for (const operation of [
      { op: "replace", path: `${GROUP}:displayName`, value: "Renamed" },
      { op: "add", path: `${GROUP}:members`, value: [{ value: user.id }] },
      { op: "replace", value: { [`${GROUP}:displayName`]: "Renamed" } },
      { op: "replace", value: { [GROUP]: { displayName: "Renamed" } } },
    ]) {
      const res = await send("patch", `/Users/${user.id}`, ops(operation));
      expectScimError(res, 400, "invalidPath");
    }
    const stored = await read(`/Users/${user.id}`);
    expect(stored.displayName).toBe("Ann Lee");
    expect(stored.members).toBeUndefined();
    expect(stored.meta.version).toBe(user.meta.version);
  });

  it("a group PATCH naming the User schema's displayName is 400 invalidPath, the group keeps its name", async () => {
    const group = await createGroup(`JC Group ${++n}`);
    for (const operation of [
      { op: "replace", path: `${USER}:displayName`, value: "Renamed" },
      { op: "replace", value: { [USER]: { displayName: "Renamed" } } },
    ]) {
      const res = await send("patch", `/Groups/${group.id}`, ops(operation));
      expectScimError(res, 400, "invalidPath");
    }
    const stored = await read(`/Groups/${group.id}`);
    expect(stored.displayName).toBe(group.displayName);
    expect(stored.meta.version).toBe(group.meta.version);
  });

  it("a user POST carrying a Group-schema key or object is 400 invalidValue and creates no user", async () => {
    for (const extra of [{ [`${GROUP}:displayName`]: "Oops" }, { [GROUP]: { displayName: "Oops" } }]) {
      const userName = unique("foreign");
      const res = await send("post", "/Users", { schemas: [USER], userName, ...extra });
      expectScimError(res, 400, "invalidValue");
      const found = await get(`/Users?filter=${q(`userName eq "${userName}"`)}`);
      expect(found.status).toBe(200);
      expect(found.body.totalResults).toBe(0);
    }
  });

  it("the own core URN, as key or object, is still read as the resource's attributes", async () => {
    const userName = unique("own");
    const res = await send("post", "/Users", {
      schemas: [USER],
      [`${USER}:userName`]: userName,
      [USER]: { displayName: "Own Urn" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.userName).toBe(userName);
    expect(res.body.displayName).toBe("Own Urn");
    const patched = await send(
      "patch",
      `/Users/${res.body.id}`,
      ops({ op: "replace", value: { [USER]: { displayName: "Own Urn 2", "name.givenName": "Own" } } }),
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.displayName).toBe("Own Urn 2");
    expect(patched.body.name).toEqual({ givenName: "Own" });
  });
});

describe('filter=userName eq "x" as clients encode it', () => {
  let user: Resource;
  let quoted: Resource;
  beforeAll(async () => {
    user = await createUser(`jc.plus+${++n}@jc.example`);
    const res = await send("post", "/Users", { schemas: [USER], userName: `we"ird.${n}@jc.example` });
    expect(res.status).toBe(201);
    quoted = res.body as Resource;
  });
  const ids = (res: { body: { Resources?: Array<{ id: string }> } }) =>
    (res.body.Resources ?? []).map((r) => r.id);

  it("%2B, a raw + in a %20-encoded filter, raw quotes, EQ, an upper-case URN-qualified name all find the user", async () => {
    const name = user.userName as string;
    const encodedPlus = encodeURIComponent(name);
    for (const query of [
      `userName%20eq%20%22${encodedPlus}%22`,
      `userName%20eq%20%22${name.replace("@", "%40")}%22`,
      `userName%20eq%20"${name}"`,
      q(`userName EQ "${name.toUpperCase()}"`),
      q(`${USER.toUpperCase()}:USERNAME eq "${name}"`),
      q(`userName eq "${name}" `),
    ]) {
      const res = await get(`/Users?filter=${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(ids(res), query).toEqual([user.id]);
    }
  });

  it('an escaped \\" inside the literal finds the user whose name holds a quote', async () => {
    const res = await get(
      `/Users?filter=${q(`userName eq "${(quoted.userName as string).replace('"', '\\"')}"`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([quoted.id]);
  });

  it("a single-quoted, bare or double-encoded literal is 400 invalidFilter", async () => {
    for (const query of [
      q(`userName eq '${user.userName}'`),
      q("userName eq bare"),
      "userName%2520eq%2520%2522x%2522",
    ]) {
      expectScimError(await get(`/Users?filter=${query}`), 400, "invalidFilter");
    }
  });

  it("a filter on the enterprise manager's value finds the user", async () => {
    const res = await get(
      `/Users?filter=${q(`${ENT}:manager.value eq "m-1" and userName eq "${user.userName}"`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([user.id]);
  });
});

describe("startIndex and count past any page", () => {
  it("a huge count is clamped, a huge startIndex answers no resources with the total, a non-number is 400", async () => {
    await createUser();
    const all = await get("/Users?count=99999999999999999999&attributes=userName");
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.Resources.length).toBe(all.body.totalResults);
    const past = await get("/Users?startIndex=99999999999999999999&count=10");
    expect(past.status, JSON.stringify(past.body)).toBe(200);
    expect(past.body.Resources).toEqual([]);
    expect(past.body.itemsPerPage).toBe(0);
    expect(past.body.totalResults).toBe(all.body.totalResults);
    for (const query of ["count=abc", "startIndex=ten", "count=Infinity"]) {
      expectScimError(await get(`/Users?${query}`), 400, "invalidValue");
    }
  });

  it("a SearchRequest with startIndex 0 and a negative count answers the total and no resources", async () => {
    const user = await createUser();
    const res = await send("post", "/Users/.search", {
      schemas: [SEARCH],
      filter: `userName eq "${user.userName}"`,
      attributes: [`${USER}:userName`],
      startIndex: 0,
      count: -3,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 0, Resources: [] });
  });
});

describe("attributes and excludedAttributes with URN-qualified names", () => {
  it("core, enterprise and sub-attribute names qualified by their URN select just those", async () => {
    const user = await createUser();
    const pick = async (attributes: string) => {
      const res = await get(`/Users/${user.id}?attributes=${encodeURIComponent(attributes)}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { schemas: _s, id, ...rest } = res.body as Resource;
      expect(id).toBe(user.id);
      return rest;
    };
    expect(await pick(`${USER}:userName`)).toEqual({ userName: user.userName });
    expect(await pick(`${USER}:name.givenName`)).toEqual({ name: { givenName: "Ann" } });
    expect(await pick(`${ENT}:department`)).toEqual({ [ENT]: { department: "R&D" } });
    expect(await pick(`${ENT}:manager.displayName`)).toEqual({ [ENT]: { manager: { displayName: "Boss" } } });
    expect(await pick(ENT)).toEqual({
      [ENT]: { department: "R&D", employeeNumber: "42", manager: { value: "m-1", displayName: "Boss" } },
    });
    expect(await pick(`${USER.toUpperCase()}:USERNAME,emails.value`)).toEqual({
      userName: user.userName,
      emails: [{ value: user.userName }],
    });
  });

  it("excluded URN-qualified names are left out; id is returned even when excluded", async () => {
    const user = await createUser();
    const res = await get(
      `/Users/${user.id}?excludedAttributes=${encodeURIComponent(`${USER}:emails,${ENT}:department,id`)}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(user.id);
    expect(res.body.emails).toBeUndefined();
    expect(res.body[ENT]).toEqual({ employeeNumber: "42", manager: { value: "m-1", displayName: "Boss" } });
    expect(res.body.userName).toBe(user.userName);
  });

  it("a group's URN-qualified members.value and excluded members", async () => {
    const user = await createUser();
    const group = await createGroup(`JC Attr ${++n}`, [user.id]);
    const values = await get(
      `/Groups/${group.id}?attributes=${encodeURIComponent(`${GROUP}:members.value`)}`,
    );
    expect(values.status).toBe(200);
    expect(values.body.members).toEqual([{ value: user.id }]);
    expect(values.body.displayName).toBeUndefined();
    const without = await get(
      `/Groups/${group.id}?excludedAttributes=${encodeURIComponent(`${GROUP}:members`)}`,
    );
    expect(without.status).toBe(200);
    expect(without.body.members).toBeUndefined();
    expect(without.body.displayName).toBe(group.displayName);
  });

  it("a name with a value filter is 400 invalidValue", async () => {
    const user = await createUser();
    const res = await get(`/Users/${user.id}?attributes=${encodeURIComponent('emails[type eq "work"]')}`);
    expectScimError(res, 400, "invalidValue");
  });
});

describe("a full PUT (JumpCloud's update) that leaves out, nulls or empties optional attributes", () => {
  it("clears each of them; the stated ones and an id in the body that differs change nothing else", async () => {
    const user = await createUser();
    const res = await send("put", `/Users/${user.id}`, {
      schemas: [USER, ENT],
      id: "some-other-id",
      userName: user.userName,
      name: null,
      emails: [],
      addresses: [],
      [ENT]: {},
      title: "Lead",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const stored = await read(`/Users/${user.id}`);
    expect(stored.id).toBe(user.id);
    expect(stored.title).toBe("Lead");
    for (const gone of ["name", "emails", "addresses", "phoneNumbers", "displayName", "externalId", ENT]) {
      expect(stored[gone], gone).toBeUndefined();
    }
    expect(stored.schemas).toEqual([USER]);
    expect(await get(`/Users/some-other-id`).then((r) => r.status)).toBe(404);
  });
});

describe("group member PATCHes whose members carry display, $ref and type", () => {
  it("add and remove by value lists with display/$ref, URN-qualified paths and filters", async () => {
    const ann = await createUser();
    const bob = await createUser(unique("bob"));
    const group = await createGroup(`JC Members ${++n}`, [ann.id]);
    const add = await send(
      "patch",
      `/Groups/${group.id}`,
      ops({
        op: "Add",
        path: `${GROUP}:members`,
        value: [{ value: bob.id, display: "Bob", $ref: `https://idp.example/Users/${bob.id}`, type: "User" }],
      }),
    );
    expect([200, 204]).toContain(add.status);
    const added = await read(`/Groups/${group.id}`);
    expect(memberIds(added)).toEqual([ann.id, bob.id].sort());
    for (const m of added.members as Array<Record<string, unknown>>) {
      expect(m.type).toBe("User");
      expect(String(m.$ref)).toMatch(new RegExp(`${base}/Users/${m.value}$`));
    }
    const removeList = await send(
      "patch",
      `/Groups/${group.id}`,
      ops({
        op: "REMOVE",
        path: "members",
        value: [{ value: ann.id, display: "Ann Lee", $ref: `../Users/${ann.id}` }],
      }),
    );
    expect([200, 204]).toContain(removeList.status);
    expect(memberIds(await read(`/Groups/${group.id}`))).toEqual([bob.id]);
    const removeFilter = await send(
      "patch",
      `/Groups/${group.id}`,
      ops({ op: "remove", path: `${GROUP}:members[value eq "${bob.id}"]` }),
    );
    expect([200, 204]).toContain(removeFilter.status);
    expect(memberIds(await read(`/Groups/${group.id}`))).toEqual([]);
  });

  it("a member with only $ref (no value) is 400 invalidValue and nothing of the PATCH is stored", async () => {
    const ann = await createUser();
    const bob = await createUser(unique("bob"));
    const group = await createGroup(`JC Ref ${++n}`, [ann.id]);
    const res = await send(
      "patch",
      `/Groups/${group.id}`,
      ops(
        { op: "replace", path: "displayName", value: "Renamed" },
        { op: "add", path: "members", value: [{ value: bob.id }] },
        {
          op: "add",
          path: "members",
          value: [{ $ref: `https://idp.example/Users/${bob.id}`, display: "Bob" }],
        },
      ),
    );
    expectScimError(res, 400, "invalidValue");
    const stored = await read(`/Groups/${group.id}`);
    expect(stored.displayName).toBe(group.displayName);
    expect(memberIds(stored)).toEqual([ann.id]);
    expect(stored.meta.version).toBe(group.meta.version);
  });
});

describe("Google Workspace's connection probe and its 'Delete the user' deprovisioning", () => {
  it("`GET /Users?count=1` on a source with no users answers an empty ListResponse", async () => {
    const res = await t.request.get("/scim/v2/entra/Users?count=1").set(t.entra);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it("a deleted user leaves its groups, is 404 by id and absent by filter; the same userName is created anew", async () => {
    const ann = await createUser();
    const bob = await createUser(unique("bob"));
    const group = await createGroup(`G Scope ${++n}`, [ann.id, bob.id]);
    const del = await t.request.delete(`${base}/Users/${ann.id}`).set(t.okta);
    expect(del.status).toBe(204);
    expect(memberIds(await read(`/Groups/${group.id}`))).toEqual([bob.id]);
    expect((await get(`/Users/${ann.id}`)).status).toBe(404);
    expect((await t.request.delete(`${base}/Users/${ann.id}`).set(t.okta)).status).toBe(404);
    const byName = await get(`/Users?filter=${q(`userName eq "${ann.userName}"`)}`);
    expect(byName.body).toMatchObject({ totalResults: 0, Resources: [] });
    const byMember = await get(`/Groups?filter=${q(`members.value eq "${ann.id}"`)}`);
    expect(byMember.body).toMatchObject({ totalResults: 0, Resources: [] });
    const again = await send("post", "/Users", { schemas: [USER], userName: ann.userName });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.id).not.toBe(ann.id);
  });
});

describe("updates JumpCloud and Google send to an existing user", () => {
  it("a PUT or PATCH changing only the case of the user's own userName is no conflict; another's is 409", async () => {
    const user = await createUser(`Case.${++n}@JC.example`);
    const other = await createUser();
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: (user.userName as string).toLowerCase(),
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.userName).toBe((user.userName as string).toLowerCase());
    const patch = await send(
      "patch",
      `/Users/${user.id}`,
      ops({ op: "replace", path: "userName", value: (user.userName as string).toUpperCase() }),
    );
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    const before = await read(`/Users/${user.id}`);
    const taken = await send(
      "patch",
      `/Users/${user.id}`,
      ops({ op: "replace", path: "userName", value: (other.userName as string).toUpperCase() }),
    );
    expectScimError(taken, 409, "uniqueness");
    expect((await read(`/Users/${user.id}`)).meta.version).toBe(before.meta.version);
  });

  it("a replace of complex `name` with some sub-attributes keeps the others (RFC 7644 §3.5.2.3); an email added twice is kept once", async () => {
    const user = await createUser();
    const res = await send(
      "patch",
      `/Users/${user.id}`,
      ops(
        { op: "replace", path: "name", value: { givenName: "Anne" } },
        {
          op: "add",
          path: "emails",
          value: [{ value: (user.userName as string).toUpperCase(), type: "work" }],
        },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const stored = await read(`/Users/${user.id}`);
    expect(stored.name).toEqual({ givenName: "Anne", familyName: "Lee" });
    expect((stored.emails as unknown[]).length).toBe(1);
  });
});
