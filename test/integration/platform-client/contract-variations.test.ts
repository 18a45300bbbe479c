/**
 * HttpPlatformClient against answers the contract allows but the emulator does not give by default
 * (what an independent implementation of platform-api.yaml may do): pages smaller than asked and
 * without totalResults, another order, optional fields left out, unknown fields added, the other
 * PATCH answers, and empty lists of a missing tenant. Every answer is also checked against the
 * contract's response schemas (checkResponses), so a variation can never be one the contract forbids.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { ALL_VARIATIONS } from "../../../src/platform/emulator/answer-variations.js";
import {
  createPlatformEmulator,
  type PlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

const TOKEN = "contract-variations-token";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
let emulator: PlatformEmulator;
let client: HttpPlatformClient;

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

beforeAll(async () => {
  emulator = createPlatformEmulator({ token: TOKEN, seed: 11, checkResponses: true });
  const url = await emulator.start({ port: 0 });
  client = new HttpPlatformClient({
    baseUrl: url,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 5000,
    maxRetries: 1,
    backoff: { baseMs: 10, capMs: 50 },
    budget: new NoopRequestBudget(),
  });
});

afterEach(() => {
  expect(emulator.violations()).toEqual([]);
  emulator.reset();
  emulator.setVariations({});
});

afterAll(async () => {
  client?.close();
  await emulator?.close();
});

describe("the client against every answer variation the contract allows", () => {
  it("lists every user once from pages smaller than asked, newest first, without totalResults", async () => {
    const names = Array.from({ length: 23 }, (_, i) => `user${String(i).padStart(2, "0")}@example.com`);
    for (const userName of names) await client.createUser({ schemas: [USER_SCHEMA], userName });
    emulator.setVariations(ALL_VARIATIONS);

    const listed = await collect(client.listUsers({ pageSize: 100 }));
    expect(listed.map((u) => u.userName).sort()).toEqual(names);
    // Every page was short (7 of the 100 asked) and said nothing of the total: the walk went on
    // until an empty page.
    expect(emulator.count("listUsers")).toBe(Math.ceil(23 / 7) + 1);
    // Optional fields left out: no active means active, as the contract's ScimUser allows.
    expect(listed.every((u) => u.active === undefined)).toBe(true);
  });

  it("lists every user once when only the page limit differs (totalResults given)", async () => {
    for (let i = 0; i < 15; i++) await client.createUser({ schemas: [USER_SCHEMA], userName: `p${i}` });
    emulator.setVariations({ maxPageSize: 4 });
    const listed = await collect(client.listUsers());
    expect(new Set(listed.map((u) => u.id)).size).toBe(15);
    expect(listed).toHaveLength(15);
  });

  it("reads users with unknown fields and extensions, and finds them by userName in any case", async () => {
    const created = await client.createUser({
      schemas: [USER_SCHEMA, ENTERPRISE],
      userName: "Ada@Example.com",
      emails: [{ value: "ada@example.com", type: "work", primary: true }, { value: "a@home.example" }],
      [ENTERPRISE]: { department: "R&D" },
    });
    emulator.setVariations(ALL_VARIATIONS);
    const got = await client.getUser(created.id);
    expect(got).toMatchObject({ id: created.id, userName: "Ada@Example.com", groups: [] });
    expect(got?.["x-platform-note"]).toBe("ignore me");
    const found = await client.findUserByUserName("ada@example.COM");
    expect(found?.id).toBe(created.id);
    expect(await client.findUserByUserName("nobody@example.com")).toBeNull();
  });

  it("takes a PATCH answered 204 (users) and 200 with a body (groups)", async () => {
    const a = await client.createUser({ schemas: [USER_SCHEMA], userName: "a" });
    const b = await client.createUser({ schemas: [USER_SCHEMA], userName: "b" });
    const group = await client.createGroup({ schemas: [GROUP_SCHEMA], displayName: "G", members: [] });
    emulator.setVariations(ALL_VARIATIONS);

    await client.patchUser(a.id, [{ op: "replace", path: "displayName", value: "A" }]);
    await client.patchGroup(group.id, [
      { op: "add", path: "members", value: [{ value: a.id }, { value: b.id }] },
    ]);
    expect((await client.getUser(a.id))?.["displayName"]).toBe("A");
    const got = await client.getGroup(group.id);
    expect(((got?.["members"] ?? []) as Array<{ value: string }>).map((m) => m.value).sort()).toEqual(
      [a.id, b.id].sort(),
    );
    const statuses = emulator
      .requests()
      .filter((r) => r.operation === "patchUser" || r.operation === "patchGroup")
      .map((r) => `${r.operation} ${r.status}`);
    expect(statuses).toEqual(["patchUser 204", "patchGroup 200"]);
  });

  it("refuses the removal of a member that is not in the group with 400 noTarget (a permanent bad request)", async () => {
    const a = await client.createUser({ schemas: [USER_SCHEMA], userName: "a" });
    const group = await client.createGroup({ schemas: [GROUP_SCHEMA], displayName: "G" });
    emulator.setVariations({ noTargetOnMissingMember: true });
    const err = await client
      .patchGroup(group.id, [{ op: "remove", path: `members[value eq "${a.id}"]` }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ failure: "bad_request", transient: false, httpStatus: 400 });
    expect((err as Error).message).toContain("noTarget");
  });

  it("lists groups without empty member lists and with unknown member fields", async () => {
    const a = await client.createUser({ schemas: [USER_SCHEMA], userName: "a" });
    for (let i = 0; i < 9; i++) {
      await client.createGroup({
        schemas: [GROUP_SCHEMA],
        displayName: `G${i}`,
        members: i % 2 === 0 ? [{ value: a.id }] : [],
      });
    }
    emulator.setVariations(ALL_VARIATIONS);
    const groups = await collect(client.listGroups());
    expect(groups.map((g) => g.displayName).sort()).toEqual(Array.from({ length: 9 }, (_, i) => `G${i}`));
    expect(groups.filter((g) => g["members"] === undefined)).toHaveLength(4);
    const found = await client.findGroupByDisplayName("g3");
    expect(found?.displayName).toBe("G3");
  });

  it("reads bulk results with unknown fields and per-user failures", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await client.createUser({ schemas: [USER_SCHEMA], userName: `b${i}` })).id);
    emulator.setVariations(ALL_VARIATIONS);
    emulator.drift({ action: "failBulkFor", userId: ids[1]!, code: "INTERNAL" });
    emulator.drift({ action: "failBulkFor", userId: ids[2]!, code: "FORBIDDEN" });
    const result = await client.bulkUsers("DEACTIVATE", [...ids, "no-such-user"]);
    expect(result.succeeded.sort()).toEqual([ids[0], ids[3], ids[4]].sort());
    expect(result.failed.map((f) => `${f.userId}:${f.code}`).sort()).toEqual(
      [`${ids[1]}:INTERNAL`, `${ids[2]}:FORBIDDEN`, "no-such-user:NOT_FOUND"].sort(),
    );
  });

  it("walks cursor lists of short pages in another order, without an endCursor on the last page", async () => {
    const groupIds: string[] = [];
    for (let i = 0; i < 10; i++) groupIds.push((await client.createEmbedGroup("acme", { name: `E${i}` })).id);
    const users = Array.from({ length: 16 }, (_, i) => ({ externalId: `x${i}`, email: `x${i}@example.com` }));
    await client.addEmbedGroupMembers("acme", groupIds[0]!, users);
    await client.createEmbedGroup("globex", { name: "Only" });
    emulator.setVariations(ALL_VARIATIONS);

    const groups = await collect(client.listEmbedGroups("acme"));
    expect(groups.map((g) => g.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `E${i}`).sort());
    expect(groups.every((g) => g.memberCount === undefined)).toBe(true);
    const members = await collect(client.listEmbedGroupMembers("acme", groupIds[0]!));
    expect(members.map((m) => m.externalId).sort()).toEqual(users.map((u) => u.externalId).sort());
    const embedUsers = await collect(client.listEmbedUsers("acme"));
    expect(embedUsers).toHaveLength(16);
    const tenants = await collect(client.listEmbedTenants());
    expect(tenants.map((t) => t.name).sort()).toEqual(["acme", "globex"]);
    const one = await client.getEmbedGroup("acme", groupIds[3]!);
    expect(one).toMatchObject({ id: groupIds[3], name: "E3" });
  });

  it("lists a missing tenant's groups as empty or as 404, whichever the platform answers", async () => {
    emulator.setVariations({ emptyListForMissingTenant: true });
    expect(await collect(client.listEmbedGroups("nowhere"))).toEqual([]);
    expect(await collect(client.listEmbedUsers("nowhere"))).toEqual([]);
    emulator.setVariations({});
    const err = await collect(client.listEmbedGroups("nowhere")).catch((e: unknown) => e);
    expect(err).toMatchObject({ failure: "not_found" });
  });

  it("reads attribute definitions and values with unknown fields", async () => {
    const user = await client.createUser({ schemas: [USER_SCHEMA], userName: "attr" });
    const def = await client.createUserAttribute({ name: "team", type: "string_array" });
    emulator.setVariations(ALL_VARIATIONS);
    await client.upsertUserAttributeValue({ userId: user.id, attributeId: def.id, value: ["a", "b"] });
    expect(await client.listUserAttributes("string_array")).toEqual([
      expect.objectContaining({ id: def.id, name: "team" }),
    ]);
    expect(await client.getUserAttributeValues(user.id)).toEqual([
      expect.objectContaining({ attributeId: def.id, value: ["a", "b"] }),
    ]);
  });
});

describe("the emulator's answer variations", () => {
  it("refuses a variation it cannot apply", () => {
    expect(() => emulator.setVariations({ maxPageSize: 0 })).toThrow(/maxPageSize/);
    expect(() => emulator.setVariations({ order: "random" as "reverse" })).toThrow(/order/);
  });

  it("refuses a /api/v1 body sent as application/scim+json (the contract says application/json)", async () => {
    const res = await fetch(`${emulator.baseUrl}/api/v1/users/bulk`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" },
      body: JSON.stringify({ action: "DEACTIVATE", userIds: ["x"] }),
    });
    expect(res.status).toBe(400);
    expect(emulator.violations()).toHaveLength(1);
    emulator.reset();
  });
});
