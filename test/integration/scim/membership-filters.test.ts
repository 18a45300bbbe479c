/**
 * Filters on a group's members and a user's groups (RFC 7644 §3.4.2.2 on RFC 7643 §4.1.2 / §4.2).
 * Members live in their own Redis sets, not in the stored document, so the filter has to see them.
 * Entra ID asks `GET /Groups?filter=id eq "<group>" and members eq "<user>"&attributes=id` to learn
 * whether a user is still a member (e.g. before removing the last one); an empty answer for a
 * member reads as "not a member".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

let t: ScimTestApp;
const users: string[] = [];
let eng = "";
let ops = "";
beforeAll(async () => {
  t = await createScimTestApp("membership-filters");
  for (const userName of ["ada@example.com", "grace@example.com", "alan@example.com"]) {
    const res = await t.request
      .post("/scim/v2/entra/Users")
      .set(t.entra)
      .send({ schemas: [USER], userName });
    users.push(res.body.id);
  }
  const group = async (displayName: string, members: string[]) =>
    (
      await t.request
        .post("/scim/v2/entra/Groups")
        .set(t.entra)
        .send({ schemas: [GROUP], displayName, members: members.map((value) => ({ value })) })
    ).body.id as string;
  eng = await group("Engineering", [users[0]!, users[1]!]);
  ops = await group("Operations", [users[1]!]);
});
afterAll(async () => {
  await t.close();
});

const groupIds = async (filter: string, extra: Record<string, string> = {}) => {
  const res = await t.request
    .get("/scim/v2/entra/Groups")
    .query({ filter, ...extra })
    .set(t.entra);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.Resources as Array<{ id: string }>).map((r) => r.id).sort();
};

describe("GET /Groups filtered by member", () => {
  it('Entra\'s membership check: id eq "<group>" and members eq "<user>"', async () => {
    const res = await t.request
      .get("/scim/v2/entra/Groups")
      .query({ filter: `id eq "${eng}" and members eq "${users[0]}"`, attributes: "id" })
      .set(t.entra);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 1, Resources: [{ id: eng }] });
    expect(await groupIds(`id eq "${eng}" and members eq "${users[2]}"`)).toEqual([]);
    expect(await groupIds(`id eq "${ops}" and members eq "${users[0]}"`)).toEqual([]);
  });

  it("members eq, members.value eq and members[value eq] find every group of a user", async () => {
    const both = [eng, ops].sort();
    expect(await groupIds(`members eq "${users[1]}"`)).toEqual(both);
    expect(await groupIds(`members.value eq "${users[1]}"`)).toEqual(both);
    expect(await groupIds(`members[value eq "${users[1]}"]`)).toEqual(both);
    expect(await groupIds(`members[value eq "${users[0]}"]`, { excludedAttributes: "members" })).toEqual([
      eng,
    ]);
    expect(await groupIds(`members eq "${users[2]}"`)).toEqual([]);
    expect(await groupIds(`displayName eq "operations" and not (members pr)`)).toEqual([]);
  });

  it("sees a membership change at once", async () => {
    await t.request
      .patch(`/scim/v2/entra/Groups/${ops}`)
      .set(t.entra)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "Remove", path: "members", value: [{ value: users[1] }] }],
      });
    expect(await groupIds(`members eq "${users[1]}"`)).toEqual([eng]);
    expect(await groupIds(`id eq "${ops}" and members eq "${users[1]}"`)).toEqual([]);
  });
});

describe("GET /Users filtered by group", () => {
  it("groups eq and groups.value eq find the members of a group", async () => {
    const res = await t.request
      .get("/scim/v2/entra/Users")
      .query({ filter: `groups.value eq "${eng}"`, attributes: "userName" })
      .set(t.entra);
    expect(res.body.totalResults).toBe(2);
    expect((res.body.Resources as Array<{ userName: string }>).map((u) => u.userName).sort()).toEqual([
      "ada@example.com",
      "grace@example.com",
    ]);
    const one = await t.request
      .get("/scim/v2/entra/Users")
      .query({ filter: `userName eq "ada@example.com" and groups eq "${eng}"` })
      .set(t.entra);
    expect(one.body.totalResults).toBe(1);
  });
});

describe("a member filter alone reads the other side's set, and answers as a scan would", () => {
  // `(x or x)` is the same filter but no index narrows it: the directory scans every group or user.
  const scanned = (filter: string) => `(${filter}) or (${filter})`;
  const userIds = async (filter: string) => {
    const res = await t.request.get("/scim/v2/entra/Users").query({ filter }).set(t.entra);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.Resources as Array<{ id: string }>).map((r) => r.id);
  };

  it("pages in creation order, and counts every match", async () => {
    const groups: string[] = [];
    for (const name of ["Paged A", "Paged B", "Paged C"]) {
      const res = await t.request
        .post("/scim/v2/entra/Groups")
        .set(t.entra)
        .send({ schemas: [GROUP], displayName: name, members: [{ value: users[2] }] });
      groups.push(res.body.id);
    }
    const page = await t.request
      .get("/scim/v2/entra/Groups")
      .query({ filter: `members eq "${users[2]}"`, startIndex: 2, count: 1 })
      .set(t.entra);
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources.map((g: { id: string }) => g.id)).toEqual([groups[1]]);

    // A deleted group is no longer among its former members' groups.
    await t.request.delete(`/scim/v2/entra/Groups/${groups[0]}`).set(t.entra).expect(204);
    expect(await groupIds(`members eq "${users[2]}"`)).toEqual([groups[1]!, groups[2]!].sort());
    expect(await groupIds(scanned(`members eq "${users[2]}"`))).toEqual([groups[1]!, groups[2]!].sort());
  });

  it("agrees with a scan for every user and group, in every spelling", async () => {
    const allGroups = await groupIds("displayName pr");
    for (const user of users) {
      for (const filter of [
        `members eq "${user}"`,
        `members.value eq "${user}"`,
        `members[value eq "${user}"]`,
      ]) {
        expect(await groupIds(filter)).toEqual(await groupIds(scanned(filter)));
      }
    }
    for (const group of allGroups) {
      for (const filter of [
        `groups eq "${group}"`,
        `groups.value eq "${group}"`,
        `groups[value eq "${group}"]`,
      ]) {
        expect((await userIds(filter)).sort()).toEqual((await userIds(scanned(filter))).sort());
      }
    }
    // Not a bridge id as written (upper case) or not an id at all: a scan answers, with the same rule.
    const upper = users[0]!.toUpperCase();
    expect(await groupIds(`members eq "${upper}"`)).toEqual(await groupIds(scanned(`members eq "${upper}"`)));
    expect(await groupIds('members eq "not-an-id"')).toEqual([]);
  });

  it("a deleted user is nobody's member", async () => {
    const res = await t.request
      .post("/scim/v2/entra/Users")
      .set(t.entra)
      .send({ schemas: [USER], userName: "leaver@example.com" });
    const leaver = res.body.id as string;
    await t.request
      .patch(`/scim/v2/entra/Groups/${eng}`)
      .set(t.entra)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "add", path: "members", value: [{ value: leaver }] }],
      })
      .expect((r) => expect([200, 204]).toContain(r.status));
    expect(await groupIds(`members eq "${leaver}"`)).toEqual([eng]);
    await t.request.delete(`/scim/v2/entra/Users/${leaver}`).set(t.entra).expect(204);
    expect(await groupIds(`members eq "${leaver}"`)).toEqual([]);
  });
});
