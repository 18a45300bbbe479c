/**
 * Probes (branch probe-c): behaviour an outside acceptance suite relies on, end to end.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncKeys } from "../../src/sync/sync-keys.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

interface EmbedTenantView {
  name: string;
  groups: Array<{ id: string; name: string; members: string[] }>;
}

/**
 * Invariant 8 for an embed-tenant source: its users are embed users, and taking one out of every
 * group of the tenant the source owns is its deprovisioning (ARCHITECTURE.md, embed-tenant
 * sources). A reconciliation that would do that to more than the share waits for an admin.
 */
describe("the deprovisioning guard of an embed-tenant source", () => {
  let h: TestBridge;
  const users: string[] = [];
  let groupId = "";

  const tenant = () =>
    (h.emulator.state() as unknown as { embedTenants: EmbedTenantView[] }).embedTenants.find(
      (t) => t.name === "acme",
    );
  const members = () => [...(tenant()?.groups.find((g) => g.name === "Everyone")?.members ?? [])].sort();
  const platformGroupId = () => tenant()?.groups.find((g) => g.name === "Everyone")?.id as string;
  /** Puts embed users back into the group behind the bridge's back (the platform's own API). */
  const addBehind = async (externalIds: string[]) => {
    const res = await fetch(`${h.platformUrl}/api/v1/embed-tenants/acme/groups/${platformGroupId()}/users`, {
      method: "POST",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ users: externalIds.map((externalId) => ({ externalId })) }),
    });
    expect(res.status).toBe(200);
  };
  const settle = async (path: string) =>
    waitFor(
      async () => {
        const res = await h.admin().get(path);
        return SETTLED.includes(res.body.state) ? res.body : null;
      },
      { what: `${path} to settle` },
    );
  const reconcile = async (dryRun = false) => {
    const res = await h.admin().post("/sources/acme/reconcile", { dryRun });
    expect(res.status).toBe(202);
    return settle(`/reconcile-runs/${res.body.runId}`);
  };
  const name = (i: number) => `embed${i}@example.com`;

  beforeAll(async () => {
    h = await startTestBridge("probe-c-embed-guard", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    const scim = h.scim("acme");
    for (let i = 0; i < 10; i++) users.push((await scim.createUser(name(i))).id);
    groupId = (await scim.createGroup("Everyone", users)).id;
    for (const id of users.slice(0, 2))
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    expect(members()).toEqual(
      users
        .slice(2)
        .map((_id, i) => name(i + 2))
        .sort(),
    );
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("exactly the share (1 of 10 embed users out of every group) is applied without asking", async () => {
    await addBehind([name(0)]);
    expect(members()).toHaveLength(9);
    const run = await reconcile();
    expect(run.state).toBe("succeeded");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 1, ownedUsers: 10, tripped: false });
    await h.waitForIdle();
    expect(members()).toHaveLength(8);
  });

  it("2 of 10 taken out of every group wait for an admin; discard changes nothing, confirm applies", async () => {
    await addBehind([name(0), name(1)]);
    const dry = await reconcile(true);
    expect(dry).toMatchObject({ state: "succeeded", guard: { plannedDeprovisions: 2, ownedUsers: 10 } });
    const held = await reconcile();
    expect(held).toMatchObject({
      state: "awaiting-confirmation",
      counts: { membership: 1 },
      guard: { plannedDeprovisions: 2, ownedUsers: 10, share: 0.2, tripped: true },
    });
    await h.waitForIdle();
    expect(members()).toHaveLength(10);
    expect((await h.admin().post(`/reconcile-runs/${held.runId}/discard`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(members()).toHaveLength(10);

    const again = await reconcile();
    expect(again.state).toBe("awaiting-confirmation");
    expect((await h.admin().post(`/reconcile-runs/${again.runId}/confirm`)).status).toBeLessThan(300);
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${again.runId}`)).body.state === "succeeded",
      {
        what: "the confirmed run",
      },
    );
    await h.waitForIdle();
    expect(members()).toEqual(
      users
        .slice(2)
        .map((_id, i) => name(i + 2))
        .sort(),
    );
  });

  it("counts users, not memberships; a user taken out of one group but kept in another is no deprovisioning", async () => {
    const scim = h.scim("acme");
    await scim.createGroup("Staff", users.slice(2));
    // user 2 leaves Everyone at the source (applied at once), and is put back behind the bridge's back.
    const left = await scim.patchGroup(groupId, [{ op: "remove", path: `members[value eq "${users[2]}"]` }]);
    expect(left.status).toBeLessThan(300);
    await h.waitForIdle();
    expect(members()).not.toContain(name(2));
    await addBehind([name(2), name(0)]);
    const staffId = tenant()?.groups.find((g) => g.name === "Staff")?.id as string;
    const res = await fetch(`${h.platformUrl}/api/v1/embed-tenants/acme/groups/${staffId}/users`, {
      method: "POST",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ users: [{ externalId: name(0) }] }),
    });
    expect(res.status).toBe(200);
    const run = await reconcile(true);
    // user 0 (inactive) leaves both groups: one deprovisioning; user 2 stays in Staff: none.
    expect(run).toMatchObject({ state: "succeeded", counts: { membership: 2 } });
    expect(run.guard).toMatchObject({ plannedDeprovisions: 1, ownedUsers: 10, tripped: false });
  });

  it("a whole-source resync that would take 2 of 10 out of every group waits too, and applies them once confirmed", async () => {
    // The dry run above left user 0 in both groups and user 2 back in Everyone: repaired first.
    expect((await reconcile()).state).toBe("succeeded");
    await h.waitForIdle();
    const before = members();
    expect(before).not.toContain(name(0));
    await addBehind([name(0), name(1)]);
    const res = await h.admin().post("/sources/acme/resync", {});
    expect(res.status).toBe(202);
    const op = await settle(`/resyncs/${res.body.id}`);
    expect(op).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 2, ownedUsers: 10, tripped: true },
    });
    await h.waitForIdle();
    expect(members()).toEqual([...before, name(0), name(1)].sort());
    expect((await h.admin().post(`/resyncs/${op.id}/confirm`)).status).toBeLessThan(300);
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.id}`)).body.state === "succeeded", {
      what: "the confirmed resync",
    });
    await h.waitForIdle();
    expect(members()).toEqual(before);
  });

  it("a confirmed resync does not take out of a group anyone the admin was not shown: that group waits again", async () => {
    await h.waitForIdle();
    const before = members();
    await addBehind([name(0), name(1)]);
    const res = await h.admin().post("/sources/acme/resync", { groups: [groupId] });
    const op = await settle(`/resyncs/${res.body.id}`);
    expect(op).toMatchObject({ state: "awaiting-confirmation", guard: { plannedDeprovisions: 2 } });
    // Drift after the admin looked: someone else put in the group behind the bridge's back.
    await addBehind(["stranger@example.com"]);
    expect((await h.admin().post(`/resyncs/${op.id}/confirm`)).status).toBeLessThan(300);
    const confirmed = await waitFor(
      async () => {
        const body = (await h.admin().get(`/resyncs/${op.id}`)).body;
        return body.state === "succeeded" ? body : null;
      },
      { what: "the confirmed resync" },
    );
    expect(confirmed.heldAgainAs).toBeDefined();
    await h.waitForIdle();
    expect(members()).toEqual([...before, name(0), name(1), "stranger@example.com"].sort());
    const again = (await h.admin().get(`/resyncs/${confirmed.heldAgainAs}`)).body;
    expect(again).toMatchObject({
      state: "awaiting-confirmation",
      heldFrom: op.id,
      scope: { users: [], groups: [groupId] },
      guard: { plannedDeprovisions: 3, tripped: true },
    });
    expect((await h.admin().post(`/resyncs/${again.id}/confirm`)).status).toBeLessThan(300);
    await waitFor(async () => (await h.admin().get(`/resyncs/${again.id}`)).body.state === "succeeded", {
      what: "the second confirmed resync",
    });
    await h.waitForIdle();
    expect(members()).toEqual(before);
  });

  it("a resync of one named group counts that group's members alone; 1 of 10 is applied", async () => {
    await addBehind([name(0)]);
    const res = await h.admin().post("/sources/acme/resync", { groups: [groupId] });
    expect(res.status).toBe(202);
    const op = await settle(`/resyncs/${res.body.id}`);
    expect(op).toMatchObject({ guard: { plannedDeprovisions: 1, ownedUsers: 10, tripped: false } });
    await h.waitForIdle();
    expect(members()).not.toContain(name(0));
  });

  it("a resync of named users counts those its sync takes out of every group, not the drift of their groups", async () => {
    await h.waitForIdle();
    // Users 0 and 1 are inactive and recorded so: put back behind the bridge's back, a resync of the
    // users alone does not take them out (their groups are not resynced), and counts nobody.
    await addBehind([name(0), name(1)]);
    const plain = await h.admin().post("/sources/acme/resync", { users: users.slice(0, 2) });
    const first = await settle(`/resyncs/${plain.body.id}`);
    expect(first).toMatchObject({ state: "succeeded", guard: { plannedDeprovisions: 0 } });
    // The sync's record says active (as if their deactivation had not been synced yet): their sync
    // takes them out of every group: 2 of 10, held.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      for (const [i, id] of users.slice(0, 2).entries()) {
        await redis.hset(
          syncKeys.emb(h.config.redis.prefix, "acme"),
          id,
          JSON.stringify({ externalId: name(i), active: true }),
        );
      }
    } finally {
      await redis.quit();
    }
    const res = await h.admin().post("/sources/acme/resync", { users: users.slice(0, 2) });
    const held = await settle(`/resyncs/${res.body.id}`);
    expect(held).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 2, tripped: true },
    });
  });
});

