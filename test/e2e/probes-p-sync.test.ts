/**
 * Probes-p (sync pipeline): sequences an identity-provider admin and a platform operator meet,
 * judged on the platform (the emulator) once the bridge is idle, against ARCHITECTURE.md
 * ("Invariants", "Mapping onto the platform") and docs/operations.md. Each case runs a sequence
 * with a fault that makes the platform slow or failing at the moment that matters, then asserts the
 * end state: nobody wrongly locked out or left in, no lost update, failures visible.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  MANUAL_RECONCILE,
  PLATFORM_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  harnessSync,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Letter {
  ref: { source: string; kind: string; id: string };
  code: string;
  reason: string;
  operation?: string;
}

type PlatformGroup = { id: string; displayName: string; members: string[] };

function tools(get: () => TestBridge) {
  const h = () => get();
  return {
    users: () => h().platformUsers(),
    groups: (): Map<string, PlatformGroup> =>
      new Map((h().emulator.state().groups as PlatformGroup[]).map((g) => [g.displayName.toLowerCase(), g])),
    letters: async (): Promise<Letter[]> => (await h().admin().get("/dead-letters")).body.items as Letter[],
    status: async () => (await h().admin().get("/status")).body,
    entity: async (source: string, kind: "users" | "groups", id: string) =>
      h().admin().get(`/sources/${source}/${kind}/${id}`),
    platformId: async (source: string, kind: "users" | "groups", id: string): Promise<string> => {
      const res = await h().admin().get(`/sources/${source}/${kind}/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.platformId as string;
    },
    /** A write on the platform behind the bridge's back (the platform's own API and token). */
    platform: async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${h().platformUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${PLATFORM_TOKEN}`,
          "Content-Type": path.startsWith("/api/scim") ? "application/scim+json" : "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status, `${method} ${path}: ${res.status}`).toBeLessThan(300);
      return res;
    },
    reconcile: async (source: string, dryRun = false) => {
      const res = await h().admin().post(`/sources/${source}/reconcile`, { dryRun });
      expect(res.status).toBe(202);
      return waitFor(
        async () => {
          const run = (await h().admin().get(`/reconcile-runs/${res.body.runId}`)).body;
          return ["queued", "running"].includes(run.state) ? null : run;
        },
        { what: "the run to settle", timeoutMs: 40_000 },
      );
    },
    resync: async (source: string, body: unknown = {}) => {
      const res = await h().admin().post(`/sources/${source}/resync`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.id as string;
    },
    resyncSettled: async (id: string) =>
      waitFor(
        async () => {
          const r = (await h().admin().get(`/resyncs/${id}`)).body;
          return ["queued", "running"].includes(r.state) ? null : r;
        },
        { what: "the resync to settle", timeoutMs: 40_000 },
      ),
  };
}

/** The end of each bridge's cases: a dry reconciliation of each source finds no drift, and a whole resync writes nothing. */
async function expectSettled(h: TestBridge, t: ReturnType<typeof tools>, sources: string[]): Promise<void> {
  await h.waitForIdle(30_000);
  for (const source of sources) {
    const dry = await t.reconcile(source, true);
    expect(dry.state).toBe("succeeded");
    const { orphans: _o, ...drift } = dry.counts as Record<string, number>;
    expect(drift, `${source}: ${JSON.stringify(dry.samples)}`).toEqual({
      missing: 0,
      changed: 0,
      activeMismatch: 0,
      membership: 0,
      attributeValues: 0,
      deletedBehind: 0,
    });
  }
  const before = h.emulator.counters().writes;
  for (const source of sources) {
    const r = await t.resyncSettled(await t.resync(source, {}));
    expect(r.state, JSON.stringify(r)).toBe("succeeded");
  }
  await h.waitForIdle(30_000);
  const writes = h.emulator
    .requests()
    .filter((r) => r.method !== "GET")
    .slice(-20)
    .map((r) => `${r.method} ${r.path}`);
  expect(h.emulator.counters().writes - before, writes.join("\n")).toBe(0);
}

describe("probes-p: the sync pipeline under faults", () => {
  let h: TestBridge;
  const t = tools(() => h);

  beforeAll(async () => {
    h = await startTestBridge("probes-p-sync", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          onDelete: "deactivate",
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
        entra: { tokens: ["entra-token"], onDelete: "delete" },
        acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
      },
      config: { sync: harnessSync(), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(async () => {
    h.emulator.clearFaults();
    // Leave no dead letter behind for the next case (discard whatever a case left).
    for (const l of await t.letters()) {
      await h.admin().delete(`/dead-letters/${l.ref.source}/${l.ref.kind}/${l.ref.id}`);
    }
    await h.waitForIdle(30_000).catch(() => undefined);
  });

  it("a userName changed twice while the first PATCH is slow: the platform ends with the last name, one user", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.rename.a@example.com", { displayName: "Rename A" });
    await h.waitForIdle();
    const pid = t.users().get("p.rename.a@example.com")?.id as string;
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "patchUser" } }]);
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "userName", value: "p.rename.b@example.com" }]))
        .status,
    ).toBe(200);
    await sleep(300);
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "userName", value: "p.rename.c@example.com" }]))
        .status,
    ).toBe(200);
    await h.waitForIdle();
    const users = t.users();
    expect(users.has("p.rename.a@example.com")).toBe(false);
    expect(users.has("p.rename.b@example.com")).toBe(false);
    expect(users.get("p.rename.c@example.com")?.id).toBe(pid);
    expect(users.get("p.rename.c@example.com")?.active).toBe(true);
    expect(await t.letters()).toEqual([]);
    const st = await t.entity("okta", "users", u.id);
    expect(st.body).toMatchObject({ state: "synced", platformId: pid });
  }, 40_000);

  it("onDelete deactivate: a user taken out of a group and deleted at once, under a 503 burst, ends inactive and out of the group", async () => {
    const scim = h.scim("okta");
    const gone = await scim.createUser("p.burst.gone@example.com");
    const stay = await scim.createUser("p.burst.stay@example.com");
    const group = await scim.createGroup("P Burst Okta", [gone.id, stay.id]);
    await h.waitForIdle();
    const gonePid = t.users().get("p.burst.gone@example.com")?.id as string;
    const stayPid = t.users().get("p.burst.stay@example.com")?.id as string;
    expect(t.groups().get("p burst okta")?.members.sort()).toEqual([gonePid, stayPid].sort());
    h.emulator.setFaults([{ type: "error", status: 503, count: 12 }]);
    expect(
      (await scim.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${gone.id}"]` }])).status,
    ).toBeLessThan(300);
    expect((await scim.deleteUser(gone.id)).status).toBe(204);
    await h.waitForIdle(40_000);
    const users = t.users();
    expect(users.get("p.burst.gone@example.com")?.active, "deleted at the source: deactivated").toBe(false);
    expect(users.get("p.burst.stay@example.com")?.active).toBe(true);
    expect(t.groups().get("p burst okta")?.members).toEqual([stayPid]);
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("okta", "users", gone.id)).status).toBe(404);
  }, 60_000);

  it("onDelete delete: a user taken out of a group and deleted at once, under a 503 burst, is gone and out of the group", async () => {
    const scim = h.scim("entra");
    const gone = await scim.createUser("p.burst2.gone@example.com");
    const stay = await scim.createUser("p.burst2.stay@example.com");
    const group = await scim.createGroup("P Burst Entra", [gone.id, stay.id]);
    await h.waitForIdle();
    const stayPid = t.users().get("p.burst2.stay@example.com")?.id as string;
    h.emulator.setFaults([{ type: "error", status: 503, count: 12 }]);
    expect(
      (await scim.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${gone.id}"]` }])).status,
    ).toBeLessThan(300);
    expect((await scim.deleteUser(gone.id)).status).toBe(204);
    await h.waitForIdle(40_000);
    expect(t.users().has("p.burst2.gone@example.com")).toBe(false);
    expect(t.groups().get("p burst entra")?.members).toEqual([stayPid]);
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("a group renamed to the name a group deleted a moment ago had (its delete slow): one group of that name, the renamed one's members", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("p.reuse.a@example.com");
    const b = await scim.createUser("p.reuse.b@example.com");
    const sales = await scim.createGroup("P Sales", [a.id]);
    const eng = await scim.createGroup("P Eng", [b.id]);
    await h.waitForIdle();
    const bPid = t.users().get("p.reuse.b@example.com")?.id as string;
    const engPid = t.groups().get("p eng")?.id as string;
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "deleteGroup" } }]);
    expect((await scim.deleteGroup(sales.id)).status).toBe(204);
    await sleep(200);
    expect(
      (await scim.patchGroup(eng.id, [{ op: "replace", path: "displayName", value: "P Sales" }])).status,
    ).toBeLessThan(300);
    await h.waitForIdle(40_000);
    const groups = t.groups();
    expect(groups.has("p eng")).toBe(false);
    expect(groups.get("p sales")?.id).toBe(engPid);
    expect(groups.get("p sales")?.members).toEqual([bPid]);
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("okta", "groups", eng.id)).body).toMatchObject({
      state: "synced",
      platformId: engPid,
    });
  }, 60_000);

  it("onDelete delete: a user deleted at the source while its create is still slow on the platform is not left on the platform", async () => {
    const scim = h.scim("entra");
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "createUser" } }]);
    const u = await scim.createUser("p.slowcreate.del@example.com");
    // The emulator logs a request when it is answered: give the sync time to send the slow create.
    await sleep(400);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle(40_000);
    expect(t.users().has("p.slowcreate.del@example.com"), "a deleted user is not left on the platform").toBe(
      false,
    );
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("entra", "users", u.id)).status).toBe(404);
  }, 60_000);

  it("onDelete deactivate: a user deleted while its create is still slow is not left active (inactive, or never created)", async () => {
    const scim = h.scim("okta");
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "createUser" } }]);
    const u = await scim.createUser("p.slowcreate.deact@example.com");
    // The emulator logs a request when it is answered: give the sync time to send the slow create.
    await sleep(400);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle(40_000);
    const left = t.users().get("p.slowcreate.deact@example.com");
    expect(left?.active ?? false, "a user deleted at the source is not left active").toBe(false);
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("a group with a member whose platform create is refused for good: the others land, the letter names the member, its retry adds it", async () => {
    const scim = h.scim("okta");
    h.emulator.setFaults([{ type: "error", status: 400, count: 1, match: { operation: "createUser" } }]);
    const bad = await scim.createUser("p.refused.member@example.com");
    await waitFor(async () => (await t.letters()).some((l) => l.ref.id === bad.id), {
      what: "the refused user's dead letter",
    });
    h.emulator.clearFaults();
    const ok1 = await scim.createUser("p.refused.ok1@example.com");
    const ok2 = await scim.createUser("p.refused.ok2@example.com");
    const group = await scim.createGroup("P Refused Member", [bad.id, ok1.id, ok2.id]);
    await h.waitForIdle();
    const pid1 = t.users().get("p.refused.ok1@example.com")?.id as string;
    const pid2 = t.users().get("p.refused.ok2@example.com")?.id as string;
    expect(t.users().has("p.refused.member@example.com")).toBe(false);
    expect(t.groups().get("p refused member")?.members.sort()).toEqual([pid1, pid2].sort());
    const letters = await t.letters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      ref: { source: "okta", kind: "user", id: bad.id },
      code: "platform_bad_request",
    });
    expect((await t.entity("okta", "users", bad.id)).body).toMatchObject({ state: "dead" });
    const status = await t.status();
    expect(status).toMatchObject({ idle: true, deadLetters: 1 });
    // Fixed on the platform: the retry creates the user, and the group takes it in.
    const retried = await h.admin().post(`/dead-letters/okta/user/${bad.id}/retry`);
    expect(retried.status).toBeLessThan(300);
    await h.waitForIdle();
    const badPid = t.users().get("p.refused.member@example.com")?.id as string;
    expect(badPid).toBeTruthy();
    expect(t.groups().get("p refused member")?.members.sort()).toEqual([badPid, pid1, pid2].sort());
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("okta", "groups", group.id)).body).toMatchObject({ state: "synced" });
  }, 60_000);

  it("an admin's resync of one user while its sync runs, and a change meanwhile: the last change stands", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.resync.running@example.com", { displayName: "Start" });
    await h.waitForIdle();
    const pid = t.users().get("p.resync.running@example.com")?.id as string;
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 2, match: { operation: "patchUser" } }]);
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "First" }])).status,
    ).toBe(200);
    await sleep(200);
    const op = await t.resync("okta", { users: [u.id] });
    await sleep(200);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "Last" }])).status).toBe(
      200,
    );
    const done = await t.resyncSettled(op);
    expect(done.state).toBe("succeeded");
    await h.waitForIdle();
    expect(t.users().get("p.resync.running@example.com")).toMatchObject({
      id: pid,
      displayName: "Last",
      active: true,
    });
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("a rename's dead letter goes once a later change at the source syncs the user", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.letter.later@example.com", { displayName: "L0" });
    await h.waitForIdle();
    h.emulator.setFaults([{ type: "error", status: 403, count: 1, match: { operation: "patchUser" } }]);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "L1" }])).status).toBe(
      200,
    );
    await waitFor(async () => (await t.letters()).some((l) => l.ref.id === u.id), { what: "the letter" });
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("dead");
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "L2" }])).status).toBe(
      200,
    );
    await h.waitForIdle();
    expect(t.users().get("p.letter.later@example.com")?.displayName).toBe("L2");
    expect(await t.letters(), "docs/operations.md: letters go when their entity syncs again").toEqual([]);
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("synced");
    const metrics = (await h.http.get("/metrics")).text;
    const gauge = metrics
      .split("\n")
      .find((l) => l.startsWith("dead_letters{") && l.includes('source="okta"'));
    expect(gauge?.split(" ").pop()).toBe("0");
  }, 60_000);

  it("reconcile: a userName changed on the platform behind the bridge's back is put back", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.behind.name@example.com", { displayName: "Behind" });
    await h.waitForIdle();
    const pid = await t.platformId("okta", "users", u.id);
    await t.platform("PATCH", `/api/scim/v2/Users/${pid}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "userName", value: "p.someone.else@example.com" }],
    });
    const dry = await t.reconcile("okta", true);
    expect(dry.counts.changed).toBeGreaterThanOrEqual(1);
    const run = await t.reconcile("okta", false);
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    await h.waitForIdle();
    expect(t.users().get("p.behind.name@example.com")?.id).toBe(pid);
    expect(t.users().has("p.someone.else@example.com")).toBe(false);
  }, 60_000);

  it("reconcile: an orphan and another source's user added to an owned group on the platform are taken out, and left alone otherwise", async () => {
    const scim = h.scim("okta");
    const m = await scim.createUser("p.extra.member@example.com");
    const group = await scim.createGroup("P Extra Members", [m.id]);
    const other = await h.scim("entra").createUser("p.extra.entra@example.com", { displayName: "Entra Own" });
    await h.waitForIdle();
    const gPid = await t.platformId("okta", "groups", group.id);
    const mPid = await t.platformId("okta", "users", m.id);
    const otherPid = await t.platformId("entra", "users", other.id);
    const orphanPid = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "p.extra.orphan@example.com", active: true },
    }) as string;
    await t.platform("PATCH", `/api/scim/v2/Groups/${gPid}`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: orphanPid }, { value: otherPid }] }],
    });
    const run = await t.reconcile("okta", false);
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    expect(run.counts.membership).toBeGreaterThanOrEqual(1);
    await h.waitForIdle();
    expect(t.groups().get("p extra members")?.members).toEqual([mPid]);
    const users = t.users();
    expect(users.get("p.extra.orphan@example.com")?.active).toBe(true);
    expect(users.get("p.extra.entra@example.com")).toMatchObject({
      id: otherPid,
      active: true,
      displayName: "Entra Own",
    });
  }, 60_000);

  it("reconcile: a user deactivated at the source and activated again on the platform is deactivated again", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.reactivated.behind@example.com");
    await h.waitForIdle();
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    const pid = await t.platformId("okta", "users", u.id);
    expect(t.users().get("p.reactivated.behind@example.com")?.active).toBe(false);
    h.emulator.drift({ action: "setUserActive", userId: pid, active: true });
    const run = await t.reconcile("okta", false);
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    expect(run.counts.activeMismatch).toBeGreaterThanOrEqual(1);
    await h.waitForIdle();
    expect(t.users().get("p.reactivated.behind@example.com")?.active, "nobody left in").toBe(false);
  }, 60_000);

  it("a user moved from one group to another while the first group's PATCH is slow ends in the second only", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.mover@example.com");
    const keep = await scim.createUser("p.mover.keep@example.com");
    const from = await scim.createGroup("P Move From", [u.id, keep.id]);
    const to = await scim.createGroup("P Move To", [keep.id]);
    await h.waitForIdle();
    const uPid = t.users().get("p.mover@example.com")?.id as string;
    const kPid = t.users().get("p.mover.keep@example.com")?.id as string;
    const fromPid = t.groups().get("p move from")?.id as string;
    h.emulator.setFaults([
      {
        type: "slow",
        delayMs: 1_500,
        count: 1,
        match: { method: "PATCH", path: `/api/scim/v2/Groups/${fromPid}` },
      },
    ]);
    expect(
      (await scim.patchGroup(from.id, [{ op: "remove", path: `members[value eq "${u.id}"]` }])).status,
    ).toBeLessThan(300);
    expect(
      (await scim.patchGroup(to.id, [{ op: "add", path: "members", value: [{ value: u.id }] }])).status,
    ).toBeLessThan(300);
    await sleep(300);
    // And back again, then out: the source's last word is "in To only".
    expect(
      (await scim.patchGroup(from.id, [{ op: "add", path: "members", value: [{ value: u.id }] }])).status,
    ).toBeLessThan(300);
    expect(
      (await scim.patchGroup(from.id, [{ op: "remove", path: `members[value eq "${u.id}"]` }])).status,
    ).toBeLessThan(300);
    await h.waitForIdle();
    expect(t.groups().get("p move from")?.members).toEqual([kPid]);
    expect(t.groups().get("p move to")?.members.sort()).toEqual([kPid, uPid].sort());
  }, 60_000);

  it("a group deleted at the source while its create is slow on the platform is not left on the platform", async () => {
    const scim = h.scim("okta");
    const m = await scim.createUser("p.slowgroup.m@example.com");
    await h.waitForIdle();
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "createGroup" } }]);
    const g = await scim.createGroup("P Slow Group Gone", [m.id]);
    await sleep(400); // the slow create is on the wire (the emulator logs it only once answered)
    expect((await scim.deleteGroup(g.id)).status).toBe(204);
    await h.waitForIdle(40_000);
    expect(t.groups().has("p slow group gone")).toBe(false);
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("an attribute value changed twice while the first write is slow, then cleared: the platform holds no stale value", async () => {
    const scim = h.scim("okta");
    const withDept = (d: string) => ({ schemas: [USER_SCHEMA, ENT], [ENT]: { department: d } });
    const u = await scim.createUser("p.attr@example.com", withDept("D0"));
    await h.waitForIdle();
    const pid = t.users().get("p.attr@example.com")?.id as string;
    const value = () =>
      h.emulator
        .state()
        .attributeValues.find(
          (v: { userId: string; name: string }) => v.userId === pid && v.name === "department",
        )?.value;
    expect(value()).toBe("D0");
    h.emulator.setFaults([
      { type: "slow", delayMs: 1_500, count: 1, match: { operation: "upsertUserAttributeValue" } },
    ]);
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "D1" }])).status,
    ).toBe(200);
    await sleep(300);
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "D2" }])).status,
    ).toBe(200);
    await h.waitForIdle();
    expect(value()).toBe("D2");
    expect((await scim.patchUser(u.id, [{ op: "remove", path: `${ENT}:department` }])).status).toBe(200);
    await h.waitForIdle();
    expect(value() ?? null).toBeNull();
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("embed: a user deactivated leaves every group of the tenant, reactivated comes back, under 503s on member calls", async () => {
    const scim = h.scim("acme");
    const u = await scim.createUser("p.embed.u@example.com", { externalId: "p-embed-u" });
    const o = await scim.createUser("p.embed.o@example.com", { externalId: "p-embed-o" });
    await scim.createGroup("P Embed One", [u.id, o.id]);
    await scim.createGroup("P Embed Two", [u.id]);
    await h.waitForIdle();
    const members = () => {
      const tenant = h.emulator.state().embedTenants.find((x: { name: string }) => x.name === "acme");
      return new Map(
        (tenant?.groups ?? []).map((g: { name: string; members: string[] }) => [
          g.name,
          [...g.members].sort(),
        ]),
      );
    };
    expect(members().get("P Embed One")).toEqual(["p-embed-o", "p-embed-u"]);
    expect(members().get("P Embed Two")).toEqual(["p-embed-u"]);
    h.emulator.setFaults([
      { type: "error", status: 503, count: 3, match: { operation: "removeEmbedGroupMembers" } },
      { type: "error", status: 503, count: 3, match: { operation: "addEmbedGroupMembers" } },
    ]);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle(40_000);
    expect(members().get("P Embed One")).toEqual(["p-embed-o"]);
    expect(members().get("P Embed Two") ?? []).toEqual([]);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await h.waitForIdle(40_000);
    expect(members().get("P Embed One")).toEqual(["p-embed-o", "p-embed-u"]);
    expect(members().get("P Embed Two")).toEqual(["p-embed-u"]);
    expect(t.users().has("p.embed.u@example.com"), "embed users never become workspace users").toBe(false);
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("a user deleted and created again with its userName while the bulk deactivation is slow ends active, once", async () => {
    const scim = h.scim("okta");
    const first = await scim.createUser("p.recreate@example.com", { displayName: "First" });
    await h.waitForIdle();
    const pid = t.users().get("p.recreate@example.com")?.id as string;
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "bulkUsers" } }]);
    expect((await scim.deleteUser(first.id)).status).toBe(204);
    await sleep(400); // the slow bulk DEACTIVATE is on the wire (logged only once answered)
    const second = await scim.createUser("p.recreate@example.com", { displayName: "Second" });
    await h.waitForIdle(40_000);
    const all = [...t.users().values()].filter((x) => x.userName.toLowerCase() === "p.recreate@example.com");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: pid, active: true, displayName: "Second" });
    expect((await t.entity("okta", "users", second.id)).body).toMatchObject({
      state: "synced",
      platformId: pid,
    });
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("per-user status follows the user: pending then synced with its platform id; 404 and no userName hit once deleted", async () => {
    const scim = h.scim("okta");
    h.emulator.setFaults([{ type: "slow", delayMs: 800, count: 1, match: { operation: "createUser" } }]);
    const u = await scim.createUser("p.status@example.com");
    const early = await t.entity("okta", "users", u.id);
    expect(early.status).toBe(200);
    expect(["pending", "retrying", "synced"]).toContain(early.body.state);
    await h.waitForIdle();
    const pid = t.users().get("p.status@example.com")?.id;
    expect((await t.entity("okta", "users", u.id)).body).toMatchObject({ state: "synced", platformId: pid });
    const byName = await h.admin().get("/sources/okta/users?userName=p.status@example.com");
    expect(byName.body.items).toHaveLength(1);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect((await t.entity("okta", "users", u.id)).status).toBe(404);
    expect((await h.admin().get("/sources/okta/users?userName=p.status@example.com")).body.items).toEqual([]);
    expect(t.users().get("p.status@example.com")?.active).toBe(false);
  }, 60_000);
  it("after all of the above: a dry reconciliation finds no drift and a whole resync writes nothing", async () => {
    await expectSettled(h, t, ["okta", "entra", "acme"]);
  }, 90_000);
});

describe("probes-p: changes inside one lifecycle batch window", () => {
  let h: TestBridge;
  const t = tools(() => h);
  beforeAll(async () => {
    h = await startTestBridge("probes-p-batch", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { sync: harnessSync({ lifecycleBatchWindowMs: 1_500 }), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("deactivated then reactivated inside the window: active on the platform, synced", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.flip.on@example.com");
    await h.waitForIdle();
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await sleep(200);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await h.waitForIdle();
    expect(t.users().get("p.flip.on@example.com")?.active).toBe(true);
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("synced");
  }, 40_000);

  it("reactivated then deactivated again inside the window: inactive on the platform", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.flip.off@example.com", { active: false });
    await h.waitForIdle();
    expect(t.users().get("p.flip.off@example.com")?.active ?? false).toBe(false);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await sleep(200);
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    expect(t.users().get("p.flip.off@example.com")?.active ?? false).toBe(false);
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("synced");
  }, 40_000);

  it("deactivated, deleted and created again inside the window (onDelete deactivate): one active user", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.flip.recreate@example.com");
    await h.waitForIdle();
    const pid = t.users().get("p.flip.recreate@example.com")?.id;
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    const again = await scim.createUser("p.flip.recreate@example.com");
    await h.waitForIdle();
    const all = [...t.users().values()].filter(
      (x) => x.userName.toLowerCase() === "p.flip.recreate@example.com",
    );
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: pid, active: true });
    expect((await t.entity("okta", "users", again.id)).body).toMatchObject({
      state: "synced",
      platformId: pid,
    });
  }, 40_000);
  it("an admin's resync of a user deleted a moment ago (its deactivation still in the batch) does not undo the deprovisioning", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.batch.resync@example.com");
    const other = await scim.createUser("p.batch.other@example.com");
    await h.waitForIdle();
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    expect((await scim.patchUser(other.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    const named = await h.admin().post("/sources/okta/resync", { users: [u.id, other.id] });
    expect(named.status).toBe(202);
    const whole = await h.admin().post("/sources/okta/resync", {});
    expect(whole.status).toBe(202);
    for (const id of [named.body.id, whole.body.id]) {
      const r = await t.resyncSettled(id);
      expect(["succeeded"], JSON.stringify(r)).toContain(r.state);
    }
    await h.waitForIdle();
    expect(t.users().get("p.batch.resync@example.com")?.active, "deleted at the source: deactivated").toBe(
      false,
    );
    expect(t.users().get("p.batch.other@example.com")?.active).toBe(false);
    expect(await t.letters()).toEqual([]);
  }, 40_000);

  it("/metrics names every queue in queue_jobs and counts the lifecycle flushes", async () => {
    const text = (await h.http.get("/metrics")).text;
    for (const q of ["sync", "lifecycle", "reconcile", "resync", "reconcile-schedule"]) {
      expect(text, q).toMatch(new RegExp(`queue_jobs\\{[^}]*queue="${q}"`));
    }
    expect(text).toMatch(/jobs_total\{[^}]*queue="lifecycle"[^}]*outcome="completed"/);
    expect(text).toMatch(/sync_jobs_total\{[^}]*kind="user"/);
  }, 20_000);
});

describe("probes-p: the deprovisioning guard", () => {
  let h: TestBridge;
  const t = tools(() => h);
  beforeAll(async () => {
    h = await startTestBridge("probes-p-guard", {
      sources: { hr: { tokens: ["hr-token"] }, idp: { tokens: ["idp-token"], onDelete: "delete" } },
      config: { sync: harnessSync(), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("6 of 10 users reactivated on the platform: reconcile and resync are held, visible in /status, nothing applied until confirmed", async () => {
    const scim = h.scim("hr");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await scim.createUser(`p.guard.${i}@example.com`)).id);
    await h.waitForIdle();
    for (let i = 0; i < 6; i++) {
      expect((await scim.patchUser(ids[i]!, [{ op: "replace", path: "active", value: false }])).status).toBe(
        200,
      );
    }
    await h.waitForIdle();
    for (let i = 0; i < 6; i++) {
      const pid = t.users().get(`p.guard.${i}@example.com`)?.id as string;
      expect(t.users().get(`p.guard.${i}@example.com`)?.active).toBe(false);
      h.emulator.drift({ action: "setUserActive", userId: pid, active: true });
    }
    const writesBefore = h.emulator.counters().writes;
    const run = await t.reconcile("hr", false);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 6, ownedUsers: 10 });
    const status = await t.status();
    expect(status.idle).toBe(true);
    expect(status.awaitingConfirmation).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: expect.any(String),
          id: run.runId,
          source: "hr",
          plannedDeprovisions: 6,
          ownedUsers: 10,
        }),
      ]),
    );
    // A whole-source resync meets the same guard.
    const op = await t.resync("hr", {});
    const held = await t.resyncSettled(op);
    expect(held.state).toBe("awaiting-confirmation");
    expect(held.guard).toMatchObject({ plannedDeprovisions: 6, ownedUsers: 10 });
    await h.waitForIdle();
    expect(h.emulator.counters().writes, "nothing applied while held").toBe(writesBefore);
    for (let i = 0; i < 6; i++) expect(t.users().get(`p.guard.${i}@example.com`)?.active).toBe(true);
    // Discard the resync, confirm the run: the six are deactivated, the four others untouched.
    expect((await h.admin().post(`/resyncs/${op}/discard`)).status).toBeLessThan(300);
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/confirm`)).status).toBeLessThan(300);
    const settled = await waitFor(
      async () => {
        const r = (await h.admin().get(`/reconcile-runs/${run.runId}`)).body;
        return ["succeeded", "failed"].includes(r.state) ? r : null;
      },
      { what: "the confirmed run to finish", timeoutMs: 30_000 },
    );
    expect(settled.state).toBe("succeeded");
    await h.waitForIdle();
    for (let i = 0; i < 10; i++) expect(t.users().get(`p.guard.${i}@example.com`)?.active).toBe(i >= 6);
    expect((await t.status()).awaitingConfirmation ?? []).toEqual([]);
  }, 90_000);

  it("an identity provider that deletes 8 of 10 users in a moment is obeyed (its own deletions are not guarded), under 503s", async () => {
    const scim = h.scim("idp");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await scim.createUser(`p.mass.${i}@example.com`)).id);
    await h.waitForIdle();
    h.emulator.setFaults([{ type: "error", status: 503, count: 4, match: { operation: "bulkUsers" } }]);
    for (let i = 0; i < 8; i++) expect((await scim.deleteUser(ids[i]!)).status).toBe(204);
    await h.waitForIdle(40_000);
    h.emulator.clearFaults();
    for (let i = 0; i < 10; i++) expect(t.users().has(`p.mass.${i}@example.com`)).toBe(i >= 8);
    expect((await t.letters()).filter((l) => l.ref.source === "idp")).toEqual([]);
    // And a reconciliation afterwards finds nothing to deprovision: the source is small, not wrong.
    const run = await t.reconcile("idp", true);
    expect(run.state).toBe("succeeded");
    expect(run.guard?.plannedDeprovisions ?? 0).toBe(0);
  }, 60_000);
});

