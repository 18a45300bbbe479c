/**
 * Probes (round n) of group PATCH paths that name a sub-attribute after a members value filter
 * (intake only, real Redis). RFC 7644 §3.5.2.2 lets a remove name `members[<filter>]` or a
 * sub-attribute of the matching members; a member is its `value` (the user's id: RFC 7643 §4.2),
 * so removing that value leaves no member, as removing `emails[...].value` leaves no email
 * (idp-probes-k). The bridge answered such a remove 204 and kept the member: the identity
 * provider believed the user gone from the group while the platform kept it there. Sub-attributes
 * the bridge does not keep (`display`, `$ref`) stay a no-op; a replace of one stays 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.n${++n}@example.com`;

beforeAll(async () => {
  t = await createScimTestApp("conformance-group-member-paths-n");
});
afterAll(async () => {
  await t.close();
});

const send = (method: "post" | "patch", path: string, body: unknown) =>
  t.send(method, `${base}${path}`, body);

async function userId(): Promise<string> {
  const res = await send("post", "/Users", { schemas: [USER], userName: unique("member") });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function groupWith(members: string[]): Promise<{ id: string; version: string }> {
  const res = await send("post", "/Groups", {
    schemas: [GROUP],
    displayName: unique("group"),
    members: members.map((value) => ({ value })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as string, version: res.body.meta.version as string };
}

async function membersOf(groupId: string): Promise<string[]> {
  const res = await t.request.get(`${base}/Groups/${groupId}`).set(t.okta);
  expect(res.status).toBe(200);
  return (res.body.members as Array<{ value: string }>).map((m) => m.value).sort();
}

const patch = (groupId: string, Operations: unknown[]) =>
  send("patch", `/Groups/${groupId}`, { schemas: [PATCH], Operations });

describe("remove of `members[<filter>].value`", () => {
  it('`members[value eq "a"].value` takes a out and keeps the others', async () => {
    const [a, b] = [await userId(), await userId()];
    const group = await groupWith([a, b]);
    const res = await patch(group.id, [{ op: "remove", path: `members[value eq "${a}"].value` }]);
    expect(res.status, res.text).toBe(204);
    expect(await membersOf(group.id)).toEqual([b]);
  });

  it("with the names in another case and `or` of two ids, both go", async () => {
    const [a, b, c] = [await userId(), await userId(), await userId()];
    const group = await groupWith([a, b, c]);
    const res = await patch(group.id, [
      { op: "Remove", path: `MEMBERS[VALUE eq "${a}" or value eq "${b}"].Value` },
    ]);
    expect(res.status, res.text).toBe(204);
    expect(await membersOf(group.id)).toEqual([c]);
  });

  it('a filter that reads the member list (`type eq "User"`, `value ne`) removes what it matches', async () => {
    const [a, b] = [await userId(), await userId()];
    const group = await groupWith([a, b]);
    expect((await patch(group.id, [{ op: "remove", path: `members[value ne "${a}"].value` }])).status).toBe(
      204,
    );
    expect(await membersOf(group.id)).toEqual([a]);
    expect((await patch(group.id, [{ op: "remove", path: 'members[type eq "User"].value' }])).status).toBe(
      204,
    );
    expect(await membersOf(group.id)).toEqual([]);
  });

  it("a filter matching no member changes nothing (RFC 7644 §3.5.2.2), the version stays", async () => {
    const a = await userId();
    const group = await groupWith([a]);
    const res = await patch(group.id, [
      { op: "remove", path: `members[value eq "${await userId()}"].value` },
    ]);
    expect(res.status, res.text).toBe(204);
    expect(await membersOf(group.id)).toEqual([a]);
    const after = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(after.body.meta.version).toBe(group.version);
  });
});

describe("sub-attributes the bridge does not keep", () => {
  it('remove of `members[value eq "a"].display` keeps a; replace of it is 400 invalidPath and changes nothing', async () => {
    const a = await userId();
    const group = await groupWith([a]);
    expect((await patch(group.id, [{ op: "remove", path: `members[value eq "${a}"].display` }])).status).toBe(
      204,
    );
    expect(await membersOf(group.id)).toEqual([a]);
    const res = await patch(group.id, [
      { op: "remove", path: `members[value eq "${a}"]` },
      { op: "replace", path: `members[value eq "${a}"].display`, value: "A" },
    ]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "400", scimType: "invalidPath" });
    expect(await membersOf(group.id)).toEqual([a]);
  });
});
