import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, applyThenFail, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const memberIds = (members: unknown[] | undefined) =>
  (members ?? []).map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort();

/**
 * Invariant 2 (no lost update) for writes "in doubt": the platform applied a write but its answer
 * was lost (ghost), and every retry of the call failed too (503), so the sync fails and waits for
 * its next attempt. Before that attempt, the identity provider changes the entity again (often
 * back). The bridge cannot know whether the write landed: it must not plan from what it last
 * knew for sure as if the write had not happened.
 *
 * New coverage: the existing lost-answer tests (mapping-rules, lost-answers, the convergence
 * property) either let the retry of the same call succeed (409 and adopt) or change nothing at the
 * source in between; none makes the write's retries fail and then changes the entity.
 * Each of these scenarios was a defect: a duplicate platform user, group or embed group under the
 * old name (the planner created under the new name without looking for the lost create), a stale
 * displayName and a member left in a group (the record of what was applied did not know a PATCH
 * might have landed), a user left inactive, and a user deleted at the source left active on the
 * platform (a queued bulk change was dropped or left behind as if the platform still held the
 * recorded state). Fixed in src/mapping/plan-*.ts (look the lost create up first),
 * src/sync/sync-user.ts and sync-group.ts (`inDoubt` before writes: the next sync reads the
 * platform; a queued lifecycle change makes the platform's state unknown to the planner).
 */
