/**
 * Probes-j (reconciliation): drift of every kind made on the platform behind the bridge's back,
 * each found by a dry run that reports the very plan the real run then applies, repaired exactly
 * once (a second run finds nothing and writes nothing), and a platform user no source knows left
 * alone (orphans: report).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
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

type Run = {
  runId: string;
  state: string;
  counts: typeof ZERO;
  guard?: { plannedDeprovisions: number; ownedUsers: number; tripped: boolean };
  repairs: { entities: number; orphanDeactivations: number; applied: boolean };
  samples: Record<string, Array<{ kind: string; id?: string; platformId?: string; detail?: string }>>;
};

async function reconcile(source: string, dryRun: boolean): Promise<Run> {
  const res = await h.admin().post(`/sources/${source}/reconcile`, { dryRun });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const run = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
      return ["queued", "running"].includes(run.body.state) ? null : (run.body as Run);
    },
    { what: "the run to settle", timeoutMs: 30_000 },
  );
}

/** A write on the platform behind the bridge's back (the platform's own API, its token). */
async function platform(method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${h.platformUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${PLATFORM_TOKEN}`,
      "Content-Type": path.startsWith("/api/scim") ? "application/scim+json" : "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}: ${res.status}`).toBeLessThan(300);
  return res;
}

const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const writes = () => h.emulator.counters().writes;

async function platformIdOf(source: string, kind: "users" | "groups", id: string): Promise<string> {
  const res = await h.admin().get(`/sources/${source}/${kind}/${id}`);
  expect(res.status).toBe(200);
  return res.body.platformId as string;
}

/** The dry run reports what the real run then finds and applies; repaired once, a second run finds nothing. */
async function expectRepairedOnce(
  source: string,
  counts: Partial<typeof ZERO>,
  base: Partial<typeof ZERO> = {},
) {
  await h.waitForIdle();
  const before = writes();
  const dry = await reconcile(source, true);
  expect(writes(), "a dry run writes nothing").toBe(before);
  expect(dry.state).toBe("succeeded");
  expect(dry.counts).toEqual({ ...ZERO, ...base, ...counts });
  const run = await reconcile(source, false);
  expect(run.state, JSON.stringify(run)).toBe("succeeded");
  expect(run.counts).toEqual(dry.counts);
  expect(run.repairs.entities).toBe(dry.repairs.entities);
  expect(run.guard?.plannedDeprovisions).toBe(dry.guard?.plannedDeprovisions);
  await h.waitForIdle();
  const after = await reconcile(source, true);
  expect(after.counts).toEqual({ ...ZERO, ...base });
  const settled = writes();
  const again = await reconcile(source, false);
  expect(again.counts).toEqual({ ...ZERO, ...base });
  await h.waitForIdle();
  expect(writes(), "a run over converged state writes nothing").toBe(settled);
  return run;
}

beforeAll(async () => {
  h = await startTestBridge("reconcile-probes-j-drift", {
    sources: {
      okta: { tokens: ["okta-token"] },
      acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("workspace drift, found by a dry run and repaired once", () => {
  let users: Array<{ id: string; userName: string }> = [];
  let group: { id: string };

  beforeAll(async () => {
    const scim = h.scim("okta");
    users = [];
    for (let i = 0; i < 12; i++)
      users.push(await scim.createUser(`drift.j${i}@example.com`, { displayName: `D ${i}` }));
    group = await scim.createGroup(
      "Drift J",
      users.slice(0, 4).map((u) => u.id),
    );
    await h.waitForIdle();
  });

  it("a group renamed on the platform is put back", async () => {
    const pid = await platformIdOf("okta", "groups", group.id);
    await platform("PATCH", `/api/scim/v2/Groups/${pid}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "Renamed behind" }],
    });
    await expectRepairedOnce("okta", { changed: 1 });
    expect(h.emulator.state().groups.find((g) => g.id === pid)?.displayName).toBe("Drift J");
  });

  it("a member added on the platform is taken out, one removed is put back", async () => {
    const pid = await platformIdOf("okta", "groups", group.id);
    const extra = await platformIdOf("okta", "users", users[8]!.id);
    await platform("PATCH", `/api/scim/v2/Groups/${pid}`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: extra }] }],
    });
    await expectRepairedOnce("okta", { membership: 1 });
    const members = h.emulator.state().groups.find((g) => g.id === pid)?.members ?? [];
    expect(members).not.toContain(extra);
    expect(members).toHaveLength(4);
    // The extra member itself is no drift and is left as it is.
    expect(h.emulator.state().users.find((u) => u.id === extra)?.active).toBe(true);
  });

  it("a user's profile changed on the platform is put back", async () => {
    const pid = await platformIdOf("okta", "users", users[5]!.id);
    await platform("PATCH", `/api/scim/v2/Users/${pid}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "Changed behind" }],
    });
    await expectRepairedOnce("okta", { changed: 1 });
    expect(h.emulator.state().users.find((u) => u.id === pid)?.displayName).toBe("D 5");
  });

  it("a user deactivated on the platform is activated again (counted, not a deprovisioning)", async () => {
    const pid = await platformIdOf("okta", "users", users[6]!.id);
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    const run = await expectRepairedOnce("okta", { activeMismatch: 1 });
    expect(run.guard?.plannedDeprovisions).toBe(0);
    expect(h.emulator.state().users.find((u) => u.id === pid)?.active).toBe(true);
  });

  it("a member user deleted on the platform is created again and put back in its group", async () => {
    const old = await platformIdOf("okta", "users", users[1]!.id);
    await platform("DELETE", `/api/scim/v2/Users/${old}`);
    // The platform took the deleted user out of its group too: both are put right in one run.
    await expectRepairedOnce("okta", { deletedBehind: 1, membership: 1 });
    const now = await platformIdOf("okta", "users", users[1]!.id);
    expect(now).not.toBe(old);
    const gid = await platformIdOf("okta", "groups", group.id);
    expect(h.emulator.state().groups.find((g) => g.id === gid)?.members).toContain(now);
  });

  it("a platform user no source knows is reported, never deactivated nor deleted", async () => {
    const orphan = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "stranger.j@example.com", active: true },
    });
    await h.waitForIdle();
    const dry = await reconcile("okta", true);
    expect(dry.counts).toEqual({ ...ZERO, orphans: 1 });
    expect(dry.guard?.plannedDeprovisions).toBe(0);
    const run = await reconcile("okta", false);
    expect(run.state).toBe("succeeded");
    expect(run.repairs.orphanDeactivations).toBe(0);
    await h.waitForIdle();
    expect(h.emulator.state().users.find((u) => u.id === orphan)?.active).toBe(true);
    // No personal data in the report: the orphan is named by its platform id only.
    expect(JSON.stringify(run)).not.toContain("stranger.j");
  });
});

