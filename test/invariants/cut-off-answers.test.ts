import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultRule } from "../../src/platform/emulator/fault-injector.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";

const memberIds = (members: unknown[] | undefined) =>
  (members ?? []).map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort();

/**
 * Invariant 2 (convergence, no lost update) when the platform applies a write and its 2xx answer
 * is cut off on the way (the emulator's cutOff fault): with the full Content-Length the client
 * sees a broken connection; without one it reads a complete-looking 2xx whose JSON stops in the
 * middle (57c429d retries that like a lost answer). Either way the client repeats a write that
 * already landed, so every kind of write the sync makes must be safe to repeat: the platform ends
 * in the mapped state, with no duplicate object, no lost change, nothing dead-lettered, and no
 * contract violation.
 *
 * Answers without a body (204: patchGroup, removeEmbedGroupMembers, the deletes) have nothing to
 * cut; those writes are checked with the nearest fault, a ghost (applied, the answer lost whole).
 */
describe.each([
  { contentLength: true, mode: "with the full Content-Length (a broken connection)" },
  { contentLength: false, mode: "without a Content-Length (a complete-looking 2xx, its JSON cut)" },
])("a write applied whose 2xx answer is cut off, $mode", ({ contentLength }) => {
  let h: TestBridge;
  /** Every platform user (SCIM JSON; userName and the fields these tests read). */
  const platformUsers = () =>
    h.emulator.state().users as Array<{ id: string; userName: string } & Record<string, unknown>>;
  beforeAll(async () => {
    h = await startTestBridge(`inv-cut-off-${contentLength}`, {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: {
            department: { from: `${ENT}:department`, type: "string" },
            costCenter: { from: `${ENT}:costCenter`, type: "number" },
            levels: { from: `${ENT}:division`, type: "number_array" },
          },
        },
        purge: { tokens: ["purge-token"], onDelete: "delete" },
        portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** The next `count` calls of `operation` are applied and their answers cut off. */
  function cutOff(operation: string, count = 1): void {
    h.emulator.addFault({ type: "cutOff", contentLength, count, match: { operation } });
  }

  function cutFired(operation: string): number {
    return h.emulator.requests().filter((r) => r.fault === "cutOff" && r.operation === operation).length;
  }

  /** Idle, nothing dead-lettered, every fault used up, and the emulator saw no contract violation. */
  async function expectConverged(): Promise<void> {
    await h.waitForIdle();
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    expect(h.emulator.faults()).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
  }

  const embedGroups = () => h.emulator.state().embedTenants.find((t) => t.name === "acme")?.groups ?? [];

  it("createUser: the user exists once and is the one the bridge records", async () => {
    cutOff("createUser");
    const user = await h.scim("okta").createUser("ann@example.com", { displayName: "Ann" });
    await expectConverged();
    expect(cutFired("createUser")).toBe(1);
    const users = platformUsers().filter((u) => u.userName === "ann@example.com");
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ displayName: "Ann", active: true });
    const status = await h.admin().get(`/sources/okta/users/${user.id}`);
    expect(status.body).toMatchObject({ state: "synced", platformId: users[0]?.id });
  });

  it("patchUser: a profile change lands once, and the next change after it too", async () => {
    const scim = h.scim("okta");
    const user = await scim.createUser("bob@example.com", { displayName: "Bob" });
    await expectConverged();
    cutOff("patchUser");
    await scim.patchUser(user.id, [
      { op: "replace", path: "displayName", value: "Robert" },
      { op: "replace", path: "userName", value: "robert@example.com" },
    ]);
    await expectConverged();
    expect(cutFired("patchUser")).toBe(1);
    await scim.patchUser(user.id, [{ op: "replace", path: "displayName", value: "Rob" }]);
    await expectConverged();
    const users = platformUsers().filter((u) => /^(bob|robert)@/.test(u.userName));
    expect(users.map((u) => [u.userName, u.displayName])).toEqual([["robert@example.com", "Rob"]]);
  });

  it("createUserAttribute and upsertUserAttributeValue (string, number, number_array): one definition each, the values set, then changed", async () => {
    cutOff("createUserAttribute", 3);
    cutOff("upsertUserAttributeValue", 3);
    const scim = h.scim("okta");
    const user = await scim.createUser("dept@example.com", {
      schemas: [USER, ENT],
      [ENT]: { department: "R&D", costCenter: "42", division: "5" },
    });
    await expectConverged();
    // A rule's count is spent by every request it matches: a cut create's repeat (409) spends one.
    expect(cutFired("createUserAttribute")).toBeGreaterThanOrEqual(2);
    expect(cutFired("upsertUserAttributeValue")).toBe(3);
    const values = () => {
      const state = h.emulator.state();
      const pid = h.platformUsers().get("dept@example.com")?.id;
      return Object.fromEntries(
        state.attributeValues.filter((v) => v.userId === pid).map((v) => [v.name, v.value]),
      );
    };
    expect(values()).toEqual({ department: "R&D", costCenter: 42, levels: [5] });

    cutOff("upsertUserAttributeValue", 3);
    await scim.patchUser(user.id, [
      { op: "replace", path: `${ENT}:department`, value: "Sales" },
      { op: "replace", path: `${ENT}:costCenter`, value: "7" },
      { op: "replace", path: `${ENT}:division`, value: "3" },
    ]);
    await expectConverged();
    expect(cutFired("upsertUserAttributeValue")).toBe(6);
    expect(values()).toEqual({ department: "Sales", costCenter: 7, levels: [3] });
    const names = h.emulator.state().attributes.map((a) => a.name);
    for (const name of ["department", "costCenter", "levels"]) {
      expect(names.filter((n) => n === name)).toHaveLength(1);
    }
  });

  it("a read cut off (the lookup of a create whose answer was lost) is read again: the user adopted once", async () => {
    // The create lands but its answer is lost; the sync looks the user up (listUsers), and that
    // read's answer is cut off too. A GET is safe to repeat: it was a permanent dead letter.
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createUser" } });
    cutOff("listUsers");
    const user = await h.scim("okta").createUser("cid@example.com", { displayName: "Cid" });
    await expectConverged();
    expect(cutFired("listUsers")).toBe(1);
    const users = platformUsers().filter((u) => u.userName === "cid@example.com");
    expect(users).toHaveLength(1);
    const status = await h.admin().get(`/sources/okta/users/${user.id}`);
    expect(status.body).toMatchObject({ state: "synced", platformId: users[0]?.id });
  });

  it("createGroup: the group exists once, with its members", async () => {
    const scim = h.scim("okta");
    const cleo = await scim.createUser("cleo@example.com");
    const dan = await scim.createUser("dan@example.com");
    await expectConverged();
    cutOff("createGroup");
    const group = await scim.createGroup("Analysts", [cleo.id, dan.id]);
    await expectConverged();
    expect(cutFired("createGroup")).toBe(1);
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Analysts");
    expect(groups).toHaveLength(1);
    const pids = ["cleo@example.com", "dan@example.com"].map((n) => h.platformUsers().get(n)?.id);
    expect(memberIds(groups[0]?.members)).toEqual([...pids].sort());
    const status = await h.admin().get(`/sources/okta/groups/${group.id}`);
    expect(status.body).toMatchObject({ state: "synced", platformId: groups[0]?.id });
  });

  it("patchGroup (204, nothing to cut; a ghost instead): member chunks added and removed, then the group deleted", async () => {
    const scim = h.scim("okta");
    const people: Array<{ id: string; userName: string }> = [];
    for (let i = 0; i < 120; i++) people.push(await scim.createUser(`m${i}@members.example`));
    const group = await scim.createGroup("Members", []);
    await expectConverged();

    cutOff("patchGroup"); // an answer without a body is sent whole
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "patchGroup" } });
    await scim.patchGroup(group.id, [
      { op: "add", path: "members", value: people.map((p) => ({ value: p.id })) },
    ]);
    await expectConverged();
    expect(cutFired("patchGroup")).toBe(0);
    const members = () => h.emulator.state().groups.find((g) => g.displayName === "Members")?.members;
    const pidsOf = (list: typeof people) =>
      list.map((p) => h.platformUsers().get(p.userName.toLowerCase())?.id ?? "?").sort();
    expect(memberIds(members())).toEqual(pidsOf(people));

    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "patchGroup" } });
    await scim.patchGroup(
      group.id,
      people.slice(0, 110).map((p) => ({ op: "remove", path: `members[value eq "${p.id}"]` })),
    );
    await expectConverged();
    expect(memberIds(members())).toEqual(pidsOf(people.slice(110)));

    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "deleteGroup" } });
    expect((await scim.deleteGroup(group.id)).status).toBe(204);
    await expectConverged();
    expect(h.emulator.state().groups.filter((g) => g.displayName === "Members")).toEqual([]);
    expect(platformUsers().filter((u) => u.userName.endsWith("@members.example"))).toHaveLength(120);
  });

  it("bulkUsers DEACTIVATE and ACTIVATE: every user of the call ends in the state asked for", async () => {
    const scim = h.scim("okta");
    const users: Array<{ id: string; userName: string }> = [];
    for (const n of ["eve", "fay", "gus"]) users.push(await scim.createUser(`${n}@example.com`));
    await expectConverged();
    const active = () => users.map((u) => h.platformUsers().get(u.userName)?.active);

    cutOff("bulkUsers");
    for (const u of users) await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }]);
    await expectConverged();
    expect(cutFired("bulkUsers")).toBe(1);
    expect(active()).toEqual([false, false, false]);

    cutOff("bulkUsers");
    for (const u of users) await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }]);
    await expectConverged();
    expect(cutFired("bulkUsers")).toBe(2);
    expect(active()).toEqual([true, true, true]);
    for (const u of users) {
      expect((await h.admin().get(`/sources/okta/users/${u.id}`)).body.state).toBe("synced");
    }
  });

  it("bulkUsers DELETE: the users are gone, their records purged, nothing dead-lettered", async () => {
    const scim = h.scim("purge"); // onDelete: delete
    const users: Array<{ id: string; userName: string }> = [];
    for (const n of ["hal", "ivy"]) users.push(await scim.createUser(`${n}@purge.example`));
    await expectConverged();
    expect(platformUsers().filter((u) => u.userName.endsWith("@purge.example"))).toHaveLength(2);

    cutOff("bulkUsers");
    for (const u of users) expect((await scim.deleteUser(u.id)).status).toBe(204);
    await expectConverged();
    expect(cutFired("bulkUsers")).toBeGreaterThanOrEqual(1);
    expect(platformUsers().filter((u) => u.userName.endsWith("@purge.example"))).toEqual([]);
    for (const u of users) {
      expect((await h.admin().get(`/sources/purge/users/${u.id}`)).status).toBe(404);
    }
  });

  it("bulkUsers cut off on every attempt until the platform heals: the change lands, nothing dead-lettered", async () => {
    const scim = h.scim("purge");
    const user = await scim.createUser("jo@purge.example");
    const kept = await scim.createUser("kim@purge.example");
    await expectConverged();
    const before = cutFired("bulkUsers");
    h.emulator.addFault({ type: "cutOff", contentLength, match: { operation: "bulkUsers" } });
    await scim.patchUser(kept.id, [{ op: "replace", path: "active", value: false }]);
    expect((await scim.deleteUser(user.id)).status).toBe(204);
    // One flush attempt's worth of cut answers (the harness's client tries 5 times a call).
    await waitFor(() => cutFired("bulkUsers") - before >= 5, { what: "the flush attempt to give up" });
    h.emulator.clearFaults();
    await expectConverged();
    expect(platformUsers().filter((u) => u.userName === "jo@purge.example")).toEqual([]);
    expect(h.platformUsers().get("kim@purge.example")?.active).toBe(false);
    expect((await h.admin().get(`/sources/purge/users/${kept.id}`)).body.state).toBe("synced");
  });

  it("embed groups: create, members added in chunks, renamed, members removed, deleted; each write cut off", async () => {
    const scim = h.scim("portal");
    const people: Array<{ id: string; userName: string }> = [];
    for (let i = 0; i < 130; i++) {
      people.push(await scim.createUser(`p${i}@acme.example`, { externalId: `ext-p${i}` }));
    }
    cutOff("createEmbedGroup");
    cutOff("addEmbedGroupMembers", 2); // both chunks (100 + 30)
    const group = await scim.createGroup(
      "Viewers",
      people.map((p) => p.id),
    );
    await expectConverged();
    expect([cutFired("createEmbedGroup"), cutFired("addEmbedGroupMembers")]).toEqual([1, 2]);
    const viewers = (name = "Viewers") => embedGroups().filter((g) => g.name === name);
    expect(viewers()).toHaveLength(1);
    expect([...(viewers()[0]?.members ?? [])].sort()).toEqual(people.map((_, i) => `ext-p${i}`).sort());

    cutOff("updateEmbedGroup");
    await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Readers" }]);
    await expectConverged();
    expect(cutFired("updateEmbedGroup")).toBe(1);
    expect([viewers().length, viewers("Readers").length]).toEqual([0, 1]);

    // A member deactivated leaves the group; members taken out at the source leave it (204: ghosts).
    h.emulator.addFault({ type: "ghost", count: 2, match: { operation: "removeEmbedGroupMembers" } });
    await scim.patchUser(people[0]?.id ?? "", [{ op: "replace", path: "active", value: false }]);
    await scim.patchGroup(group.id, [
      ...people.slice(1, 11).map((p) => ({ op: "remove", path: `members[value eq "${p.id}"]` })),
    ]);
    await expectConverged();
    expect([...(viewers("Readers")[0]?.members ?? [])].sort()).toEqual(
      people
        .slice(11)
        .map((_, i) => `ext-p${i + 11}`)
        .sort(),
    );

    cutOff("addEmbedGroupMembers");
    await scim.patchUser(people[0]?.id ?? "", [{ op: "replace", path: "active", value: true }]);
    await expectConverged();
    expect(viewers("Readers")[0]?.members).toContain("ext-p0");

    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "deleteEmbedGroup" } });
    expect((await scim.deleteGroup(group.id)).status).toBe(204);
    await expectConverged();
    expect(embedGroups().filter((g) => ["Viewers", "Readers"].includes(g.name))).toEqual([]);
  });

  it("addEmbedGroupMembers cut off on every attempt until the platform heals: the members land once", async () => {
    const scim = h.scim("portal");
    const ann = await scim.createUser("ann@acme.example", { externalId: "ext-ann" });
    const ben = await scim.createUser("ben@acme.example", { externalId: "ext-ben" });
    const group = await scim.createGroup("Editors", [ann.id]);
    await expectConverged();
    const before = cutFired("addEmbedGroupMembers");
    const rule: FaultRule = { type: "cutOff", contentLength, match: { operation: "addEmbedGroupMembers" } };
    h.emulator.addFault(rule);
    await scim.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: ben.id }] }]);
    await waitFor(() => cutFired("addEmbedGroupMembers") - before >= 5, {
      what: "the sync attempt to give up",
    });
    h.emulator.clearFaults();
    await expectConverged();
    const editors = embedGroups().filter((g) => g.name === "Editors");
    expect(editors.map((g) => [...g.members].sort())).toEqual([["ext-ann", "ext-ben"]]);
    const tenantUsers = h.emulator.state().embedTenants.find((t) => t.name === "acme")?.users ?? [];
    expect(tenantUsers.filter((u) => u.externalId === "ext-ben")).toHaveLength(1);
  });
});
