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
