/**
 * Every HttpPlatformClient method against the strict platform emulator: the emulator records a
 * contract violation for any wrong path, method, parameter or body, and this test fails on one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { OPERATION_NAMES } from "../../../src/platform/emulator/contract-operations.js";
import {
  createPlatformEmulator,
  type PlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

const TOKEN = "contract-token";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
let emulator: PlatformEmulator;
let client: HttpPlatformClient;

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

beforeAll(async () => {
  emulator = createPlatformEmulator({ token: TOKEN, seed: 7 });
  const url = await emulator.start({ port: 0 });
  client = new HttpPlatformClient({
    baseUrl: url,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 5000,
    maxRetries: 2,
    backoff: { baseMs: 10, capMs: 50 },
    budget: new NoopRequestBudget(),
  });
});

afterAll(async () => {
  client?.close();
  await emulator?.close();
});

describe("HttpPlatformClient against the platform emulator", () => {
  it("calls every operation of the contract without a single violation", async () => {
    // SCIM users
    const names = ["ada", "bob", 'c"q\\uote', "dan", "eve"];
    const users = [];
    for (const userName of names) {
      users.push(await client.createUser({ schemas: [USER_SCHEMA], userName, active: true }));
    }
    const [ada, bob, quoted] = users;
    expect(await client.getUser(ada!.id)).toMatchObject({ id: ada!.id, userName: "ada" });
    expect((await client.findUserByUserName("ADA"))?.id).toBe(ada!.id);
    expect((await client.findUserByUserName('c"q\\uote'))?.id).toBe(quoted!.id);
    expect(await client.findUserByUserName("nobody")).toBeNull();
    const listed = await collect(client.listUsers({ pageSize: 2 }));
    expect(listed.map((u) => u.userName).sort()).toEqual([...names].sort());
    expect(await collect(client.listUsers({ filter: 'userName eq "bob"' }))).toHaveLength(1);
    const replaced = await client.replaceUser(bob!.id, {
      schemas: [USER_SCHEMA],
      userName: "bob",
      displayName: "Bob B",
      active: true,
    });
    expect(replaced.displayName).toBe("Bob B");
    await client.patchUser(bob!.id, [{ op: "replace", path: "active", value: false }]);
    expect((await client.getUser(bob!.id))?.active).toBe(false);

    // SCIM groups
    const group = await client.createGroup({
      schemas: [GROUP_SCHEMA],
      displayName: "Engineering",
      members: [{ value: ada!.id }],
    });
    expect(await client.getGroup(group.id)).toMatchObject({ displayName: "Engineering" });
    expect((await client.findGroupByDisplayName("engineering"))?.id).toBe(group.id);
    await client.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: bob!.id }] }]);
    await client.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${ada!.id}"]` }]);
    const afterPatch = await client.getGroup(group.id);
    const groupMembers = (afterPatch?.members ?? []) as Array<{ value: string }>;
    expect(groupMembers.map((m) => m.value)).toEqual([bob!.id]);
    await client.replaceGroup(group.id, { schemas: [GROUP_SCHEMA], displayName: "Engineering", members: [] });
    const groups = await collect(client.listGroups({ excludeMembers: true, pageSize: 1 }));
    expect(groups.map((g) => g.displayName)).toEqual(["Engineering"]);
    expect(groups[0]?.members).toBeUndefined();

    // Bulk user actions
    const bulk = await client.bulkUsers("DEACTIVATE", [ada!.id, "no-such-user"]);
    expect(bulk.succeeded).toEqual([ada!.id]);
    expect(bulk.failed.map((f) => f.userId)).toEqual(["no-such-user"]);
    await expect(client.bulkUsers("ACTIVATE", Array(101).fill(ada!.id))).rejects.toBeInstanceOf(
      PlatformError,
    );

    // User attributes and values
    const dept = await client.createUserAttribute({ name: "department", type: "string" });
    await client.createUserAttribute({ name: "level", type: "number", displayName: "Level" });
    expect((await client.listUserAttributes("string")).map((a) => a.name)).toEqual(["department"]);
    expect(await client.listUserAttributes()).toHaveLength(2);
    expect((await client.updateUserAttribute(dept.id, { displayName: "Department" })).displayName).toBe(
      "Department",
    );
    const value = await client.upsertUserAttributeValue({
      userId: ada!.id,
      attributeId: dept.id,
      value: "R&D",
    });
    expect(value).toMatchObject({ userId: ada!.id, name: "department", value: "R&D" });
    expect(await client.getUserAttributeValues(ada!.id)).toEqual([value]);
    expect(await client.getUserAttributeValues("no-such-user")).toBeNull();

    // Embed tenants: 150 members cross the 100-per-call limit and the 100-per-page limit
    const tenant = "acme";
    const embedGroup = await client.createEmbedGroup(tenant, { name: "Sales", description: "EMEA" });
    expect((await collect(client.listEmbedTenants())).map((t) => t.name)).toContain(tenant);
    expect(await client.getEmbedGroup(tenant, embedGroup.id)).toMatchObject({ name: "Sales" });
    expect(
      (await client.updateEmbedGroup(tenant, embedGroup.id, { description: "Europe" })).description,
    ).toBe("Europe");
    const members = Array.from({ length: 150 }, (_, i) => ({
      externalId: `ext-${i}`,
      email: `u${i}@example.com`,
    }));
    await client.addEmbedGroupMembers(tenant, embedGroup.id, members);
    expect(await collect(client.listEmbedGroupMembers(tenant, embedGroup.id))).toHaveLength(150);
    expect(await collect(client.listEmbedUsers(tenant))).toHaveLength(150);
    await client.removeEmbedGroupMembers(
      tenant,
      embedGroup.id,
      members.slice(0, 120).map((m) => m.externalId),
    );
    expect(await collect(client.listEmbedGroupMembers(tenant, embedGroup.id))).toHaveLength(30);
    expect((await collect(client.listEmbedGroups(tenant))).map((g) => g.id)).toEqual([embedGroup.id]);
    expect(await client.deleteEmbedGroup(tenant, embedGroup.id)).toBe(true);
    expect(await client.deleteEmbedGroup(tenant, embedGroup.id)).toBe(false);
    expect(await client.getEmbedGroup(tenant, embedGroup.id)).toBeNull();
    await client.deleteEmbedTenant(tenant);

    // Deletes last
    expect(await client.deleteGroup(group.id)).toBe(true);
    expect(await client.deleteGroup(group.id)).toBe(false);
    expect(await client.deleteUser(bob!.id)).toBe(true);
    expect(await client.deleteUser(bob!.id)).toBe(false);
    expect(await client.getUser(bob!.id)).toBeNull();

    expect(emulator.violations()).toEqual([]);
    const called = Object.keys(emulator.counters().byOperation).sort();
    expect(called).toEqual([...new Set(Object.values(OPERATION_NAMES))].sort());
  });

  it("adopts a ghost-written create: the retry gets 409 conflict and the user exists once", async () => {
    emulator.reset();
    emulator.addFault({ type: "ghost", match: { operation: "createUser" }, count: 1 });
    const err = await client.createUser({ schemas: [USER_SCHEMA], userName: "ghost@example.com" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).failure).toBe("conflict");
    expect((err as PlatformError).transient).toBe(false);
    expect(emulator.count("createUser")).toBeGreaterThanOrEqual(2);
    const found = await client.findUserByUserName("ghost@example.com");
    expect(found?.userName).toBe("ghost@example.com");
    const all = await collect(client.listUsers({ filter: 'userName eq "ghost@example.com"' }));
    expect(all.map((u) => u.id)).toEqual([found!.id]);
    expect(emulator.violations()).toEqual([]);
  });

  it("adopts ghost-written groups, embed groups and attribute definitions the same way", async () => {
    emulator.reset();
    emulator.addFault({ type: "ghost", match: { method: "POST" }, count: 3 });
    const conflicts = await Promise.all([
      client.createGroup({ schemas: [GROUP_SCHEMA], displayName: "Ghosts" }).catch((e: unknown) => e),
      client.createEmbedGroup("acme", { name: "Ghosts" }).catch((e: unknown) => e),
      client.createUserAttribute({ name: "ghostly", type: "boolean" }).catch((e: unknown) => e),
    ]);
    for (const err of conflicts) expect(err).toMatchObject({ failure: "conflict", transient: false });
    expect((await client.findGroupByDisplayName("Ghosts"))?.displayName).toBe("Ghosts");
    expect((await collect(client.listEmbedGroups("acme"))).map((g) => g.name)).toEqual(["Ghosts"]);
    expect((await client.listUserAttributes("boolean")).map((a) => a.name)).toEqual(["ghostly"]);
    expect(emulator.violations()).toEqual([]);
  });

  it("talks HTTPS to an emulator with a self-signed certificate it was told to trust", async () => {
    const tls = createPlatformEmulator({ token: TOKEN, tls: true });
    const url = await tls.start({ port: 0 });
    const make = (ca?: string) =>
      new HttpPlatformClient({
        baseUrl: url,
        token: TOKEN,
        timeoutMs: 5000,
        maxRetries: 0,
        budget: new NoopRequestBudget(),
        ...(ca === undefined ? {} : { ca }),
      });
    const trusting = make(tls.certificatePem);
    const strict = make();
    try {
      expect(url.startsWith("https://")).toBe(true);
      expect(await trusting.listUserAttributes()).toEqual([]);
      await expect(strict.listUserAttributes()).rejects.toMatchObject({ failure: "network" });
    } finally {
      trusting.close();
      strict.close();
      await tls.close();
    }
  });
});
