import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

/**
 * Invariant 2 (found by the chaos-convergence probe, seed 118 with CHAOS_RENAME_TO_OLD=0.5, once):
 * B is renamed onto the name A holds while A moves away from it (a rename, or a deletion with
 * onDelete: delete). B's PATCH meets the platform's 409 while A still holds the name; A's write
 * then lands before B's sync looks the holder up (findUserByUserName, after the 409). The lookup
 * finds nobody: the name is free now, and the next attempt would land. Instead the 409 stands as
 * a permanent `platform_conflict` dead letter (src/sync/sync-user.ts, waitIfRenameFrees: no holder
 * found is taken as "the conflict stands"), and B never gets its name.
 *
 * The window is made wide and deterministic with the emulator's slow faults: A's PATCH is held
 * 600 ms before it is applied, B's lookup 1,500 ms.
 */
describe("a rename whose 409 holder moves away before the sync looks it up", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("rename-holder-gone", { sources: { okta: { tokens: ["okta-token"] } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("converges: B under the name A left, no dead letter", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("gone-x@example.com", { displayName: "A" });
    const b = await scim.createUser("gone-y@example.com", { displayName: "B" });
    await h.waitForIdle();
    const aPid = h.platformUsers().get("gone-x@example.com")?.id;
    const bPid = h.platformUsers().get("gone-y@example.com")?.id;
    expect(aPid).toBeDefined();
    // A's rename PATCH is held 600 ms, then applied; B's look-up of the name's holder 1,500 ms.
    h.emulator.addFault({
      type: "slow",
      delayMs: 600,
      count: 1,
      match: { method: "PATCH", path: `/api/scim/v2/Users/${aPid}` },
    });
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "listUsers" } });
    expect(
      (await scim.patchUser(a.id, [{ op: "replace", path: "userName", value: "gone-z@example.com" }])).status,
    ).toBe(200);
    // B's PATCH reaches the platform while A's is still held: a 409.
    expect(
      (await scim.patchUser(b.id, [{ op: "replace", path: "userName", value: "gone-x@example.com" }])).status,
    ).toBe(200);
    await h.waitForIdle();

    // Was: a platform_conflict dead letter of B's patchUser (attempts 1), B still under its old name.
    const letters = (await h.admin().get("/dead-letters")).body.items ?? [];
    expect(letters).toEqual([]);
    const users = h.platformUsers();
    expect(users.get("gone-z@example.com")).toMatchObject({ id: aPid, displayName: "A" });
    expect(users.get("gone-x@example.com")).toMatchObject({ id: bPid, displayName: "B" });
    expect(users.get("gone-y@example.com")).toBeUndefined();
    expect((await h.admin().get(`/sources/okta/users/${b.id}`)).body).toMatchObject({ state: "synced" });
  });
});

describe("a rename onto the name of a user deleted at the source (onDelete: delete) whose DELETE lands before the look-up", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("rename-holder-deleted", {
      sources: { okta: { tokens: ["okta-token"], onDelete: "delete" } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("converges: B under the freed name, no dead letter", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("freed-x@example.com", { displayName: "A" });
    const b = await scim.createUser("freed-y@example.com", { displayName: "B" });
    await h.waitForIdle();
    const bPid = h.platformUsers().get("freed-y@example.com")?.id;
    // A's deprovisioning (the bulk DELETE) is held 600 ms, then applied; B's look-up 1,500 ms.
    h.emulator.addFault({ type: "slow", delayMs: 600, count: 1, match: { operation: "bulkUsers" } });
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "listUsers" } });
    expect((await scim.deleteUser(a.id)).status).toBe(204);
    // Past the lifecycle batch window (50 ms): A's bulk call is on its way, its user still holds the name.
    await new Promise((r) => setTimeout(r, 200));
    expect(h.platformUsers().get("freed-x@example.com")).toBeDefined();
    expect(
      (await scim.patchUser(b.id, [{ op: "replace", path: "userName", value: "freed-x@example.com" }]))
        .status,
    ).toBe(200);
    await h.waitForIdle();

    // Was: a platform_conflict dead letter of B's patchUser (attempts 1), B still under its old name.
    const letters = (await h.admin().get("/dead-letters")).body.items ?? [];
    expect(letters).toEqual([]);
    const users = h.platformUsers();
    expect(users.get("freed-x@example.com")).toMatchObject({ id: bPid, displayName: "B" });
    expect(users.get("freed-y@example.com")).toBeUndefined();
  });
});