describe("a write whose answer was lost, then a change at the source before the retry", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-in-doubt", {
      sources: {
        okta: { tokens: ["okta-token"] },
        portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function waitForRetrying(kind: "users" | "groups", id: string, source = "okta"): Promise<void> {
    await waitFor(
      async () => {
        const res = await h.admin().get(`/sources/${source}/${kind}/${id}`);
        return res.body.state === "retrying";
      },
      { what: `the ${kind.slice(0, -1)} sync to fail and wait for a retry`, timeoutMs: 15_000 },
    );
  }

  const ghostFired = (operation: string) =>
    h.emulator.requests().some((r) => r.fault === "ghost" && r.operation === operation);

  it("a user renamed at the source after its create's answer was lost exists once, renamed", async () => {
    applyThenFail(h.emulator, "createUser");
    const scim = h.scim("okta");
    const user = await scim.createUser("old.name@example.com");
    await waitForRetrying("users", user.id);
    expect(ghostFired("createUser")).toBe(true);
    expect(h.platformUsers().has("old.name@example.com")).toBe(true);

    const res = await scim.patchUser(user.id, [
      { op: "replace", path: "userName", value: "new.name@example.com" },
    ]);
    expect(res.status).toBe(200);
    h.emulator.clearFaults();
    await h.waitForIdle();

    const users = h.emulator.state().users;
    expect(users.map((u) => u.userName)).toEqual(["new.name@example.com"]);
    const status = await h.admin().get(`/sources/okta/users/${user.id}`);
    expect(status.body).toMatchObject({ state: "synced", platformId: users[0]?.id });
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  });

  it("a user found again under its old name after a lost create gets into its group", async () => {
    applyThenFail(h.emulator, "createUser");
    const scim = h.scim("okta");
    const user = await scim.createUser("lost.member@example.com");
    await waitForRetrying("users", user.id);
    // The group waits for its member's platform id, which the user's sync records once it has one.
    const group = await scim.createGroup("Lost Members", [user.id]);
    await scim.patchUser(user.id, [{ op: "replace", path: "userName", value: "found.member@example.com" }]);
    h.emulator.clearFaults();
    await h.waitForIdle();

    const platformId = h.platformUsers().get("found.member@example.com")?.id;
    expect(platformId).toBeDefined();
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Lost Members");
    expect(groups.map((g) => memberIds(g.members))).toEqual([[platformId]]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    await scim.deleteGroup(group.id);
    await scim.deleteUser(user.id);
    await h.waitForIdle();
  });

  it("a group renamed and given other members after its create's answer was lost exists once, right", async () => {
    const scim = h.scim("okta");
    const ann = await scim.createUser("ann@example.com");
    const bob = await scim.createUser("bob@example.com");
    await h.waitForIdle();
    applyThenFail(h.emulator, "createGroup");
    const group = await scim.createGroup("Analysts", [ann.id]);
    await waitForRetrying("groups", group.id);
    expect(ghostFired("createGroup")).toBe(true);

    const res = await scim.patchGroup(group.id, [
      { op: "replace", path: "displayName", value: "Data Analysts" },
      { op: "add", path: "members", value: [{ value: bob.id }] },
      { op: "remove", path: `members[value eq "${ann.id}"]` },
    ]);
    expect([200, 204]).toContain(res.status);
    h.emulator.clearFaults();
    await h.waitForIdle();

    const groups = h.emulator.state().groups;
    expect(groups.map((g) => g.displayName)).toEqual(["Data Analysts"]);
    expect(memberIds(groups[0]?.members)).toEqual([h.platformUsers().get("bob@example.com")?.id]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    await scim.deleteGroup(group.id);
    await h.waitForIdle();
  });

  it("an embed group renamed after its create's answer was lost exists once, renamed, with its members", async () => {
    const scim = h.scim("portal");
    const ann = await scim.createUser("ann@acme.example", { externalId: "ext-ann" });
    await h.waitForIdle();
    applyThenFail(h.emulator, "createEmbedGroup");
    const group = await scim.createGroup("Viewers", [ann.id]);
    await waitForRetrying("groups", group.id, "portal");
    expect(ghostFired("createEmbedGroup")).toBe(true);

    await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Readers" }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    const groups = h.emulator.state().embedTenants.find((t) => t.name === "acme")?.groups ?? [];
    expect(groups.map((g) => [g.name, g.members])).toEqual([["Readers", ["ext-ann"]]]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  });

  it("a displayName changed and changed back while the first PATCH's answer was lost ends as the last", async () => {
    const scim = h.scim("okta");
    const user = await scim.createUser("carol@example.com", { displayName: "Carol" });
    await h.waitForIdle();
    applyThenFail(h.emulator, "patchUser");
    await scim.patchUser(user.id, [{ op: "replace", path: "displayName", value: "Carol Temp" }]);
    await waitForRetrying("users", user.id);
    expect(ghostFired("patchUser")).toBe(true);
    expect(h.platformUsers().get("carol@example.com")?.["displayName"]).toBe("Carol Temp");

    await scim.patchUser(user.id, [{ op: "replace", path: "displayName", value: "Carol" }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(h.platformUsers().get("carol@example.com")?.["displayName"]).toBe("Carol");
  });

  it("a member added and removed again while the add's answer was lost is not left in the group", async () => {
    const scim = h.scim("okta");
    const dan = await scim.createUser("dan@example.com");
    const eve = await scim.createUser("eve@example.com");
    const group = await scim.createGroup("Finance", [dan.id]);
    await h.waitForIdle();
    applyThenFail(h.emulator, "patchGroup");
    await scim.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: eve.id }] }]);
    await waitForRetrying("groups", group.id);
    expect(ghostFired("patchGroup")).toBe(true);
    const eveId = h.platformUsers().get("eve@example.com")?.id;
    const finance = () => h.emulator.state().groups.find((g) => g.displayName === "Finance");
    expect(memberIds(finance()?.members)).toContain(eveId);

    await scim.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${eve.id}"]` }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(memberIds(finance()?.members)).toEqual([h.platformUsers().get("dan@example.com")?.id]);
  });

  /** No sync job waits, runs or is delayed (the lifecycle queue may still be busy). */
  async function waitForSyncJobs(): Promise<void> {
    await waitFor(
      async () => {
        const counts = (await h.admin().get("/status")).body.queues?.sync as Record<string, number>;
        const busy = ["waiting", "active", "delayed", "prioritized"].map((state) => counts[state] ?? 0);
        return busy.every((n) => n === 0);
      },
      { what: "the sync jobs to finish" },
    );
  }

  it("a user deactivated, then reactivated after the bulk call's answer was lost, ends active", async () => {
    const scim = h.scim("okta");
    const user = await scim.createUser("frank@example.com");
    await h.waitForIdle();
    // One flush attempt's worth (the harness's client tries 5 times): applied unseen, then 4 x 503.
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "bulkUsers" } });
    h.emulator.addFault({ type: "error", status: 503, count: 4, match: { operation: "bulkUsers" } });
    await scim.patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
    await waitFor(
      () => h.emulator.requests().filter((r) => r.operation === "bulkUsers" && r.status === 503).length === 4,
      { what: "the flush attempt to give up" },
    );
    expect(h.platformUsers().get("frank@example.com")?.active).toBe(false);

    // Reactivated while the flush job waits for its next attempt, with the DEACTIVATE still queued.
    await scim.patchUser(user.id, [{ op: "replace", path: "active", value: true }]);
    await h.waitForIdle();
    expect(h.platformUsers().get("frank@example.com")?.active).toBe(true);
  });

  it("deactivated, reactivated and deleted in quick succession while bulk calls fail: ends inactive", async () => {
    const scim = h.scim("okta"); // onDelete: deactivate (the default)
    const user = await scim.createUser("gina@example.com");
    await scim.patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(h.platformUsers().get("gina@example.com")?.active).toBe(false);

    h.emulator.addFault({ type: "error", status: 503, match: { operation: "bulkUsers" } });
    await scim.patchUser(user.id, [{ op: "replace", path: "active", value: true }]);
    await waitFor(() => h.emulator.requests().some((r) => r.operation === "bulkUsers" && r.status === 503), {
      what: "the reactivation's bulk call to fail",
    });
    expect((await scim.deleteUser(user.id)).status).toBe(204);
    await waitForSyncJobs();
    h.emulator.clearFaults();
    await h.waitForIdle();

    const left = h.emulator.state().users.filter((u) => u.userName === "gina@example.com");
    expect(left.map((u) => u.active)).toEqual([false]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  });
});
