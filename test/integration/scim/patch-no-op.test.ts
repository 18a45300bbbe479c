/**
 * A write that changes nothing (RFC 7644 §3.5.2 leaves a PATCH's effect to the end state): the
 * stored resource, its version (ETag), lastModified, generation and dirty marker stay as they
 * were, and no sync is queued. Identity providers send these all the time: Entra and Okta re-add
 * members already in a group, remove members that are not in it, and replace attributes with the
 * value they already have.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dirtyKey } from "../../../src/directory/directory-keys.js";
import { refKey } from "../../../src/scim/scim-types.js";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
const ids: string[] = [];
/** One Host for every request: answers are compared whole, meta.location and $ref included. */
const auth = () => ({ ...t.okta, Host: "scim.example.test" });

beforeAll(async () => {
  t = await createScimTestApp("patch-no-op");
  for (let i = 0; i < 3; i++) {
    const res = await t.request
      .post(`${base}/Users`)
      .set(auth())
      .send({ schemas: [USER], userName: `noop${i}@example.com`, displayName: `No-op ${i}` });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
});
afterAll(async () => {
  await t.close();
});

interface Meta {
  version: string;
  lastModified: string;
}

async function createGroup(displayName: string, memberIds: string[]) {
  const res = await t.request
    .post(`${base}/Groups`)
    .set(auth())
    .send({ schemas: [GROUP], displayName, members: memberIds.map((value) => ({ value })) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; meta: Meta };
}

const patch = (kind: "Users" | "Groups", id: string, Operations: unknown[], headers = {}) =>
  t.request
    .patch(`${base}/${kind}/${id}`)
    .set(auth())
    .set(headers)
    .send({ schemas: [PATCH], Operations });

type Body = { meta: Meta; members?: Array<{ value: string }>; [key: string]: unknown };

async function read(kind: "Users" | "Groups", id: string) {
  const res = await t.request.get(`${base}/${kind}/${id}`).set(auth());
  expect(res.status).toBe(200);
  return res.body as Body;
}

const memberIds = (body: { members?: Array<{ value: string }> }) =>
  (body.members ?? []).map((m) => m.value).sort();

const refOf = (kind: "Users" | "Groups", id: string) =>
  ({ source: "okta", kind: kind === "Users" ? "user" : "group", id }) as const;

/** Whether the entity's dirty marker is set (a sync is owed). */
async function isDirty(kind: "Users" | "Groups", id: string): Promise<boolean> {
  return (await t.redis.zscore(dirtyKey(t.prefix), refKey(refOf(kind, id)))) !== null;
}

/**
 * Marks the entity synced (as a worker does) and returns what a no-op must leave alone: the
 * rendered resource, and how many syncs were queued so far.
 */
async function settled(kind: "Users" | "Groups", id: string) {
  const body = await read(kind, id);
  const generation = Number(/\d+/.exec(body.meta.version)?.[0]);
  await t.directory.markClean(refOf(kind, id), generation);
  expect(await isDirty(kind, id)).toBe(false);
  return { body, notified: t.notified.length };
}

async function expectUntouched(
  kind: "Users" | "Groups",
  id: string,
  before: Awaited<ReturnType<typeof settled>>,
) {
  expect(await read(kind, id)).toEqual(before.body);
  expect(t.notified.length).toBe(before.notified);
  expect(await isDirty(kind, id)).toBe(false);
}

describe("a group PATCH that changes nothing", () => {
  it("re-adding a member already in the group: 204 with the same ETag, nothing stored or queued", async () => {
    const g = await createGroup("Noop-readd", [ids[0]!, ids[1]!]);
    const before = await settled("Groups", g.id);
    const res = await patch("Groups", g.id, [{ op: "add", path: "members", value: [{ value: ids[0] }] }]);
    expect(res.status).toBe(204);
    expect(res.headers.etag).toBe(before.body.meta.version);
    await expectUntouched("Groups", g.id, before);
  });

  it("removing a member that is not in the group (Entra's value list, and a value filter)", async () => {
    const g = await createGroup("Noop-remove", [ids[0]!]);
    const before = await settled("Groups", g.id);
    const entra = await patch("Groups", g.id, [
      { op: "Remove", path: "members", value: [{ value: ids[2] }] },
    ]);
    expect(entra.status).toBe(204);
    expect(entra.headers.etag).toBe(before.body.meta.version);
    const filtered = await patch("Groups", g.id, [{ op: "remove", path: `members[value eq "${ids[1]}"]` }]);
    expect(filtered.status).toBe(204);
    await expectUntouched("Groups", g.id, before);
  });

  it("replacing the members with the ones it has, and the displayName with its own", async () => {
    const g = await createGroup("Noop-replace", [ids[0]!, ids[1]!]);
    const before = await settled("Groups", g.id);
    const res = await patch("Groups", g.id, [
      { op: "replace", path: "displayName", value: "Noop-replace" },
      { op: "replace", path: "members", value: [{ value: ids[1] }, { value: ids[0] }] },
    ]);
    expect(res.status).toBe(204);
    expect(res.headers.etag).toBe(before.body.meta.version);
    await expectUntouched("Groups", g.id, before);
  });

  it("an empty Operations list; asked for attributes back, it answers 200 with the unchanged group", async () => {
    const g = await createGroup("Noop-empty", [ids[0]!]);
    const before = await settled("Groups", g.id);
    const res = await t.request
      .patch(`${base}/Groups/${g.id}?attributes=displayName,members,meta`)
      .set(auth())
      .send({ schemas: [PATCH], Operations: [] });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(before.body.meta.version);
    expect(res.body.meta).toEqual(before.body.meta);
    expect(memberIds(res.body)).toEqual([ids[0]]);
    await expectUntouched("Groups", g.id, before);
  });

  it("ops that cancel out (add then remove a non-member) change nothing", async () => {
    const g = await createGroup("Noop-cancel", [ids[0]!]);
    const before = await settled("Groups", g.id);
    const res = await patch("Groups", g.id, [
      { op: "add", path: "members", value: [{ value: ids[2] }] },
      { op: "remove", path: `members[value eq "${ids[2]}"]` },
    ]);
    expect(res.status).toBe(204);
    expect(res.headers.etag).toBe(before.body.meta.version);
    await expectUntouched("Groups", g.id, before);
  });

  it("add then remove of a member that was in the group is a change: it leaves, a new version, one sync", async () => {
    const g = await createGroup("Noop-not", [ids[0]!, ids[1]!]);
    const before = await settled("Groups", g.id);
    const res = await patch("Groups", g.id, [
      { op: "add", path: "members", value: [{ value: ids[1] }] },
      { op: "remove", path: `members[value eq "${ids[1]}"]` },
    ]);
    expect(res.status).toBe(204);
    expect(res.headers.etag).not.toBe(before.body.meta.version);
    const after = await read("Groups", g.id);
    expect(memberIds(after)).toEqual([ids[0]]);
    expect(t.notified.length).toBe(before.notified + 1);
    expect(await isDirty("Groups", g.id)).toBe(true);
  });

  it("a PUT with the group's own displayName and members changes nothing either", async () => {
    const g = await createGroup("Noop-put", [ids[0]!, ids[1]!]);
    const before = await settled("Groups", g.id);
    const res = await t.request
      .put(`${base}/Groups/${g.id}`)
      .set(auth())
      .send({ schemas: [GROUP], displayName: "Noop-put", members: [{ value: ids[1] }, { value: ids[0] }] });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(before.body.meta.version);
    expect(res.body.meta).toEqual(before.body.meta);
    expect(memberIds(res.body)).toEqual([ids[0], ids[1]].sort());
    await expectUntouched("Groups", g.id, before);
  });

  it("still checks If-Match (412 for a stale version) and answers 404 for an unknown id", async () => {
    const g = await createGroup("Noop-ifmatch", [ids[0]!]);
    const before = await settled("Groups", g.id);
    const readd = [{ op: "add", path: "members", value: [{ value: ids[0] }] }];
    const stale = await patch("Groups", g.id, readd, { "If-Match": 'W/"999"' });
    expect(stale.status).toBe(412);
    const current = await patch("Groups", g.id, readd, { "If-Match": before.body.meta.version });
    expect(current.status).toBe(204);
    await expectUntouched("Groups", g.id, before);
    const unknown = await patch("Groups", "00000000-0000-4000-8000-000000000000", readd);
    expect(unknown.status).toBe(404);
    expect(unknown.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    const empty = await patch("Groups", "00000000-0000-4000-8000-000000000000", []);
    expect(empty.status).toBe(404);
  });
});

describe("a user PATCH that changes nothing", () => {
  it("replacing an attribute with its value, and an empty op list: 200, same resource and ETag", async () => {
    const id = ids[2]!;
    const before = await settled("Users", id);
    const same = await patch("Users", id, [{ op: "replace", path: "displayName", value: "No-op 2" }]);
    expect(same.status).toBe(200);
    expect(same.headers.etag).toBe(before.body.meta.version);
    expect(same.body).toEqual(before.body);
    const empty = await patch("Users", id, []);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(before.body);
    const stale = await patch("Users", id, [], { "If-Match": 'W/"999"' });
    expect(stale.status).toBe(412);
    await expectUntouched("Users", id, before);
    const unknown = await patch("Users", "00000000-0000-4000-8000-000000000000", []);
    expect(unknown.status).toBe(404);
  });
});