/**
 * An embed-tenant source owns no workspace user: a workspace orphan its reconciliation would
 * deactivate (orphans: deactivate) is held whatever the number of its embed users.
 */
describe("workspace orphans found by an embed-tenant source's reconciliation", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probe-c-embed-orphans", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    const scim = h.scim("acme");
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await scim.createUser(`eo${i}@example.com`)).id);
    await scim.createGroup("Everyone", ids);
    await h.waitForIdle();
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("one orphan among 20 embed users is held, and stays active", async () => {
    const orphan = h.emulator.drift({ action: "addOrphanUser", user: { userName: "eo-orphan@example.com" } });
    const res = await h.admin().post("/sources/acme/reconcile", { dryRun: false });
    expect(res.status).toBe(202);
    const run = await waitFor(
      async () => {
        const body = (await h.admin().get(`/reconcile-runs/${res.body.runId}`)).body;
        return SETTLED.includes(body.state) ? body : null;
      },
      { what: "the run to settle" },
    );
    expect(run).toMatchObject({ state: "awaiting-confirmation", counts: { orphans: 1 } });
    expect(run.guard).toMatchObject({ plannedDeprovisions: 1, tripped: true });
    await h.waitForIdle();
    expect(h.emulator.state().users.find((u) => u.id === orphan)?.active).not.toBe(false);
  });
});

