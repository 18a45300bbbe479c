import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, applyThenFail, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

/**
 * Invariant 2 (no lost update) for embed-group writes "in doubt", the embed-tenant counterpart of
 * in-doubt-writes.test.ts: the platform applied a rename or a member change but its answer was
 * lost (ghost), and every retry of the call failed too (503), so the sync fails and waits for its
 * next attempt. Before that attempt the identity provider changes the group back. The record of
 * what was applied still holds the state before the lost write, so planning from it alone sees
 * nothing to do, and the platform keeps the intermediate name or member.
 *
 * Each scenario failed before src/sync/sync-embed-group.ts marked embed groups `inDoubt` before
 * their writes (the next sync reads the platform first).
 */
describe("an embed-group write whose answer was lost, then a change back at the source", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-in-doubt-embed", {
      sources: { portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function waitForRetrying(id: string): Promise<void> {
    await waitFor(
      async () => (await h.admin().get(`/sources/portal/groups/${id}`)).body.state === "retrying",
      { what: "the embed group sync to fail and wait for a retry", timeoutMs: 15_000 },
    );
  }

  const ghostFired = (operation: string) =>
    h.emulator.requests().some((r) => r.fault === "ghost" && r.operation === operation);

  /** The tenant's embed groups named `names` (one scenario's), as [name, sorted member externalIds]. */
  const embedGroups = (...names: string[]) =>
    (h.emulator.state().embedTenants.find((t) => t.name === "acme")?.groups ?? [])
      .filter((g) => names.includes(g.name))
      .map((g) => [g.name, [...g.members].sort()]);

  async function expectSettled(): Promise<void> {
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }

  it("an embed group renamed and renamed back while the rename's answer was lost ends with the last name", async () => {
    const scim = h.scim("portal");
    const ann = await scim.createUser("ann@acme.example", { externalId: "ext-ann" });
    const group = await scim.createGroup("Viewers", [ann.id]);
    await h.waitForIdle();
    expect(embedGroups("Viewers", "Viewers Temp")).toEqual([["Viewers", ["ext-ann"]]]);

    applyThenFail(h.emulator, "updateEmbedGroup");
    await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Viewers Temp" }]);
    await waitForRetrying(group.id);
    expect(ghostFired("updateEmbedGroup")).toBe(true);
    expect(embedGroups("Viewers", "Viewers Temp")).toEqual([["Viewers Temp", ["ext-ann"]]]);

    await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Viewers" }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(embedGroups("Viewers", "Viewers Temp")).toEqual([["Viewers", ["ext-ann"]]]);
    await expectSettled();

    await scim.deleteGroup(group.id);
    await h.waitForIdle();
    expect(embedGroups("Viewers", "Viewers Temp")).toEqual([]);
  });

  it("a member added and removed again while the add's answer was lost is not left in the embed group", async () => {
    const scim = h.scim("portal");
    const dan = await scim.createUser("dan@acme.example", { externalId: "ext-dan" });
    const eve = await scim.createUser("eve@acme.example", { externalId: "ext-eve" });
    const group = await scim.createGroup("Finance", [dan.id]);
    await h.waitForIdle();
    expect(embedGroups("Finance")).toEqual([["Finance", ["ext-dan"]]]);

    applyThenFail(h.emulator, "addEmbedGroupMembers");
    await scim.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: eve.id }] }]);
    await waitForRetrying(group.id);
    expect(ghostFired("addEmbedGroupMembers")).toBe(true);
    expect(embedGroups("Finance")).toEqual([["Finance", ["ext-dan", "ext-eve"]]]);

    await scim.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${eve.id}"]` }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(embedGroups("Finance")).toEqual([["Finance", ["ext-dan"]]]);
    await expectSettled();

    await scim.deleteGroup(group.id);
    await h.waitForIdle();
    expect(embedGroups("Finance")).toEqual([]);
  });

  it("a member removed and added back while the removal's answer was lost is in the embed group", async () => {
    const scim = h.scim("portal");
    const fay = await scim.createUser("fay@acme.example", { externalId: "ext-fay" });
    const gus = await scim.createUser("gus@acme.example", { externalId: "ext-gus" });
    const group = await scim.createGroup("Sales", [fay.id, gus.id]);
    await h.waitForIdle();
    expect(embedGroups("Sales")).toEqual([["Sales", ["ext-fay", "ext-gus"]]]);

    applyThenFail(h.emulator, "removeEmbedGroupMembers");
    await scim.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${gus.id}"]` }]);
    await waitForRetrying(group.id);
    expect(ghostFired("removeEmbedGroupMembers")).toBe(true);
    expect(embedGroups("Sales")).toEqual([["Sales", ["ext-fay"]]]);

    await scim.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: gus.id }] }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(embedGroups("Sales")).toEqual([["Sales", ["ext-fay", "ext-gus"]]]);
    await expectSettled();
  });
});