/**
 * The same race for groups: a workspace group (its displayName unique on the platform) and an
 * embed group (its name unique in its tenant). The rename's 409 met while the holder still held
 * the name, the holder's rename landing before the look-up. Was: a `platform_conflict` letter.
 */
describe("a group rename whose 409 holder moves away before the sync looks it up", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("rename-group-holder-gone", {
      sources: {
        okta: { tokens: ["okta-token"] },
        acme: { tokens: ["acme-token"], target: { embedTenant: "holder-gone" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });
  const state = () =>
    h.emulator.state() as unknown as {
      groups: Array<{ id: string; displayName: string }>;
      embedTenants: Array<{ name: string; groups: Array<{ id: string; name: string }> }>;
    };

  it("workspace groups: B under the name A left, no dead letter", async () => {
    const scim = h.scim("okta");
    const a = await scim.createGroup("Holder X");
    const b = await scim.createGroup("Holder Y");
    await h.waitForIdle();
    const idOf = (name: string) => state().groups.find((g) => g.displayName === name)?.id;
    const aPid = idOf("Holder X");
    const bPid = idOf("Holder Y");
    expect(aPid).toBeDefined();
    h.emulator.addFault({
      type: "slow",
      delayMs: 600,
      count: 1,
      match: { method: "PATCH", path: `/api/scim/v2/Groups/${aPid}` },
    });
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "listGroups" } });
    await scim.patchGroup(a.id, [{ op: "replace", path: "displayName", value: "Holder Z" }]);
    await scim.patchGroup(b.id, [{ op: "replace", path: "displayName", value: "Holder X" }]);
    await h.waitForIdle();

    expect((await h.admin().get("/dead-letters")).body.items ?? []).toEqual([]);
    expect(idOf("Holder Z")).toBe(aPid);
    expect(idOf("Holder X")).toBe(bPid);
    expect(idOf("Holder Y")).toBeUndefined();
  });

  it("embed groups: B under the name A left, no dead letter", async () => {
    const scim = h.scim("acme");
    const a = await scim.createGroup("Embed X");
    const b = await scim.createGroup("Embed Y");
    await h.waitForIdle();
    const idOf = (name: string) =>
      state()
        .embedTenants.find((t) => t.name === "holder-gone")
        ?.groups.find((g) => g.name === name)?.id;
    const aPid = idOf("Embed X");
    const bPid = idOf("Embed Y");
    expect(aPid).toBeDefined();
    h.emulator.addFault({
      type: "slow",
      delayMs: 600,
      count: 1,
      match: { method: "PATCH", path: `/api/v1/embed-tenants/holder-gone/groups/${aPid}` },
    });
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "listEmbedGroups" } });
    await scim.patchGroup(a.id, [{ op: "replace", path: "displayName", value: "Embed Z" }]);
    await scim.patchGroup(b.id, [{ op: "replace", path: "displayName", value: "Embed X" }]);
    await h.waitForIdle();

    expect((await h.admin().get("/dead-letters")).body.items ?? []).toEqual([]);
    expect(idOf("Embed Z")).toBe(aPid);
    expect(idOf("Embed X")).toBe(bPid);
    expect(idOf("Embed Y")).toBeUndefined();
  });
});

describe("a rename the platform refuses although no user holds the name", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("rename-nobody-holds", { sources: { okta: { tokens: ["okta-token"] } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is sent again once, then the refusal stands: one platform_conflict letter, no loop", async () => {
    const scim = h.scim("okta");
    const b = await scim.createUser("reserved-y@example.com", { displayName: "B" });
    await h.waitForIdle();
    const bPid = h.platformUsers().get("reserved-y@example.com")?.id;
    // The platform keeps the name reserved out of sight: every PATCH of B is refused 409.
    h.emulator.addFault({
      type: "error",
      status: 409,
      match: { method: "PATCH", path: `/api/scim/v2/Users/${bPid}` },
    });
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    await scim.patchUser(b.id, [
      { op: "replace", path: "userName", value: "reserved-x@example.com" },
      { op: "replace", path: "displayName", value: "B renamed" },
    ]);
    await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 1, {
      what: "the conflict's dead letter",
    });
    const letters = (await h.admin().get("/dead-letters")).body.items;
    expect(letters).toEqual([expect.objectContaining({ code: "platform_conflict" })]);
    // The rename twice (the second after the look-up found nobody), then the profile without the
    // userName, which the fault refuses too: no loop.
    const patches = h.emulator
      .requests()
      .filter((r) => r.seq > since && r.method === "PATCH" && r.path === `/api/scim/v2/Users/${bPid}`);
    expect(patches).toHaveLength(3);
    h.emulator.clearFaults();
  });
});