/** The admin API answers a known path with a method it does not serve as HTTP does: 405 with Allow. */
describe("admin API methods", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probe-c-admin-405", { sources: { okta: { tokens: ["okta-token"] } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("405 with Allow for a known path and another method; 404 for an unknown path; 401 first without a token", async () => {
    const auth = { Authorization: "Bearer e2e-admin-token" };
    const status = await h.http.delete("/admin/v1/status").set(auth);
    expect(status.status).toBe(405);
    expect(status.headers.allow).toBe("GET, HEAD");
    expect(status.body.error.code).toBe("method_not_allowed");
    const reconcile = await h.http.get("/admin/v1/sources/okta/reconcile").set(auth);
    expect(reconcile.status).toBe(405);
    expect(reconcile.headers.allow).toBe("POST");
    const confirm = await h.http.get("/admin/v1/reconcile-runs/x/confirm").set(auth);
    expect(confirm.status).toBe(405);
    const deadLetter = await h.http.post("/admin/v1/dead-letters/okta/user/x").set(auth).send({});
    expect(deadLetter.status).toBe(405);
    expect(deadLetter.headers.allow).toBe("DELETE");
    expect((await h.http.get("/admin/v1/nope").set(auth)).status).toBe(404);
    expect((await h.http.delete("/admin/v1/status")).status).toBe(401);
    expect((await h.http.get("/admin/v1/status").set(auth)).status).toBe(200);
  });
});

