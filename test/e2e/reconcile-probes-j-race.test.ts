/**
 * Probes-j (reconciliation racing the identity provider): users and groups created, synced or
 * deleted at the source while a run streams the platform and the directory. What the run reports
 * as drift must be drift: a user that landed on the platform after the run's listing passed is on
 * the platform, not "deleted behind the bridge's back".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

const ZERO = {
  missing: 0,
  changed: 0,
  activeMismatch: 0,
  membership: 0,
  attributeValues: 0,
  deletedBehind: 0,
  orphans: 0,
};

async function settled(runId: string) {
  return waitFor(
    async () => {
      const run = await h.admin().get(`/reconcile-runs/${runId}`);
      return ["queued", "running"].includes(run.body.state) ? null : run.body;
    },
    { what: "the run to settle", timeoutMs: 30_000 },
  );
}

beforeAll(async () => {
  h = await startTestBridge("reconcile-probes-j-race", {
    sources: {
      okta: { tokens: ["okta-token"] },
      acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
    },
  });
  const scim = h.scim("okta");
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await scim.createUser(`race.j${i}@example.com`)).id);
  await scim.createGroup("Race J", ids);
  await h.waitForIdle();
});
afterAll(async () => {
  await h?.close();
});

describe("a run racing live traffic", () => {
  it("a user created and synced while the run lists the platform's groups is no drift (not deleted behind)", async () => {
    // The run's group listing is slow: users and groups land on the platform meanwhile. The run
    // asks for it as soon as its users' listing is answered.
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "listGroups" } });
    const listed = h.emulator.count("listUsers");
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    expect(res.status).toBe(202);
    await waitFor(() => h.emulator.count("listUsers") > listed, { what: "the run to list the users" });
    const scim = h.scim("okta");
    const user = await scim.createUser("race.j.new@example.com");
    await waitFor(
      async () => (await h.admin().get(`/sources/okta/users/${user.id}`)).body.state === "synced",
      {
        what: "the new user to sync",
      },
    );
    const run = await settled(res.body.runId);
    expect(run.state).toBe("succeeded");
    expect(run.counts, JSON.stringify(run.samples)).toEqual(ZERO);
    await h.waitForIdle();
  });

  it("deactivations the IdP sent a moment ago, still on their way, do not hold the run (the guard counts the run's own)", async () => {
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await scim.createUser(`race.j.off${i}@example.com`)).id);
    const team = await scim.createGroup("Race J off", ids.slice(0, 3));
    await h.waitForIdle();
    const pid = async (kind: "users" | "groups", id: string) =>
      (await h.admin().get(`/sources/okta/${kind}/${id}`)).body.platformId as string;
    // Drift the run must repair: a member taken out behind the bridge's back.
    h.emulator.drift({
      action: "removeGroupMember",
      groupId: await pid("groups", team.id),
      userId: await pid("users", ids[0]!),
    });
    // The IdP turns off three users; their bulk call is slow to be answered.
    h.emulator.addFault({ type: "slow", delayMs: 2_500, count: 1, match: { operation: "bulkUsers" } });
    for (const id of ids.slice(5, 8)) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const run = await settled(started.body.runId);
    expect(run.state, JSON.stringify(run.guard)).toBe("succeeded");
    expect(run.counts.membership).toBe(1);
    await h.waitForIdle();
    const platformUsers = h.platformUsers();
    for (let i = 0; i < 10; i++) {
      expect(platformUsers.get(`race.j.off${i}@example.com`)?.active, `user ${i}`).toBe(!(i >= 5 && i < 8));
    }
    expect(h.emulator.state().groups.find((g) => g.displayName === "Race J off")?.members).toHaveLength(3);
  });

  it("the same holds for a resync of the whole source: not held, and it deprovisions no one else", async () => {
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await scim.createUser(`race.j.rs${i}@example.com`)).id);
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 2_500, count: 1, match: { operation: "bulkUsers" } });
    for (const id of ids.slice(0, 3)) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    const started = await h.admin().post("/sources/okta/resync", {});
    expect(started.status).toBe(202);
    const op = await waitFor(
      async () => {
        const res = await h.admin().get(`/resyncs/${started.body.id}`);
        return ["queued", "running"].includes(res.body.state) ? null : res.body;
      },
      { what: "the resync to end", timeoutMs: 30_000 },
    );
    expect(op.state, JSON.stringify(op.guard)).toBe("succeeded");
    await h.waitForIdle();
    const platformUsers = h.platformUsers();
    for (let i = 0; i < 10; i++) {
      expect(platformUsers.get(`race.j.rs${i}@example.com`)?.active, `user ${i}`).toBe(i >= 3);
    }
    expect((await h.admin().get("/status")).body).toMatchObject({
      idle: true,
      deadLetters: 0,
      awaitingConfirmation: [],
    });
  });

  it("a user the bridge deprovisioned and the platform turned on again still counts (not dirty)", async () => {
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await scim.createUser(`race.j.back${i}@example.com`)).id);
    for (const id of ids) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    await h.waitForIdle();
    for (let i = 0; i < 6; i++) {
      const pid = h.platformUsers().get(`race.j.back${i}@example.com`)?.id as string;
      h.emulator.drift({ action: "setUserActive", userId: pid, active: true });
    }
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const run = await settled(started.body.runId);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 6, tripped: true });
    const resync = await h.admin().post("/sources/okta/resync", { users: ids });
    const op = await waitFor(
      async () => {
        const res = await h.admin().get(`/resyncs/${resync.body.id}`);
        return ["queued", "running"].includes(res.body.state) ? null : res.body;
      },
      { what: "the resync to end" },
    );
    expect(op.state).toBe("awaiting-confirmation");
    expect(op.guard).toMatchObject({ plannedDeprovisions: 6, tripped: true });
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/discard`)).status).toBe(200);
    expect((await h.admin().post(`/resyncs/${resync.body.id}/discard`)).status).toBe(200);
  });

  it("an embed-tenant source: users the IdP turned off a moment ago, still in their group on the platform, do not hold the run", async () => {
    const scim = h.scim("acme");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await scim.createUser(`race.j.emb${i}@example.com`, { externalId: `emb-${i}` })).id);
    await scim.createGroup("Race J embed", ids);
    await h.waitForIdle();
    // The group's sync takes them out slowly: the run reads the group with them still in it.
    h.emulator.addFault({
      type: "slow",
      delayMs: 2_500,
      count: 1,
      match: { operation: "removeEmbedGroupMembers" },
    });
    for (const id of ids.slice(0, 2)) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    await waitFor(
      async () =>
        h.emulator.requests().length > 0 &&
        (await h.admin().get(`/sources/acme/users/${ids[1]}`)).body.state === "synced",
      {
        what: "the users' syncs",
      },
    );
    const started = await h.admin().post("/sources/acme/reconcile", { dryRun: false });
    const run = await settled(started.body.runId);
    expect(run.state, JSON.stringify(run.guard)).toBe("succeeded");
    await h.waitForIdle();
    const tenants = h.emulator.state().embedTenants as Array<{
      name: string;
      groups: Array<{ name: string; members: string[] }>;
    }>;
    const members =
      tenants.find((t) => t.name === "acme")?.groups.find((g) => g.name === "Race J embed")?.members ?? [];
    expect([...members].sort()).toEqual([
      "emb-2",
      "emb-3",
      "emb-4",
      "emb-5",
      "emb-6",
      "emb-7",
      "emb-8",
      "emb-9",
    ]);
  });
});