describe("probes-p: refusals, gone objects and access windows", () => {
  let h: TestBridge;
  const t = tools(() => h);
  beforeAll(async () => {
    h = await startTestBridge("probes-p-more", {
      sources: {
        okta: { tokens: ["okta-token"], onDelete: "deactivate" },
        entra: { tokens: ["entra-token"], onDelete: "delete" },
      },
      config: { sync: harnessSync(), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(async () => {
    h.emulator.clearFaults();
    for (const l of await t.letters()) {
      await h.admin().delete(`/dead-letters/${l.ref.source}/${l.ref.kind}/${l.ref.id}`);
    }
    await h.waitForIdle(30_000).catch(() => undefined);
  });

  it("a user created inactive is never active on the platform, not even for a moment", async () => {
    const scim = h.scim("okta");
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, match: { operation: "bulkUsers" } }]);
    let seenActive = false;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        if (t.users().get("p.born.inactive@example.com")?.active === true) seenActive = true;
        await sleep(5);
      }
    })();
    await scim.createUser("p.born.inactive@example.com", { active: false });
    await h.waitForIdle();
    polling = false;
    await poll;
    expect(t.users().get("p.born.inactive@example.com")?.active ?? false).toBe(false);
    expect(seenActive, "a user the source has inactive got access on the platform").toBe(false);
  }, 40_000);

  it("a user whose create was refused for good, then deleted at the source: its letter goes, nothing on the platform", async () => {
    const scim = h.scim("okta");
    h.emulator.setFaults([{ type: "error", status: 400, count: 1, match: { operation: "createUser" } }]);
    const u = await scim.createUser("p.refused.then.deleted@example.com");
    await waitFor(async () => (await t.letters()).some((l) => l.ref.id === u.id), { what: "the letter" });
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(t.users().has("p.refused.then.deleted@example.com")).toBe(false);
    expect(await t.letters(), "a letter of a user the source deleted and the platform never had").toEqual([]);
    expect((await t.status()).deadLetters).toBe(0);
  }, 40_000);

  it("a deactivation refused per user in the bulk call is a visible letter; reactivation at the source settles it", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.bulk.refused@example.com");
    await h.waitForIdle();
    const pid = t.users().get("p.bulk.refused@example.com")?.id as string;
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await waitFor(async () => (await t.letters()).some((l) => l.ref.id === u.id), {
      what: "the letter",
      timeoutMs: 20_000,
    });
    expect(t.users().get("p.bulk.refused@example.com")?.active).toBe(true);
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("dead");
    // The IdP turns the user on again: what the source wants is what the platform has.
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await h.waitForIdle();
    expect(t.users().get("p.bulk.refused@example.com")?.active).toBe(true);
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("okta", "users", u.id)).body.state).toBe("synced");
  }, 40_000);

  it("a user inactive at the source and deleted on the platform is created again inactive by a reconciliation", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.gone.inactive@example.com");
    await h.waitForIdle();
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    const pid = await t.platformId("okta", "users", u.id);
    await t.platform("DELETE", `/api/scim/v2/Users/${pid}`);
    let seenActive = false;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        if (t.users().get("p.gone.inactive@example.com")?.active === true) seenActive = true;
        await sleep(5);
      }
    })();
    const run = await t.reconcile("okta", false);
    await h.waitForIdle();
    polling = false;
    await poll;
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    const back = t.users().get("p.gone.inactive@example.com");
    expect(back, "the directory is the truth: the user exists again").toBeDefined();
    expect(back?.active).toBe(false);
    expect(seenActive, "recreated active for a moment: access to a deactivated person").toBe(false);
  }, 60_000);

  it("onDelete delete: a user already deleted on the platform, then deleted at the source: no dead letter, forgotten", async () => {
    const scim = h.scim("entra");
    const u = await scim.createUser("p.gone.twice@example.com");
    await h.waitForIdle();
    const pid = await t.platformId("entra", "users", u.id);
    await t.platform("DELETE", `/api/scim/v2/Users/${pid}`);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(t.users().has("p.gone.twice@example.com")).toBe(false);
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("entra", "users", u.id)).status).toBe(404);
  }, 40_000);

  it("onDelete deactivate: a user already deleted on the platform, then deleted at the source: no dead letter, not created again", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.gone.deact@example.com");
    await h.waitForIdle();
    const pid = await t.platformId("okta", "users", u.id);
    await t.platform("DELETE", `/api/scim/v2/Users/${pid}`);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(t.users().get("p.gone.deact@example.com")?.active ?? false).toBe(false);
    expect(await t.letters()).toEqual([]);
    expect((await t.entity("okta", "users", u.id)).status).toBe(404);
  }, 40_000);

  it("a group deleted on the platform, then a member added at the source: the group is created again with every member", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("p.regroup.a@example.com");
    const b = await scim.createUser("p.regroup.b@example.com");
    const g = await scim.createGroup("P Regroup", [a.id]);
    await h.waitForIdle();
    const gPid = await t.platformId("okta", "groups", g.id);
    h.emulator.drift({ action: "deleteGroup", groupId: gPid });
    expect(
      (await scim.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: b.id }] }])).status,
    ).toBeLessThan(300);
    await h.waitForIdle();
    const aPid = t.users().get("p.regroup.a@example.com")?.id as string;
    const bPid = t.users().get("p.regroup.b@example.com")?.id as string;
    expect(t.groups().get("p regroup")?.members.sort()).toEqual([aPid, bPid].sort());
    expect(await t.letters()).toEqual([]);
  }, 40_000);

  it("a group renamed onto another source's group name while that group's delete is slow: after the next reconciliation it holds the name, no letter left", async () => {
    const okta = h.scim("okta");
    const entra = h.scim("entra");
    const m = await okta.createUser("p.cross.m@example.com");
    const mine = await okta.createGroup("P Cross Mine", [m.id]);
    const theirs = await entra.createGroup("P Cross Shared");
    await h.waitForIdle();
    const minePid = await t.platformId("okta", "groups", mine.id);
    h.emulator.setFaults([{ type: "slow", delayMs: 1_500, count: 1, match: { operation: "deleteGroup" } }]);
    expect((await entra.deleteGroup(theirs.id)).status).toBe(204);
    await sleep(100);
    expect(
      (await okta.patchGroup(mine.id, [{ op: "replace", path: "displayName", value: "P Cross Shared" }]))
        .status,
    ).toBeLessThan(300);
    await h.waitForIdle(40_000);
    // Whatever happened meanwhile, the next reconciliation brings the name over.
    const run = await t.reconcile("okta", false);
    expect(["succeeded", "failed"]).toContain(run.state);
    await h.waitForIdle(40_000);
    const groups = t.groups();
    expect(groups.has("p cross mine")).toBe(false);
    expect(groups.get("p cross shared")?.id).toBe(minePid);
    expect(await t.letters()).toEqual([]);
  }, 60_000);

  it("membership churn on a 60-member group under 30% 503s on group PATCHes ends exactly as the source says", async () => {
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await scim.createUser(`p.churn.${i}@example.com`)).id);
    const g = await scim.createGroup("P Churn", ids.slice(0, 30));
    await h.waitForIdle();
    h.emulator.setFaults([
      { type: "error", status: 503, probability: 0.3, match: { operation: "patchGroup" } },
    ]);
    const want = new Set(ids.slice(0, 30));
    for (let round = 0; round < 8; round++) {
      const add = ids.filter((_, i) => (i * 7 + round * 3) % 5 === 0 && !want.has(ids[i]!)).slice(0, 6);
      const remove = [...want].filter((_, i) => (i + round) % 4 === 0).slice(0, 5);
      const ops: unknown[] = [];
      if (add.length) ops.push({ op: "add", path: "members", value: add.map((value) => ({ value })) });
      for (const id of remove) ops.push({ op: "remove", path: `members[value eq "${id}"]` });
      expect((await scim.patchGroup(g.id, ops)).status).toBeLessThan(300);
      for (const id of add) want.add(id);
      for (const id of remove) want.delete(id);
      await sleep(80);
    }
    await h.waitForIdle(40_000);
    h.emulator.clearFaults();
    const users = t.users();
    const expected = [...want]
      .map((id) => ids.indexOf(id))
      .map((i) => users.get(`p.churn.${i}@example.com`)?.id)
      .sort();
    expect(t.groups().get("p churn")?.members.sort()).toEqual(expected);
    expect(await t.letters()).toEqual([]);
  }, 60_000);
  it("after all of the above: a dry reconciliation finds no drift and a whole resync writes nothing", async () => {
    await expectSettled(h, t, ["okta", "entra"]);
  }, 90_000);
});

