/**
 * Follow-ups (round o2) of probe-o's foreign core schema URN (jumpcloud-google-probes-o): a User
 * has no attribute of the Group schema and a Group none of the User schema (RFC 7643 §3, §4), and
 * what writes refuse (isForeignCoreUrn) reads must not take as the resource's own:
 * - a list filter naming an attribute of the other resource type's core schema is 400
 *   invalidFilter (RFC 7644 §3.4.2.2, §3.12: the attribute is not one of the resource type's),
 *   as strict servers answer; the resource's own core URN still qualifies its attributes;
 * - `attributes` / `excludedAttributes` naming such an attribute name nothing the resource has
 *   (RFC 7644 §3.4.2.5): it is not returned, and excluding it leaves the resource's own
 *   attribute of the same name in place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const q = (text: string) => encodeURIComponent(text);

beforeAll(async () => {
  t = await createScimTestApp("conformance-foreign-core-urn-reads-o2");
});
afterAll(async () => {
  await t.close();
});

type Resource = { id: string } & Record<string, unknown>;

const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);

async function create(kind: "Users" | "Groups", body: Record<string, unknown>): Promise<Resource> {
  const res = await t.send("post", `${base}/${kind}`, body);
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
  expect(res.body.scimType).toBe(scimType);
}

describe("a filter naming the other resource type's core schema", () => {
  let user: Resource;
  let group: Resource;
  beforeAll(async () => {
    const name = `Shared Name o2-${++n}`;
    user = await create("Users", { schemas: [USER], userName: `u.o2-${n}@x.example`, displayName: name });
    group = await create("Groups", { schemas: [GROUP], displayName: name });
  });

  it("is 400 invalidFilter on /Users, /Groups and .search; the own URN still finds the resource", async () => {
    const name = user.displayName as string;
    for (const path of [
      `/Users?filter=${q(`${GROUP}:displayName eq "${name}"`)}`,
      `/Users?filter=${q(`userName pr and ${GROUP.toUpperCase()}:DISPLAYNAME eq "${name}"`)}`,
      `/Users?filter=${q(`${GROUP}:members.value eq "x"`)}`,
      `/Groups?filter=${q(`${USER}:displayName eq "${name}"`)}`,
      `/Groups?filter=${q(`${USER}:userName eq "${user.userName}"`)}`,
    ]) {
      const res = await get(path);
      expectScimError(res, 400, "invalidFilter");
      expect(String(res.body.detail).toLowerCase(), path).toContain("urn:ietf:params:scim:schemas:core:2.0:");
    }
    const search = await t.send("post", `${base}/Users/.search`, {
      schemas: [SEARCH],
      filter: `${GROUP}:displayName eq "${name}"`,
    });
    expectScimError(search, 400, "invalidFilter");
    const users = await get(`/Users?filter=${q(`${USER}:displayName eq "${name}"`)}`);
    expect(users.status, JSON.stringify(users.body)).toBe(200);
    expect((users.body.Resources as Resource[]).map((r) => r.id)).toEqual([user.id]);
    const groups = await get(`/Groups?filter=${q(`${GROUP}:displayName eq "${name}"`)}`);
    expect(groups.status, JSON.stringify(groups.body)).toBe(200);
    expect((groups.body.Resources as Resource[]).map((r) => r.id)).toEqual([group.id]);
  });
});

describe("attributes and excludedAttributes naming the other resource type's core schema", () => {
  it("are not returned by a group or a user; excluding them keeps the resource's own attribute", async () => {
    const name = `Projected o2-${++n}`;
    const user = await create("Users", {
      schemas: [USER],
      userName: `p.o2-${n}@x.example`,
      displayName: name,
    });
    const group = await create("Groups", { schemas: [GROUP], displayName: name });

    const groupOnly = await get(`/Groups/${group.id}?attributes=${q(`${USER}:displayName`)}`);
    expect(groupOnly.status, JSON.stringify(groupOnly.body)).toBe(200);
    expect(groupOnly.body).toEqual({ schemas: [GROUP], id: group.id });
    const groupList = await get(
      `/Groups?filter=${q(`displayName eq "${name}"`)}&attributes=${q(`${USER}:displayName,${GROUP}:externalId`)}`,
    );
    expect(groupList.status, JSON.stringify(groupList.body)).toBe(200);
    expect(groupList.body.Resources).toEqual([{ schemas: [GROUP], id: group.id }]);
    const userOnly = await get(`/Users/${user.id}?attributes=${q(`${GROUP}:displayName,${USER}:userName`)}`);
    expect(userOnly.status, JSON.stringify(userOnly.body)).toBe(200);
    expect(userOnly.body).toEqual({ schemas: [USER], id: user.id, userName: user.userName });

    const groupKept = await get(`/Groups/${group.id}?excludedAttributes=${q(`${USER}:displayName`)}`);
    expect(groupKept.status, JSON.stringify(groupKept.body)).toBe(200);
    expect(groupKept.body.displayName).toBe(name);
    const userKept = await get(`/Users/${user.id}?excludedAttributes=${q(`${GROUP}:displayName`)}`);
    expect(userKept.status, JSON.stringify(userKept.body)).toBe(200);
    expect(userKept.body.displayName).toBe(name);
    const userDropped = await get(`/Users/${user.id}?excludedAttributes=${q(`${USER}:displayName`)}`);
    expect(userDropped.body.displayName).toBeUndefined();
  });
});
