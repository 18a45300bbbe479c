/**
 * Pins (round n2r) of requests the n/n2 intake changes could have answered differently and did not
 * (intake only, real Redis): the `&` rejoin of an open filter (d53a780) beside a correctly encoded
 * filter, a `%26` and `attributes=`; `remove members[<filter>].value` (7b93ed4) matching no member,
 * and in a PATCH that fails (nothing applied); OneLogin's enterprise alias (e2884a6) in
 * `attributes=`/`excludedAttributes=` and in a PUT after a create in the RFC's name.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const ONELOGIN_ENT = "urn:scim:schemas:extension:enterprise:2.0";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2r-${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const suite = scimSourceSuite("conformance-intake-pins-n2r", "okta");
const { get, send, created } = suite;

describe("list parameters beside a filter with `&`", () => {
  it("an encoded filter, a `%26`, an open one closed later: count, startIndex and attributes still apply", async () => {
    const name = `R&D ${++n}`;
    const group = await created("/Groups", { schemas: [GROUP], displayName: name });
    const raw = name.replace(" ", "%20");
    for (const query of [
      `filter=${q(`displayName eq "${name}"`)}&count=5&startIndex=1&attributes=displayName`,
      `filter=displayName+eq+%22${raw.replace("&", "%26")}%22&count=5&attributes=displayName`,
      `filter=displayName+eq+%22${raw}%22&attributes=displayName&count=5`,
    ]) {
      const res = await get(`/Groups?${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.Resources, query).toEqual([{ schemas: [GROUP], id: group.id, displayName: name }]);
    }
    const paged = await get(`/Groups?filter=${q(`displayName eq "${name}"`)}&count=5&startIndex=2`);
    expect(paged.body).toMatchObject({ totalResults: 1, startIndex: 2, itemsPerPage: 0 });
  });
});

describe("remove of `members[<filter>].value`", () => {
  it("matching no member is a 204 that changes nothing; in a failing PATCH it applies nothing", async () => {
    const user = await created("/Users", { schemas: [USER], userName: unique("m") });
    const group = await created("/Groups", {
      schemas: [GROUP],
      displayName: unique("g"),
      members: [{ value: user.id }],
    });
    for (const path of ['members[type eq "Group"].value', 'members[value eq "absent"].value']) {
      const res = await send("patch", `/Groups/${group.id}`, {
        schemas: [PATCH],
        Operations: [{ op: "remove", path }],
      });
      expect(res.status, res.text).toBe(204);
    }
    const failing = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: "remove", path: 'members[type eq "User"].value' },
        { op: "replace", path: "displayName", value: 5 },
      ],
    });
    expect(failing.status).toBe(400);
    const after = await get(`/Groups/${group.id}`);
    expect((after.body.members as Array<{ value: string }>).map((m) => m.value)).toEqual([user.id]);
    expect(after.body.meta.version).toBe((group.meta as { version: string }).version);
  });
});

describe("OneLogin's enterprise URN beside the RFC's", () => {
  it("projects by either name; a PUT in OneLogin's name replaces what a create in the RFC's stored", async () => {
    const user = await created("/Users", {
      schemas: [USER, ENT],
      userName: unique("proj"),
      [ENT]: { department: "D", costCenter: "C" },
    });
    const only = await get(`/Users/${user.id}?attributes=${q(`${ONELOGIN_ENT}:department`)}`);
    expect(only.body[ENT]).toEqual({ department: "D" });
    const without = await get(`/Users/${user.id}?excludedAttributes=${q(ONELOGIN_ENT)}`);
    expect(without.body).not.toHaveProperty(ENT);
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER, ONELOGIN_ENT],
      userName: user.userName,
      [ONELOGIN_ENT]: { department: "E" },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.schemas).toEqual([USER, ENT]);
    expect(put.body[ENT]).toEqual({ department: "E" });
    expect(put.body).not.toHaveProperty(ONELOGIN_ENT);
  });
});
