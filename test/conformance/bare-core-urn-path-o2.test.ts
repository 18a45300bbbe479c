/**
 * A PATCH whose `path` is a bare core schema URN (`"path": "urn:ietf:params:scim:schemas:core:2.0:User"`),
 * follow-up (round o2) of probe-o. RFC 7644 §3.5.2's PATH is `attrPath / valuePath [subAttr]`,
 * and an attrPath ends in an attribute name (`[URI ":"] ATTRNAME`): a schema URN alone names no
 * attribute. Neither Okta nor Entra ID documents sending one (they send no `path` with the object
 * of attributes, which stays supported, also under the core URN key). Read as it was, the URN split
 * at its last colon into an attribute "User" of a schema "urn:...:core:2.0" and the answer was a
 * 400 invalidValue naming that wrong URN. It is 400 invalidPath naming the path as sent, nothing
 * stored; a whole extension's URN as a path (an object of its attributes) is not affected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;

beforeAll(async () => {
  t = await createScimTestApp("conformance-bare-core-urn-path-o2");
});
afterAll(async () => {
  await t.close();
});

type Resource = { id: string; meta: { version: string } } & Record<string, unknown>;

const ops = (...operations: unknown[]) => ({ schemas: [PATCH], Operations: operations });

async function create(kind: "Users" | "Groups", body: Record<string, unknown>): Promise<Resource> {
  const res = await t.send("post", `${base}/${kind}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}

async function expectInvalidPath(url: string, operation: { path: string } & Record<string, unknown>) {
  const res = await t.send("patch", url, ops(operation));
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.scimType, JSON.stringify(res.body)).toBe("invalidPath");
  expect(String(res.body.detail)).toContain(`"${operation.path}"`);
}

describe("a PATCH path that is a bare core schema URN", () => {
  it("is 400 invalidPath on a user, naming the path as sent; nothing is stored", async () => {
    const user = await create("Users", {
      schemas: [USER],
      userName: `bare.o2-${++n}@x.example`,
      displayName: "Bare",
    });
    const url = `${base}/Users/${user.id}`;
    for (const operation of [
      { op: "replace", path: USER, value: { displayName: "Renamed" } },
      { op: "add", path: USER.toUpperCase(), value: { title: "Lead" } },
      { op: "remove", path: USER },
      { op: "replace", path: GROUP, value: { displayName: "Renamed" } },
      { op: "replace", path: `${USER}[type eq "work"]`, value: { displayName: "Renamed" } },
    ]) {
      await expectInvalidPath(url, operation);
    }
    const stored = await t.request.get(url).set(t.okta);
    expect(stored.body.displayName).toBe("Bare");
    expect(stored.body.title).toBeUndefined();
    expect(stored.body.meta.version).toBe(user.meta.version);
  });

  it("is 400 invalidPath on a group, naming the path as sent; the group keeps its name", async () => {
    const group = await create("Groups", { schemas: [GROUP], displayName: `Bare Group o2-${++n}` });
    const url = `${base}/Groups/${group.id}`;
    for (const operation of [
      { op: "replace", path: GROUP, value: { displayName: "Renamed" } },
      { op: "replace", path: USER, value: { displayName: "Renamed" } },
    ]) {
      await expectInvalidPath(url, operation);
    }
    const stored = await t.request.get(url).set(t.okta);
    expect(stored.body.displayName).toBe(group.displayName);
    expect(stored.body.meta.version).toBe(group.meta.version);
  });
});