/**
 * A group of an embedTenantFromGroup source renamed to a name that gives no tenant stays where it
 * is, following its membership (sync-embed-group.ts): a resync takes nobody out of it, so the guard
 * counts nobody and the resync is not held.
 */
describe("a resync of a tenant group renamed to a name without a tenant", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probe-c-embed-badname", {
      sources: {
        portal: {
          tokens: ["portal-token"],
          target: { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9]+)-" } },
        },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("counts no deprovisioning and keeps every member", async () => {
    const scim = h.scim("portal");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await scim.createUser(`bn${i}@example.com`)).id);
    const group = await scim.createGroup("tenant-blue-Staff", ids);
    await h.waitForIdle();
    const renamed = await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Staff" }]);
    expect(renamed.status).toBeLessThan(300);
    await h.waitForIdle();
    const res = await h.admin().post("/sources/portal/resync", { groups: [group.id] });
    expect(res.status).toBe(202);
    const op = await waitFor(
      async () => {
        const body = (await h.admin().get(`/resyncs/${res.body.id}`)).body;
        return SETTLED.includes(body.state) ? body : null;
      },
      { what: "the resync to settle" },
    );
    expect(op.state).not.toBe("awaiting-confirmation");
    expect(op.guard).toMatchObject({ plannedDeprovisions: 0, tripped: false });
    await h.waitForIdle();
    const tenant = (h.emulator.state() as unknown as { embedTenants: EmbedTenantView[] }).embedTenants.find(
      (t) => t.name === "blue",
    );
    expect(tenant?.groups[0]?.members).toHaveLength(5);
  });
});

/**
 * The sync state of a workspace source lost (platform ids, ownership, applied records), the
 * directory intact: the sync finds each directory user's platform user again by userName (409 on
 * create, then adoption) and applies the directory, so users inactive at the source whose platform
 * users are active get deactivated. A reconciliation or resync that would do that to more than the
 * share waits for an admin.
 */
describe("the deprovisioning guard when a workspace source's sync state is lost", () => {
  let h: TestBridge;
  const redis = new Redis(TEST_REDIS_URL);
  const activeCount = () => h.emulator.state().users.filter((u) => u.active !== false).length;
  const loseSyncState = async () => {
    for (const u of h.emulator.state().users)
      h.emulator.drift({ action: "setUserActive", userId: String(u.id), active: true });
    const p = h.config.redis.prefix;
    await redis.del(syncKeys.pid(p, "okta"), syncKeys.owner(p, "user"), syncKeys.applied(p, "okta", "user"));
  };
  const settle = (path: string) =>
    waitFor(
      async () => {
        const body = (await h.admin().get(path)).body;
        return SETTLED.includes(body.state) ? body : null;
      },
      { what: `${path} to settle` },
    );

  beforeAll(async () => {
    h = await startTestBridge("probe-c-lost-state", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await scim.createUser(`ls${i}@example.com`)).id);
    for (const id of ids.slice(0, 5))
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    expect(activeCount()).toBe(5);
  }, 30_000);
  afterAll(async () => {
    await h?.close();
    await redis.quit();
  });

  it("reconciliation: 5 inactive users to be found again and deactivated are held", async () => {
    await loseSyncState();
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const run = await settle(`/reconcile-runs/${res.body.runId}`);
    expect(run).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 5, tripped: true },
    });
    await h.waitForIdle();
    expect(activeCount()).toBe(10);
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/discard`)).status).toBeLessThan(300);
  });

  it("resync: the same 5 are held too; once confirmed they are deactivated", async () => {
    const res = await h.admin().post("/sources/okta/resync", {});
    const op = await settle(`/resyncs/${res.body.id}`);
    expect(op).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 5, tripped: true },
    });
    await h.waitForIdle();
    expect(activeCount()).toBe(10);
    expect((await h.admin().post(`/resyncs/${op.id}/confirm`)).status).toBeLessThan(300);
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.id}`)).body.state === "succeeded", {
      what: "the confirmed resync",
    });
    await h.waitForIdle();
    expect(activeCount()).toBe(5);
  });
});