describe("embed-tenant drift", () => {
  const tenantMembers = (gid: string) => {
    const tenants = h.emulator.state().embedTenants as Array<{
      name: string;
      groups: Array<{ id: string; members: string[] }>;
    }>;
    const group = tenants.find((t) => t.name === "acme")?.groups.find((x) => x.id === gid);
    return [...(group?.members ?? [])].sort();
  };

  it("a member removed on the platform is put back once", async () => {
    const scim = h.scim("acme");
    const a = await scim.createUser("emb.a.j@example.com", { externalId: "emb-a-j" });
    const b = await scim.createUser("emb.b.j@example.com", { externalId: "emb-b-j" });
    const g = await scim.createGroup("Embed J", [a.id, b.id]);
    await h.waitForIdle();
    const gid = await platformIdOf("acme", "groups", g.id);
    h.emulator.drift({
      action: "removeEmbedGroupMember",
      tenant: "acme",
      groupId: gid,
      externalId: "emb-b-j",
    });
    // Workspace orphans are reported for every source (the one of the test above).
    await expectRepairedOnce("acme", { membership: 1 }, { orphans: 1 });
    expect(tenantMembers(gid)).toEqual(["emb-a-j", "emb-b-j"]);
  });

  it("an embed user added on the platform is taken out once an admin confirms (the guard counts it)", async () => {
    const scim = h.scim("acme");
    const c = await scim.createUser("emb.c.j@example.com", { externalId: "emb-c-j" });
    const g = await scim.createGroup("Embed J1", [c.id]);
    await h.waitForIdle();
    const gid = await platformIdOf("acme", "groups", g.id);
    await platform("POST", `/api/v1/embed-tenants/acme/groups/${gid}/users`, {
      users: [{ externalId: "intruder-j" }],
    });
    const dry = await reconcile("acme", true);
    expect(dry.counts).toEqual({ ...ZERO, membership: 1, orphans: 1 });
    const held = await reconcile("acme", false);
    expect(held.state).toBe("awaiting-confirmation");
    expect(held.guard).toMatchObject({ plannedDeprovisions: dry.guard?.plannedDeprovisions, tripped: true });
    expect(tenantMembers(gid)).toEqual(["emb-c-j", "intruder-j"]);
    expect((await h.admin().post(`/reconcile-runs/${held.runId}/confirm`)).status).toBe(202);
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${held.runId}`)).body.state === "succeeded",
      {
        what: "the confirmed run",
      },
    );
    await h.waitForIdle();
    expect(tenantMembers(gid)).toEqual(["emb-c-j"]);
    expect((await reconcile("acme", true)).counts).toEqual({ ...ZERO, orphans: 1 });
  });

  it("an embed group renamed on the platform is put back", async () => {
    const scim = h.scim("acme");
    const d = await scim.createUser("emb.d.j@example.com", { externalId: "emb-d-j" });
    const g = await scim.createGroup("Embed J2", [d.id]);
    await h.waitForIdle();
    const gid = await platformIdOf("acme", "groups", g.id);
    await platform("PATCH", `/api/v1/embed-tenants/acme/groups/${gid}`, { name: "Renamed J2" });
    await expectRepairedOnce("acme", { changed: 1 }, { orphans: 1 });
  });
});