describe("probes-p: adoption of platform users that were there first", () => {
  let h: TestBridge;
  const t = tools(() => h);
  beforeAll(async () => {
    h = await startTestBridge("probes-p-adopt", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { sync: harnessSync(), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("an inactive platform user of the same userName (other case) is adopted and activated for an active source user", async () => {
    const [pid] = h.emulator.seed({ users: [{ userName: "P.Adopt.Off@Example.com", active: false }] }).users;
    const u = await h.scim("okta").createUser("p.adopt.off@example.com", { displayName: "Adopted" });
    await h.waitForIdle();
    const all = [...t.users().values()].filter((x) => x.userName.toLowerCase() === "p.adopt.off@example.com");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: pid, active: true, displayName: "Adopted" });
    expect((await t.entity("okta", "users", u.id)).body).toMatchObject({ state: "synced", platformId: pid });
  }, 30_000);

  it("an active platform user adopted by a source user created inactive ends inactive", async () => {
    const [pid] = h.emulator.seed({ users: [{ userName: "p.adopt.on@example.com", active: true }] }).users;
    await h.scim("okta").createUser("p.adopt.on@example.com", { active: false });
    await h.waitForIdle();
    expect(t.users().get("p.adopt.on@example.com")).toMatchObject({ id: pid, active: false });
  }, 30_000);

  it("an adopted platform user put in a group it was already in on the platform is there once", async () => {
    const seeded = h.emulator.seed({
      users: [{ userName: "p.adopt.member@example.com", active: true }],
      groups: [{ displayName: "P Adopt Group", members: ["p.adopt.member@example.com"] }],
    });
    const u = await h.scim("okta").createUser("p.adopt.member@example.com");
    await h.scim("okta").createGroup("P Adopt Group", [u.id]);
    await h.waitForIdle();
    const g = t.groups().get("p adopt group");
    expect(g?.id).toBe(seeded.groups[0]);
    expect(g?.members).toEqual([seeded.users[0]]);
    expect(await t.letters()).toEqual([]);
  }, 30_000);
});

describe("probes-p: writes that land late (applied after the bridge gave up on them)", () => {
  let h: TestBridge;
  const t = tools(() => h);
  beforeAll(async () => {
    h = await startTestBridge("probes-p-late", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
        acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
      },
      platform: { timeoutMs: 300, maxRetries: 2 },
      config: { sync: harnessSync({ lateWriteCheckMs: 2_000 }), reconcile: MANUAL_RECONCILE },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(async () => {
    h.emulator.clearFaults();
    await h.waitForIdle(30_000).catch(() => undefined);
  });

  const since = () => {
    const log = h.emulator.requests();
    return log.length ? log[log.length - 1]!.seq : 0;
  };
  /** Holds the next call of `operation`; resolves once the bridge's retry of it was answered. */
  const holdNext = async (operation: string, act: () => Promise<unknown>) => {
    const from = since();
    h.emulator.addFault({ type: "late", delayMs: 1_200, count: 1, match: { operation } });
    await act();
    await waitFor(
      () =>
        h.emulator
          .requests()
          .some((r) => r.seq > from && r.operation === operation && !r.fault && r.status < 300),
      { what: `the retried ${operation} to be answered`, timeoutMs: 10_000 },
    );
    return from;
  };
  const landed = (operation: string, from: number) =>
    waitFor(
      () =>
        h.emulator.requests().some((r) => r.seq > from && r.operation === operation && r.fault === "late"),
      {
        what: `the held ${operation} to land`,
        timeoutMs: 10_000,
      },
    );

  it("a held userName rename landing after a later rename: the platform ends with the later name", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.late.a@example.com");
    await h.waitForIdle();
    const pid = t.users().get("p.late.a@example.com")?.id;
    const from = await holdNext("patchUser", () =>
      scim.patchUser(u.id, [{ op: "replace", path: "userName", value: "p.late.b@example.com" }]),
    );
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "userName", value: "p.late.c@example.com" }]))
        .status,
    ).toBe(200);
    await landed("patchUser", from);
    await h.waitForIdle(20_000);
    expect(t.users().get("p.late.c@example.com")?.id).toBe(pid);
    expect(t.users().has("p.late.b@example.com")).toBe(false);
  }, 40_000);

  it("a held attribute value landing after a later value: the platform ends with the later value", async () => {
    const scim = h.scim("okta");
    const withDept = (d: string) => ({ schemas: [USER_SCHEMA, ENT], [ENT]: { department: d } });
    const u = await scim.createUser("p.late.attr@example.com", withDept("D0"));
    await h.waitForIdle();
    const pid = t.users().get("p.late.attr@example.com")?.id as string;
    const value = () =>
      h.emulator
        .state()
        .attributeValues.find(
          (v: { userId: string; name: string }) => v.userId === pid && v.name === "department",
        )?.value;
    const from = await holdNext("upsertUserAttributeValue", () =>
      scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "D1" }]),
    );
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "D2" }])).status,
    ).toBe(200);
    await landed("upsertUserAttributeValue", from);
    await h.waitForIdle(20_000);
    expect(value()).toBe("D2");
  }, 40_000);

  it("a held bulk DEACTIVATE landing after the reactivation: the person is not locked out", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("p.late.lockout@example.com");
    await h.waitForIdle();
    const from = await holdNext("bulkUsers", () =>
      scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }]),
    );
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await landed("bulkUsers", from);
    await h.waitForIdle(20_000);
    expect(t.users().get("p.late.lockout@example.com")?.active).toBe(true);
  }, 40_000);

  it("a held member removal landing after the member was added back: the member stays", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("p.late.member@example.com");
    const g = await scim.createGroup("P Late Removal", [a.id]);
    await h.waitForIdle();
    const aPid = t.users().get("p.late.member@example.com")?.id;
    const from = await holdNext("patchGroup", () =>
      scim.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${a.id}"]` }]),
    );
    expect(
      (await scim.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: a.id }] }])).status,
    ).toBeLessThan(300);
    await landed("patchGroup", from);
    await h.waitForIdle(20_000);
    expect(t.groups().get("p late removal")?.members).toEqual([aPid]);
  }, 40_000);

  it("a held group rename landing after the rename back: the group keeps its name", async () => {
    const scim = h.scim("okta");
    const g = await scim.createGroup("P Late Name");
    await h.waitForIdle();
    const from = await holdNext("patchGroup", () =>
      scim.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "P Late Other" }]),
    );
    expect(
      (await scim.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "P Late Name" }])).status,
    ).toBeLessThan(300);
    await landed("patchGroup", from);
    await h.waitForIdle(20_000);
    expect(t.groups().has("p late other")).toBe(false);
    expect(t.groups().has("p late name")).toBe(true);
  }, 40_000);

  const embedMembers = (name: string) => {
    const tenant = h.emulator.state().embedTenants.find((x: { name: string }) => x.name === "acme");
    const g = tenant?.groups.find((x: { name: string }) => x.name === name) as
      | { members: string[] }
      | undefined;
    return g ? [...g.members].sort() : undefined;
  };

  it("embed: a held member add landing after the member's removal: the embed group ends without it", async () => {
    const scim = h.scim("acme");
    const u = await scim.createUser("p.late.embed@example.com", { externalId: "p-late-embed" });
    const g = await scim.createGroup("P Late Embed");
    await h.waitForIdle();
    const from = await holdNext("addEmbedGroupMembers", () =>
      scim.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: u.id }] }]),
    );
    expect(
      (await scim.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${u.id}"]` }])).status,
    ).toBeLessThan(300);
    await landed("addEmbedGroupMembers", from);
    await h.waitForIdle(20_000);
    expect(embedMembers("P Late Embed")).toEqual([]);
  }, 40_000);

  it("embed: a held member removal landing after the member was added back: the member stays", async () => {
    const scim = h.scim("acme");
    const u = await scim.createUser("p.late.embed2@example.com", { externalId: "p-late-embed2" });
    const g = await scim.createGroup("P Late Embed Two", [u.id]);
    await h.waitForIdle();
    const from = await holdNext("removeEmbedGroupMembers", () =>
      scim.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${u.id}"]` }]),
    );
    expect(
      (await scim.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: u.id }] }])).status,
    ).toBeLessThan(300);
    await landed("removeEmbedGroupMembers", from);
    await h.waitForIdle(20_000);
    expect(embedMembers("P Late Embed Two")).toEqual(["p-late-embed2"]);
  }, 40_000);

  it("embed: a held group rename landing after the rename back: the embed group keeps its name", async () => {
    const scim = h.scim("acme");
    const g = await scim.createGroup("P Late Embed Name");
    await h.waitForIdle();
    const from = await holdNext("updateEmbedGroup", () =>
      scim.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "P Late Embed Else" }]),
    );
    expect(
      (await scim.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "P Late Embed Name" }]))
        .status,
    ).toBeLessThan(300);
    await landed("updateEmbedGroup", from);
    await h.waitForIdle(20_000);
    expect(embedMembers("P Late Embed Else")).toBeUndefined();
    expect(embedMembers("P Late Embed Name")).toEqual([]);
  }, 40_000);
  it("after all of the above: a dry reconciliation finds no drift and a whole resync writes nothing", async () => {
    await expectSettled(h, t, ["okta", "acme"]);
  }, 90_000);
});
