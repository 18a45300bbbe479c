/**
 * Probes-f: fault scenarios that combine what the existing fault tests take one at a time (rapid
 * changes to one entity while the platform fails at random, a membership change racing a member's
 * deletion, a lost bulk answer followed by mixed changes, a slow 200 past the client's timeout on
 * a membership PATCH, a 409 naming a user in another case, the platform unreachable for a while or
 * for longer than the job's attempts, one source's writes refused for good among several, a dead
 * letter followed by a newer change, Retry-After longer than the job's backoff, a resync under
 * faults, Redis killed mid-burst). Each test names the expected end state and why (ARCHITECTURE.md
 * invariants) and what an identity admin expects to see.
 *
 * The bridge runs in this process (test/helpers/bridge-harness.ts); where a fault must depend on
 * the call's body (one source's users only) or on time after the platform applied a write, a
 * fault proxy (test/helpers/fault-proxy.ts) sits between the bridge and the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PLATFORM_TOKEN,
  type TestBridge,
  type TestBridgeOptions,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../helpers/throwaway-redis.js";
import { Redis } from "ioredis";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };
type PlatformGroup = { id: string; displayName: string; members: string[] };

const HARNESS_SYNC = {
  concurrency: 8,
  attempts: 8,
  lifecycleBatchWindowMs: 50,
  sweepIntervalMs: 500,
  sweepAfterMs: 1_000,
};

/** A harness whose platform calls pass through a fault proxy (rule settable per test). */
async function startProxiedBridge(name: string, options: TestBridgeOptions = {}) {
  const proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  const h = await startTestBridge(name, {
    ...options,
    start: false,
    config: {
      ...options.config,
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
        timeoutMs: 2_000,
        maxRetries: 4,
      },
    },
  });
  proxy.upstream = h.platformUrl;
  await h.start();
  return { h, proxy };
}

const users = (h: TestBridge) => h.emulator.state().users as unknown as PlatformUser[];
const usersNamed = (h: TestBridge, userName: string) =>
  users(h).filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
const groupsNamed = (h: TestBridge, displayName: string) =>
  (h.emulator.state().groups as PlatformGroup[]).filter((g) => g.displayName === displayName);
const pid = (h: TestBridge, userName: string) => {
  const found = usersNamed(h, userName);
  expect(found, `platform users named ${userName}`).toHaveLength(1);
  return found[0]?.id as string;
};
const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();
const status = async (h: TestBridge) =>
  (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
const entity = async (h: TestBridge, source: string, kind: "users" | "groups", id: string) =>
  (await h.admin().get(`/sources/${source}/${kind}/${id}`)).body as {
    state: string;
    platformId: string | null;
    lastError: { code?: string; message?: string } | null;
  };
const deadLetters = async (h: TestBridge) =>
  (await h.admin().get("/dead-letters?limit=100")).body.items as Array<{
    ref: { source: string; kind: string; id: string };
    code: string;
    reason: string;
    at: string;
  }>;
const ok = (res: { status: number }, what: string) =>
  expect([200, 204], `${what}: ${res.status}`).toContain(res.status);

describe("probes-f: rapid changes to one entity while the platform fails at random", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probes-f-rapid", {
      seed: 42,
      sources: {
        okta: { tokens: ["okta-token"] },
        hr: { tokens: ["hr-token"], onDelete: "delete" },
      },
      // A wider batch window: the five deactivations of one test share one bulk call even on a
      // loaded machine (the flusher sends a partial call a window after its oldest change).
      config: { sync: { ...HARNESS_SYNC, lifecycleBatchWindowMs: 400 } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /**
   * Invariant 2: for any sequence of changes and platform faults, the platform ends at the last
   * desired state. The identity admin expects the user to look exactly as in the directory after
   * the last change: new userName, active, last displayName; a deleted user deprovisioned by the
   * source's policy (deactivated, once; or gone). No dead letter: every fault here is transient.
   */
  it("create, deactivate, reactivate, rename, deactivate, reactivate, rename again: ends as the last change", async () => {
    h.emulator.setFaults([
      { type: "error", status: 503, probability: 0.25 },
      { type: "drop", probability: 0.1 },
      { type: "ghost", probability: 0.15, match: { method: "POST" } },
      { type: "ghost", probability: 0.15, match: { method: "PATCH" } },
      { type: "ghost", probability: 0.15, match: { method: "PUT" } },
    ]);
    const okta = h.scim("okta");
    const hr = h.scim("hr");
    const steps = async (scim: typeof okta, base: string, end: "stay" | "delete") => {
      const u = await scim.createUser(`${base}@example.com`, { displayName: `${base} 1` });
      ok(await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
      ok(await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }]), "reactivate");
      ok(
        await scim.patchUser(u.id, [
          { op: "replace", path: "userName", value: `${base}.renamed@example.com` },
          { op: "replace", path: "displayName", value: `${base} 2` },
        ]),
        "rename",
      );
      if (end === "delete") {
        expect((await scim.deleteUser(u.id)).status).toBe(204);
        return u;
      }
      ok(await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }]), "deactivate 2");
      ok(await scim.patchUser(u.id, [{ op: "replace", path: "active", value: true }]), "reactivate 2");
      ok(
        await scim.patchUser(u.id, [
          { op: "replace", path: "userName", value: `${base}.final@example.com` },
          { op: "replace", path: "displayName", value: `${base} final` },
        ]),
        "rename 2",
      );
      return u;
    };
    await Promise.all([
      steps(okta, "rapid.stay", "stay"),
      steps(okta, "rapid.gone", "delete"),
      steps(hr, "rapid.hr", "delete"),
    ]);
    await waitFor(() => h.emulator.requests().filter((r) => r.fault).length >= 3, {
      what: "some faults to fire",
    });
    await h.waitForIdle(45_000);
    h.emulator.clearFaults();

    // The kept user: exactly the last state, under its last userName only.
    for (const old of ["rapid.stay@example.com", "rapid.stay.renamed@example.com"]) {
      expect(usersNamed(h, old), old).toEqual([]);
    }
    const [stay, ...more] = usersNamed(h, "rapid.stay.final@example.com");
    expect(more).toEqual([]);
    expect(stay).toMatchObject({ active: true, displayName: "rapid.stay final" });
    // onDelete: deactivate: one platform user, under either name it had, inactive.
    const gone = [
      ...usersNamed(h, "rapid.gone@example.com"),
      ...usersNamed(h, "rapid.gone.renamed@example.com"),
    ];
    expect(gone.map((u) => u.active)).toEqual([false]);
    // onDelete: delete: nothing left under either name.
    expect([
      ...usersNamed(h, "rapid.hr@example.com"),
      ...usersNamed(h, "rapid.hr.renamed@example.com"),
    ]).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 55_000);

  /**
   * ARCHITECTURE "Groups" and "Mapping": a deleted user leaves its workspace groups (a deactivated
   * one would stay), and membership changes by diff. A group PATCH (remove one, add a newcomer)
   * races the deletion of another member while patchGroup and bulkUsers fail half the time. The
   * admin expects the group to hold exactly the directory's members, the deleted user to be
   * deprovisioned by policy (okta: inactive and out of the group; hr: gone), nobody else touched.
   */
  it("a group membership change racing a member's deletion under 5xx ends with exactly the directory's members", async () => {
    const okta = h.scim("okta");
    const hr = h.scim("hr");
    const [u1, u2, u3] = await Promise.all([1, 2, 3].map((i) => okta.createUser(`race.o${i}@example.com`)));
    const [v1, v2] = await Promise.all([1, 2].map((i) => hr.createUser(`race.h${i}@example.com`)));
    const g = await okta.createGroup("race-okta", [u1!.id, u2!.id, u3!.id]);
    const hg = await hr.createGroup("race-hr", [v1!.id, v2!.id]);
    await h.waitForIdle();
    expect(groupsNamed(h, "race-okta")[0]?.members).toHaveLength(3);

    h.emulator.setFaults([
      { type: "error", status: 503, probability: 0.5, match: { operation: "patchGroup" } },
      { type: "error", status: 502, probability: 0.5, match: { operation: "bulkUsers" } },
    ]);
    const u4 = await okta.createUser("race.o4@example.com");
    const v3 = await hr.createUser("race.h3@example.com");
    const results = await Promise.all([
      okta.patchGroup(g.id, [
        { op: "remove", path: `members[value eq "${u1!.id}"]` },
        { op: "add", path: "members", value: [{ value: u4.id }] },
      ]),
      okta.deleteUser(u2!.id),
      hr.patchGroup(hg.id, [{ op: "add", path: "members", value: [{ value: v3.id }] }]),
      hr.deleteUser(v1!.id),
    ]);
    for (const res of results) ok(res, "racing change");
    await h.waitForIdle(40_000);
    h.emulator.clearFaults();

    const okGroup = groupsNamed(h, "race-okta");
    expect(okGroup).toHaveLength(1);
    expect(sorted(okGroup[0]?.members)).toEqual(
      sorted([pid(h, "race.o3@example.com"), pid(h, "race.o4@example.com")]),
    );
    expect(usersNamed(h, "race.o2@example.com").map((u) => u.active)).toEqual([false]);
    expect(usersNamed(h, "race.o1@example.com").map((u) => u.active)).toEqual([true]);
    const hrGroup = groupsNamed(h, "race-hr");
    expect(sorted(hrGroup[0]?.members)).toEqual(
      sorted([pid(h, "race.h2@example.com"), pid(h, "race.h3@example.com")]),
    );
    expect(usersNamed(h, "race.h1@example.com")).toEqual([]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 55_000);

  /**
   * Lost answer on a bulk DEACTIVATE carrying five users: the platform applied it, the answer was
   * lost and the flush attempt's retries got 503. Before the next attempt the directory moves on
   * differently for each user. Invariant 2: each ends at its own last desired state; the platform
   * must not be assumed to hold either the old or the new state. The admin expects: reactivated
   * users active, the deleted one gone (hr: onDelete delete), the renamed one inactive under its
   * new name, the untouched ones inactive.
   */
  it("a bulk DEACTIVATE of five applied with its answer lost, then each user changes differently", async () => {
    const hr = h.scim("hr");
    const names = [1, 2, 3, 4, 5].map((i) => `bulk.lost${i}@example.com`);
    const created = await Promise.all(names.map((n) => hr.createUser(n)));
    await h.waitForIdle();
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "bulkUsers" } });
    h.emulator.addFault({ type: "error", status: 503, count: 4, match: { operation: "bulkUsers" } });
    const from = h.emulator.requests().length;
    const bulkCalls = () =>
      h.emulator
        .requests()
        .slice(from)
        .filter((r) => r.operation === "bulkUsers");
    await Promise.all(
      created.map((u) => hr.patchUser(u.id, [{ op: "replace", path: "active", value: false }])),
    );
    await waitFor(() => bulkCalls().filter((r) => r.status === 503).length >= 4, {
      what: "the flush attempt to give up",
    });
    // One call for all five (applied, answer lost), then its retries.
    expect(bulkCalls().map((r) => (r.fault === "ghost" ? "ghost" : r.status))).toEqual([
      "ghost",
      503,
      503,
      503,
      503,
    ]);
    expect(names.map((n) => usersNamed(h, n)[0]?.active)).toEqual([false, false, false, false, false]);

    const [a, b, c, , e] = created;
    ok(await hr.patchUser(a!.id, [{ op: "replace", path: "active", value: true }]), "reactivate");
    expect((await hr.deleteUser(b!.id)).status).toBe(204);
    ok(
      await hr.patchUser(c!.id, [{ op: "replace", path: "userName", value: "bulk.lost3.new@example.com" }]),
      "rename",
    );
    ok(await hr.patchUser(e!.id, [{ op: "replace", path: "active", value: true }]), "reactivate");
    ok(await hr.patchUser(e!.id, [{ op: "replace", path: "active", value: false }]), "deactivate again");
    await h.waitForIdle(30_000);

    expect(usersNamed(h, names[0]!).map((u) => u.active)).toEqual([true]);
    expect(usersNamed(h, names[1]!)).toEqual([]);
    expect(usersNamed(h, names[2]!)).toEqual([]);
    expect(usersNamed(h, "bulk.lost3.new@example.com").map((u) => u.active)).toEqual([false]);
    expect(usersNamed(h, names[3]!).map((u) => u.active)).toEqual([false]);
    expect(usersNamed(h, names[4]!).map((u) => u.active)).toEqual([false]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * A user deleted at the source (hr: onDelete delete) whose bulk DELETE was applied with the
   * answer lost, and whose retries fail, is created again at once with the same userName (a
   * rehire, a new SCIM id). The admin expects one active platform user of that name, recorded as
   * the new entity's; never the new one deleted by a late retry of the old DELETE.
   */
  it("a bulk DELETE applied with its answer lost, then the same userName created again at once", async () => {
    const hr = h.scim("hr");
    const first = await hr.createUser("rehire@example.com", { displayName: "first" });
    await h.waitForIdle();
    const firstPid = pid(h, "rehire@example.com");
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "bulkUsers" } });
    h.emulator.addFault({ type: "error", status: 503, count: 4, match: { operation: "bulkUsers" } });
    const from = h.emulator.requests().length;
    expect((await hr.deleteUser(first.id)).status).toBe(204);
    await waitFor(
      () =>
        h.emulator
          .requests()
          .slice(from)
          .some((r) => r.operation === "bulkUsers" && r.fault === "ghost"),
      {
        what: "the DELETE to land unseen",
      },
    );
    expect(usersNamed(h, "rehire@example.com")).toEqual([]);
    const second = await hr.createUser("rehire@example.com", { displayName: "second" });
    await h.waitForIdle(30_000);

    const left = usersNamed(h, "rehire@example.com");
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ active: true, displayName: "second" });
    expect(left[0]?.id).not.toBe(firstPid);
    expect(await entity(h, "hr", "users", second.id)).toMatchObject({
      state: "synced",
      platformId: left[0]?.id,
    });
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * userName case under faults. (1) "On first sync a platform user with the same userName
   * (case-insensitive) is adopted": the platform's user differs in case and is inactive with
   * another displayName, and the lookup after the 409 fails once (503). The admin expects one
   * platform user, adopted (no endless 409, no dead letter), active, with the directory's
   * displayName and userName as the directory spells it ("the directory is the truth"; the
   * platform's names are unique case-insensitively, so a change of case is allowed). (2) A create
   * applied with its answer lost and its retries failing, then the source changes only the case
   * (an HR correction): the lost create is the same user, which ends once, spelled as now.
   */
  it("409 for a platform user of another case (lookup failing once), and a lost create re-cased: one user each, spelled as the source", async () => {
    h.emulator.seed({
      users: [{ userName: "Carol.Case@Example.COM", active: false, displayName: "Old Carol" }],
    });
    const seeded = pid(h, "carol.case@example.com");
    h.emulator.addFault({ type: "error", status: 503, count: 1, match: { operation: "listUsers" } });
    const okta = h.scim("okta");
    const carol = await okta.createUser("carol.case@example.com", { displayName: "Carol" });
    await h.waitForIdle();
    const found = usersNamed(h, "carol.case@example.com");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ id: seeded, active: true, displayName: "Carol" });
    expect(h.emulator.requests().some((r) => r.operation === "createUser" && r.status === 409)).toBe(true);
    expect(await entity(h, "okta", "users", carol.id)).toMatchObject({ state: "synced", platformId: seeded });
    expect(found[0]?.userName).toBe("carol.case@example.com");

    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createUser" } });
    h.emulator.addFault({ type: "error", status: 503, count: 4, match: { operation: "createUser" } });
    const dave = await okta.createUser("dave.case@example.com");
    await waitFor(async () => (await entity(h, "okta", "users", dave.id)).state === "retrying", {
      what: "the create to fail and wait for a retry",
    });
    ok(
      await okta.patchUser(dave.id, [{ op: "replace", path: "userName", value: "Dave.Case@Example.com" }]),
      "recase",
    );
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(usersNamed(h, "dave.case@example.com").map((x) => x.userName)).toEqual(["Dave.Case@Example.com"]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  });
});

describe("probes-f: membership PATCHes that are slow on the way there or back", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-slow-patch", {
      sources: { okta: { tokens: ["okta-token"] }, hr: { tokens: ["hr-token"], onDelete: "delete" } },
    }));
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  /**
   * The platform applies a group PATCH (remove two, add two) at once but its answer comes after
   * the client's 2 s timeout. Before and while the bridge retries, the source changes its mind: one
   * removed member comes back, one added member leaves again. Invariant 2 (a write in doubt must
   * not be planned from as if it had not happened) and "groups by diff". The admin expects exactly
   * the directory's members, one group, no dead letter (a retried removal of a member already out
   * is no failure).
   */
  it("answered 200 after the client gave up (applied): exactly the directory's members, once", async () => {
    const okta = h.scim("okta");
    const us = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => okta.createUser(`slow.m${i}@example.com`)));
    const ids = us.map((u) => u.id);
    const g = await okta.createGroup("slow-team", ids.slice(0, 4));
    await h.waitForIdle();
    const gid = groupsNamed(h, "slow-team")[0]?.id as string;
    let delayed = 0;
    proxy.rule = (call) =>
      call.method === "PATCH" && call.path === `/api/scim/v2/Groups/${gid}` && delayed++ === 0
        ? { kind: "delayAnswer", ms: 2_600 }
        : undefined;
    ok(
      await okta.patchGroup(g.id, [
        { op: "remove", path: `members[value eq "${ids[0]}"]` },
        { op: "remove", path: `members[value eq "${ids[1]}"]` },
        { op: "add", path: "members", value: [{ value: ids[4] }, { value: ids[5] }] },
      ]),
      "first change",
    );
    await waitFor(() => delayed > 0, { what: "the PATCH to be sent" });
    ok(
      await okta.patchGroup(g.id, [
        { op: "add", path: "members", value: [{ value: ids[0] }] },
        { op: "remove", path: `members[value eq "${ids[5]}"]` },
      ]),
      "change of mind",
    );
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    const want = [0, 2, 3, 4].map((i) => pid(h, `slow.m${i + 1}@example.com`));
    const found = groupsNamed(h, "slow-team");
    expect(found).toHaveLength(1);
    expect(sorted(found[0]?.members)).toEqual(sorted(want));
    expect(proxy.calls.some((c) => c.action === "delayAnswer" && c.status === 0)).toBe(true); // timed out
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * The add of a member reaches the platform late (held 1.5 s in the network) and the member is
   * deleted at the source (onDelete: delete) meanwhile, so the platform deletes the user before
   * the add arrives and refuses it. ARCHITECTURE: a refused add of a member deleted behind the
   * bridge's back creates that member again; here it was deleted by the source, on purpose. The
   * admin expects the user to stay deleted (never re-created), the group to keep its other member,
   * and no dead letter.
   */
  it("a member add arriving after the member's deletion at the source: the user stays deleted", async () => {
    const hr = h.scim("hr");
    const stay = await hr.createUser("late.add.stay@example.com");
    const leaver = await hr.createUser("late.add.leaver@example.com");
    const g = await hr.createGroup("late-add", [stay.id]);
    await h.waitForIdle();
    const gid = groupsNamed(h, "late-add")[0]?.id as string;
    let held = 0;
    proxy.rule = (call) =>
      call.method === "PATCH" && call.path === `/api/scim/v2/Groups/${gid}` && held++ === 0
        ? { kind: "delayRequest", ms: 1_500 }
        : undefined;
    ok(await hr.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: leaver.id }] }]), "add");
    await waitFor(() => held > 0, { what: "the add to be on its way" });
    expect((await hr.deleteUser(leaver.id)).status).toBe(204);
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    // The race happened: the DELETE went out while the add was held, and the add was refused.
    const add = proxy.calls.find((c) => c.action === "delayRequest");
    const bulk = proxy.calls.find((c) => c.path === "/api/v1/users/bulk" && (add?.at ?? 0) < c.at);
    expect(bulk && add && bulk.at < add.at + 1_500).toBe(true);
    expect(add?.status).toBeGreaterThanOrEqual(400);
    expect(usersNamed(h, "late.add.leaver@example.com")).toEqual([]);
    expect(groupsNamed(h, "late-add")[0]?.members).toEqual([pid(h, "late.add.stay@example.com")]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);
});

describe("probes-f: the platform unreachable", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probes-f-down", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { sync: { ...HARNESS_SYNC, attempts: 3 } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const port = () => Number(new URL(h.platformUrl).port);

  /**
   * The platform refuses connections for ~4 s while users are created, one deactivated and a
   * group made. At-least-once (invariant 2) and nothing fails silently (7): meanwhile the entities
   * say why they wait (retrying, a network error) and the bridge is not idle; once the platform is
   * back everything lands without an admin, with no dead letter.
   */
  it("down for a few seconds: the entities say they wait, then everything lands by itself", async () => {
    const okta = h.scim("okta");
    const old = await okta.createUser("down.old@example.com");
    await h.waitForIdle();
    await h.emulator.close();
    const made = await Promise.all([1, 2, 3].map((i) => okta.createUser(`down.new${i}@example.com`)));
    ok(await okta.patchUser(old.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    const g = await okta.createGroup("down-team", [old.id, ...made.map((u) => u.id)]);
    await waitFor(async () => (await entity(h, "okta", "users", made[0]!.id)).state === "retrying", {
      what: "the create to wait for a retry",
    });
    const waiting = await entity(h, "okta", "users", made[0]!.id);
    expect(waiting.lastError?.code).toMatch(/network|timeout/);
    expect((await status(h)).idle).toBe(false);
    await h.emulator.start({ port: port() });
    await h.waitForIdle(30_000);

    expect(usersNamed(h, "down.old@example.com").map((u) => u.active)).toEqual([false]);
    for (const i of [1, 2, 3]) expect(usersNamed(h, `down.new${i}@example.com`)).toHaveLength(1);
    const group = groupsNamed(h, "down-team");
    expect(group).toHaveLength(1);
    expect(group[0]?.members).toHaveLength(4);
    expect(await entity(h, "okta", "groups", g.id)).toMatchObject({ state: "synced" });
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * Down for longer than the job's attempts (sync.attempts 3 here): each user becomes a dead letter
   * with a transient reason, visible in the list and the status (invariant 7); dead letters do not
   * hold idle false. When the platform is back the admin retries all dead letters, and everything
   * lands once; the list is empty again.
   */
  it("down longer than the job's attempts: visible dead letters; an admin's retry delivers them", async () => {
    const okta = h.scim("okta");
    await h.emulator.close();
    const made = await Promise.all([1, 2].map((i) => okta.createUser(`long.down${i}@example.com`)));
    await waitFor(async () => (await status(h)).deadLetters >= 2, {
      timeoutMs: 40_000,
      what: "both users to be dead-lettered",
    });
    const letters = await deadLetters(h);
    for (const u of made) {
      const letter = letters.find((l) => l.ref.id === u.id);
      expect(letter?.code, `dead letter of ${u.id}`).toMatch(/network|timeout/);
      expect(await entity(h, "okta", "users", u.id)).toMatchObject({ state: "dead" });
    }
    await h.emulator.start({ port: port() });
    const retried = await h.admin().post("/dead-letters/retry", {});
    expect(retried.status).toBe(202);
    await h.waitForIdle(20_000);
    for (const i of [1, 2]) expect(usersNamed(h, `long.down${i}@example.com`)).toHaveLength(1);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 58_000);
});

describe("probes-f: one source's platform writes refused for good, among several sources", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  const SOURCES = ["s1", "s2", "s3", "broken"];
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-sources", {
      sources: Object.fromEntries(SOURCES.map((s) => [s, { tokens: [`${s}-token`], groupPrefix: `${s}-` }])),
    }));
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  /**
   * Isolation (5) and visibility (7): the platform refuses (400) every user create of one source
   * (a schema it rejects, say). The other sources' users and groups land as if nothing happened;
   * the broken source's users are dead letters naming the refusal; its group exists, without the
   * members that never landed, and says so; the bridge still goes idle (dead letters do not hold
   * it busy), so an operator's "wait for idle" does not hang on one broken source.
   */
  it("the others converge unaffected; the broken source's users are visible dead letters; the bridge goes idle", async () => {
    proxy.rule = (call) =>
      call.method === "POST" &&
      call.path === "/api/scim/v2/Users" &&
      String((call.body as { userName?: string }).userName).endsWith("@broken.example")
        ? {
            kind: "answer",
            status: 400,
            body: {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "400",
              scimType: "invalidValue",
              detail: "probes-f: refused",
            },
          }
        : undefined;
    const made = new Map<string, string[]>();
    await Promise.all(
      SOURCES.map(async (s) => {
        const scim = h.scim(s);
        const domain = s === "broken" ? "broken.example" : "example.com";
        const us = await Promise.all([1, 2, 3, 4].map((i) => scim.createUser(`${s}.u${i}@${domain}`)));
        made.set(
          s,
          us.map((u) => u.id),
        );
        await scim.createGroup(
          "team",
          us.map((u) => u.id),
        );
      }),
    );
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    for (const s of SOURCES.filter((x) => x !== "broken")) {
      const group = groupsNamed(h, `${s}-team`);
      expect(group).toHaveLength(1);
      expect(sorted(group[0]?.members)).toEqual(
        sorted([1, 2, 3, 4].map((i) => pid(h, `${s}.u${i}@example.com`))),
      );
    }
    const letters = await deadLetters(h);
    expect(letters.every((l) => l.ref.source === "broken")).toBe(true);
    expect(sorted(letters.filter((l) => l.ref.kind === "user").map((l) => l.ref.id))).toEqual(
      sorted(made.get("broken") ?? []),
    );
    for (const l of letters) expect(l.code).toBe("platform_bad_request");
    expect(users(h).filter((u) => u.userName.endsWith("@broken.example"))).toEqual([]);
    const broken = groupsNamed(h, "broken-team");
    expect(broken.map((g) => g.members)).toEqual([[]]);
    expect((await status(h)).idle).toBe(true);

    // The platform accepts them again; the admin retries the dead letters. "The group is synced
    // again when that user lands": the broken source's group fills up without any other change.
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBe(202);
    await h.waitForIdle(20_000);
    expect(sorted(groupsNamed(h, "broken-team")[0]?.members)).toEqual(
      sorted([1, 2, 3, 4].map((i) => pid(h, `broken.u${i}@broken.example`))),
    );
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);
});

describe("probes-f: a dead letter, then a newer change to the same entity", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-dead-then-new", {
      sources: { okta: { tokens: ["okta-token"] } },
    }));
    // The platform refuses any user or group whose displayName it finds invalid (for good: 400).
    proxy.rule = (call) => {
      const body = call.body as { displayName?: unknown; Operations?: unknown } | undefined;
      const text = JSON.stringify(body ?? {});
      return ["POST", "PATCH", "PUT"].includes(call.method) && text.includes("INVALID")
        ? { kind: "answer", status: 400, body: { status: "400", detail: "probes-f: invalid displayName" } }
        : undefined;
    };
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  /**
   * ARCHITECTURE (the sync processor's recordDeadLetter): "a later change or an admin retry syncs
   * it again". A user refused for good is a dead letter. A newer change refused again is still one
   * dead letter for the entity (not one per change), with the newer refusal's time. Then the IdP
   * admin fixes the value at the source: the newer change must go through without an operator,
   * and the entity must leave the dead-letter list (else it shows a failure that no longer exists).
   */
  it("a user: refused again is one dead letter; the fixed value reaches the platform and the letter is gone", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("fixme@example.com", { displayName: "INVALID one" });
    await waitFor(async () => (await entity(h, "okta", "users", u.id)).state === "dead", {
      what: "the dead letter",
    });
    const first = (await deadLetters(h)).filter((l) => l.ref.id === u.id);
    expect(first.map((l) => l.code)).toEqual(["platform_bad_request"]);

    ok(await okta.patchUser(u.id, [{ op: "replace", path: "displayName", value: "INVALID two" }]), "again");
    await h.waitForIdle();
    const again = (await deadLetters(h)).filter((l) => l.ref.id === u.id);
    expect(again).toHaveLength(1);
    expect(Date.parse(again[0]?.at ?? "")).toBeGreaterThan(Date.parse(first[0]?.at ?? ""));

    ok(await okta.patchUser(u.id, [{ op: "replace", path: "displayName", value: "Fixed Name" }]), "fix");
    await h.waitForIdle();
    expect(usersNamed(h, "fixme@example.com").map((x) => x.displayName)).toEqual(["Fixed Name"]);
    expect(await entity(h, "okta", "users", u.id)).toMatchObject({ state: "synced" });
    expect((await deadLetters(h)).map((l) => l.ref.id)).not.toContain(u.id);
  });

  /**
   * The same for a group (its create refused), with members: once renamed to a valid name it is
   * created with its members and leaves the dead-letter list.
   */
  it("a group: the renamed group is created with its members and the dead letter is gone", async () => {
    const okta = h.scim("okta");
    const m = await okta.createUser("fixme.member@example.com");
    const g = await okta.createGroup("INVALID group", [m.id]);
    await waitFor(async () => (await entity(h, "okta", "groups", g.id)).state === "dead", {
      what: "the group's dead letter",
    });
    ok(await okta.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "fixed group" }]), "rename");
    await h.waitForIdle();
    const found = groupsNamed(h, "fixed group");
    expect(found.map((x) => x.members)).toEqual([[pid(h, "fixme.member@example.com")]]);
    expect((await deadLetters(h)).map((l) => l.ref.id)).not.toContain(g.id);
  });

  /**
   * The same through the lifecycle path: a deactivation the platform refuses for that user alone
   * (a per-user FORBIDDEN in the bulk answer) is that user's dead letter. The IdP admin then
   * reactivates the user (the state the platform still holds): the entity is synced again and the
   * stale dead letter leaves the list. Deactivated once more after the platform accepts it, the
   * user ends inactive.
   */
  it("a deactivation refused for one user, then reactivated, then deactivated again", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("bulk.refused@example.com");
    await h.waitForIdle();
    const platformId = pid(h, "bulk.refused@example.com");
    h.emulator.drift({ action: "failBulkFor", userId: platformId, code: "FORBIDDEN" });
    ok(await okta.patchUser(u.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    await waitFor(async () => (await entity(h, "okta", "users", u.id)).state === "dead", {
      what: "the refused deactivation's dead letter",
    });
    expect((await deadLetters(h)).find((l) => l.ref.id === u.id)?.code).toBe("platform_bulk_forbidden");

    ok(await okta.patchUser(u.id, [{ op: "replace", path: "active", value: true }]), "reactivate");
    await h.waitForIdle();
    expect(await entity(h, "okta", "users", u.id)).toMatchObject({ state: "synced" });
    expect((await deadLetters(h)).map((l) => l.ref.id)).not.toContain(u.id);
    expect(usersNamed(h, "bulk.refused@example.com").map((x) => x.active)).toEqual([true]);

    h.emulator.data.bulkFailures.delete(platformId);
    ok(await okta.patchUser(u.id, [{ op: "replace", path: "active", value: false }]), "deactivate again");
    await h.waitForIdle();
    expect(usersNamed(h, "bulk.refused@example.com").map((x) => x.active)).toEqual([false]);
    expect(await entity(h, "okta", "users", u.id)).toMatchObject({ state: "synced" });
  });
});

describe("probes-f: Retry-After longer than the job's backoff", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-retry-after", {
      sources: { okta: { tokens: ["okta-token"] } },
      // Two attempts only: a rate limit that burned attempts would dead-letter the group.
      config: { sync: { ...HARNESS_SYNC, attempts: 2 } },
    }));
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  /**
   * ARCHITECTURE: the client honours Retry-After; a pause is shared by every worker; a 429 does not
   * spend the job's attempts. A group PATCH gets 429 with Retry-After: 2 six times in a row (more
   * than the client's 5 tries and more than the job's 1 s backoff) while other users are created.
   * The admin expects: no platform call at all within 2 s of any 429, no dead letter, and the
   * member in the group in the end.
   */
  it("no call inside any pause, no attempt spent, the member lands", async () => {
    const okta = h.scim("okta");
    const a = await okta.createUser("ra.member@example.com");
    const g = await okta.createGroup("ra-team", []);
    await h.waitForIdle();
    const gid = groupsNamed(h, "ra-team")[0]?.id as string;
    let limited = 0;
    proxy.rule = (call) =>
      call.method === "PATCH" && call.path === `/api/scim/v2/Groups/${gid}` && limited++ < 6
        ? { kind: "answer", status: 429, headers: { "Retry-After": "2" } }
        : undefined;
    const from = proxy.calls.length;
    ok(await okta.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: a.id }] }]), "add");
    await waitFor(() => limited >= 1, { what: "the first 429" });
    await Promise.all([1, 2, 3].map((i) => okta.createUser(`ra.other${i}@example.com`)));
    await h.waitForIdle(40_000);
    proxy.rule = undefined;

    expect(groupsNamed(h, "ra-team")[0]?.members).toEqual([pid(h, "ra.member@example.com")]);
    for (const i of [1, 2, 3]) expect(usersNamed(h, `ra.other${i}@example.com`)).toHaveLength(1);
    const calls = proxy.calls.slice(from);
    const limits = calls.filter((c) => c.status === 429);
    expect(limits).toHaveLength(6);
    // Calls released together at the end of a pause are on the wire before the bridge reads the
    // next 429 (it cannot call them back): a grace of 300 ms after each 429; none after that.
    for (const limit of limits) {
      const early = calls.filter((c) => c.at > limit.at + 300 && c.at < limit.at + 1_950);
      expect(
        early.map((c) => `${c.method} ${c.path}`),
        `calls within 2 s of the 429 at ${limit.at}`,
      ).toEqual([]);
    }
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 55_000);
});

describe("probes-f: a resync while the platform fails at random", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probes-f-resync", { seed: 5, sources: { okta: { tokens: ["okta-token"] } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  /**
   * "Resync re-reads the named entities on the platform and applies what differs"; "the directory
   * is the truth". Drift behind the bridge's back (a user deactivated, a member taken out of a
   * group), then a whole-source resync while reads and writes fail at random (503, dropped
   * connections). The admin expects the resync to finish (not stay running), the drift repaired,
   * nothing else changed, no dead letter; one deactivation in 10 users is within the guard's share.
   */
  it("the resync finishes and repairs the drift", async () => {
    const okta = h.scim("okta");
    const us = await Promise.all(
      Array.from({ length: 10 }, (_, i) => okta.createUser(`resync.u${i}@example.com`)),
    );
    await okta.createGroup(
      "resync-team",
      us.map((u) => u.id),
    );
    await h.waitForIdle();
    const victim = pid(h, "resync.u3@example.com");
    const gid = groupsNamed(h, "resync-team")[0]?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: victim, active: false });
    h.emulator.drift({ action: "removeGroupMember", groupId: gid, userId: pid(h, "resync.u5@example.com") });

    h.emulator.setFaults([
      { type: "error", status: 503, probability: 0.3 },
      { type: "drop", probability: 0.1 },
    ]);
    const from = h.emulator.requests().length;
    const started = await h.admin().post("/sources/okta/resync", {});
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    const done = await waitFor(
      async () => {
        const res = await h.admin().get(`/resyncs/${id}`);
        return ["succeeded", "failed"].includes(res.body.state) ? res.body : undefined;
      },
      { timeoutMs: 30_000, what: "the resync to finish" },
    );
    await h.waitForIdle(30_000);
    h.emulator.clearFaults();
    expect(
      h.emulator
        .requests()
        .slice(from)
        .filter((r) => r.fault).length,
    ).toBeGreaterThan(0);
    expect(done.state).toBe("succeeded");
    expect(usersNamed(h, "resync.u3@example.com").map((u) => u.active)).toEqual([true]);
    expect(groupsNamed(h, "resync-team")[0]?.members).toHaveLength(10);
    expect(
      users(h)
        .filter((u) => u.userName.startsWith("resync."))
        .every((u) => u.active),
    ).toBe(true);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 55_000);

  /**
   * The same drift (plus a user the directory holds inactive turned on behind the bridge's back)
   * found by a reconciliation run (not a dry run) while the platform fails at random. The admin
   * expects the run to end (not stay running), its counts to name the drift, and every repair to
   * have landed once the bridge is idle (one deactivation in 20 owned users is within the guard).
   */
  it("a reconciliation under faults ends and its repairs land", async () => {
    const okta = h.scim("okta");
    const us = await Promise.all(
      Array.from({ length: 10 }, (_, i) => okta.createUser(`recon.u${i}@example.com`)),
    );
    ok(await okta.patchUser(us[9]!.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    await okta.createGroup(
      "recon-team",
      us.slice(0, 5).map((u) => u.id),
    );
    await h.waitForIdle();
    const gid = groupsNamed(h, "recon-team")[0]?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid(h, "recon.u2@example.com"), active: false });
    h.emulator.drift({ action: "setUserActive", userId: pid(h, "recon.u9@example.com"), active: true });
    h.emulator.drift({ action: "removeGroupMember", groupId: gid, userId: pid(h, "recon.u4@example.com") });

    const from = h.emulator.requests().length;
    h.emulator.setFaults([
      { type: "error", status: 503, probability: 0.3 },
      { type: "drop", probability: 0.1 },
    ]);
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const res = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(res.body.state) ? undefined : res.body;
      },
      { timeoutMs: 30_000, what: "the run to end" },
    );
    await h.waitForIdle(30_000);
    h.emulator.clearFaults();
    expect(
      h.emulator
        .requests()
        .slice(from)
        .filter((r) => r.fault).length,
    ).toBeGreaterThan(0);
    expect(run.state).toBe("succeeded");
    expect(run.counts).toMatchObject({ activeMismatch: 2, membership: 1 });
    expect(usersNamed(h, "recon.u2@example.com").map((u) => u.active)).toEqual([true]);
    expect(usersNamed(h, "recon.u9@example.com").map((u) => u.active)).toEqual([false]);
    expect(groupsNamed(h, "recon-team")[0]?.members).toHaveLength(5);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 55_000);
});

describe("probes-f: Redis killed and restarted mid-burst, jobs in flight", () => {
  let redis: ThrowawayRedis;
  let h: TestBridge;
  beforeAll(async () => {
    redis = await ThrowawayRedis.start({ aof: true });
    h = await startTestBridge("probes-f-redis", {
      faults: [{ type: "slow", delayMs: 60 }],
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        redis: { url: redis.url, prefix: "{probes-f-redis}" },
        sync: { ...HARNESS_SYNC, concurrency: 4, sweepIntervalMs: 300, sweepAfterMs: 500 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await redis?.dispose();
  });

  /**
   * Invariant 1 and 2 across a Redis crash (AOF, fsync always): a burst of creates, deactivations
   * and a group is acknowledged while jobs run against a slow platform; Redis is SIGKILLed in the
   * middle and started again on the same port and directory. The IdP resends what got no 2xx (as
   * SCIM clients do: a 503, a POST answered 409 once stored). The admin expects every user the IdP
   * was told about exactly once on the platform, the right ones inactive, the group complete.
   */
  it("every acknowledged and resent change reaches the platform once", async () => {
    const scim = h.scim("okta");
    const token = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const N = 24;
    const ids = new Map<number, string>();
    let unavailable = 0;
    /** One IdP delivery, resent until a 2xx (or 409 for a create already stored, then looked up). */
    const create = async (i: number) => {
      const userName = `redis.u${i}@example.com`;
      await waitFor(
        async () => {
          const res = await h.http
            .post("/scim/v2/okta/Users")
            .set(token)
            .send({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName, active: true });
          if (res.status >= 500) unavailable++;
          if (res.status === 201) ids.set(i, res.body.id);
          else if (res.status === 409) {
            const found = await scim.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
            if (found.status !== 200) return false;
            ids.set(i, found.body.Resources[0].id);
          } else return false;
          return true;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: `create ${userName}` },
      );
    };
    const deactivate = async (i: number) => {
      await waitFor(
        async () => {
          const res = await scim.patchUser(ids.get(i)!, [{ op: "replace", path: "active", value: false }]);
          if (res.status >= 500) unavailable++;
          return [200, 204].includes(res.status);
        },
        { timeoutMs: 20_000, intervalMs: 100, what: `deactivate ${i}` },
      );
    };
    await Promise.all(Array.from({ length: N / 2 }, (_, i) => create(i)));
    // Jobs in flight against the slow platform when Redis dies.
    await waitFor(() => h.platformUsers().size >= 1, { what: "jobs to run" });
    const atKill = h.platformUsers().size;
    await redis.stop();
    expect(atKill).toBeLessThan(N / 2);
    // The second half and the deactivations arrive during the outage and are resent until taken.
    const burst = Promise.all([
      ...Array.from({ length: N / 2 }, (_, k) => create(N / 2 + k)),
      ...[0, 1, 2, 3].map((i) => deactivate(i)),
    ]);
    await waitFor(() => unavailable >= 5, { what: "the IdP to be told to come back later" });
    await redis.start();
    await burst;
    let groupId: string | undefined;
    await waitFor(
      async () => {
        const res = await h.http
          .post("/scim/v2/okta/Groups")
          .set(token)
          .send({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            displayName: "redis-team",
            members: [...ids.values()].map((value) => ({ value })),
          });
        if (res.status === 201) groupId = res.body.id;
        return res.status === 201;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: "the group" },
    );
    expect(groupId).toBeDefined();
    // Jobs that were active when Redis died resume once BullMQ finds them stalled (its stalled check
    // runs every 30 s), so convergence may take that long on top of the work itself.
    await h.waitForIdle(90_000);

    for (let i = 0; i < N; i++) {
      const found = usersNamed(h, `redis.u${i}@example.com`);
      expect(
        found.map((u) => u.active),
        `redis.u${i}`,
      ).toEqual([i >= 4]);
    }
    expect(users(h).filter((u) => u.userName.startsWith("redis."))).toHaveLength(N);
    expect(groupsNamed(h, "redis-team")[0]?.members).toHaveLength(N);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 150_000);

  /**
   * Redis stalls (DEBUG SLEEP 3: alive, answering nothing) in the middle of a burst of creates and
   * deactivations while jobs run. The IdP expects every request answered within its own timeout
   * (a 2xx, or a 503 it retries), never a hang; every user it was told exists ends on the platform
   * exactly once with the right active flag; no dead letter.
   */
  it("a Redis stall mid-burst: every request answered, everything acknowledged lands once", async () => {
    const scim = h.scim("okta");
    const token = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const N = 16;
    const ids = new Map<number, string>();
    const took: number[] = [];
    const userName = (i: number) => `stall.u${i}@example.com`;
    const create = async (i: number) => {
      await waitFor(
        async () => {
          const started = Date.now();
          const res = await h.http
            .post("/scim/v2/okta/Users")
            .set(token)
            .send({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: userName(i) });
          took.push(Date.now() - started);
          if (res.status === 201) ids.set(i, res.body.id);
          else if (res.status === 409) {
            const found = await scim.get(
              `/Users?filter=${encodeURIComponent(`userName eq "${userName(i)}"`)}`,
            );
            if (found.status !== 200) return false;
            ids.set(i, found.body.Resources[0].id);
          } else return false;
          return true;
        },
        { timeoutMs: 25_000, intervalMs: 100, what: `create ${userName(i)}` },
      );
      if (i % 4 !== 0) return;
      await waitFor(
        async () => {
          const started = Date.now();
          const res = await scim.patchUser(ids.get(i)!, [{ op: "replace", path: "active", value: false }]);
          took.push(Date.now() - started);
          return [200, 204].includes(res.status);
        },
        { timeoutMs: 25_000, intervalMs: 100, what: `deactivate ${i}` },
      );
    };
    const first = Promise.all(Array.from({ length: N / 2 }, (_, i) => create(i)));
    await waitFor(() => ids.size >= 2, { what: "the burst to start" });
    const sleeper = new Redis(redis.url);
    const stall = sleeper.call("DEBUG", "SLEEP", "3").finally(() => sleeper.disconnect());
    const second = Promise.all(Array.from({ length: N / 2 }, (_, k) => create(N / 2 + k)));
    await Promise.all([first, second, stall]);
    await h.waitForIdle(40_000);

    for (let i = 0; i < N; i++) {
      expect(
        usersNamed(h, userName(i)).map((u) => u.active),
        userName(i),
      ).toEqual([i % 4 !== 0]);
    }
    expect(Math.max(...took)).toBeLessThan(10_000);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 58_000);
});

describe("probes-f: another source claims a userName while the first source's create is in doubt", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-contested", {
      sources: { okta: { tokens: ["okta-token"] }, entra: { tokens: ["entra-token"] } },
    }));
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  /**
   * Okta creates a user; the platform applies the create but the answer is lost and the retries of
   * that attempt get 503. Before Okta's sync tries again, Entra pushes the same userName. The
   * platform user was made by Okta's create: ARCHITECTURE "Ownership" (the bridge records which
   * objects each source created or adopted and touches nothing else), "Lost answers" (a create
   * whose answer was lost is found by its key and adopted by the entity that made it) and
   * invariant 5 (one source cannot touch what another owns). The Okta admin expects the user to
   * be Okta's: synced, and untouched when Entra deactivates its own copy; Entra's entity is the
   * visible ownership conflict, as when Entra pushes a name Okta's user already has.
   */
  // Was a bug (probes-f 1): the create's intent lived only in okta's own applied record, so entra's
  // 409-and-adopt took the user okta made. Now a create holds its name in the owner map until it
  // settles (src/sync/ownership.ts beginCreate, checkNoCreateUnderWay).
  it("the platform user stays the first source's; the second source's claim is the visible conflict", async () => {
    let oktaCreates = 0;
    proxy.rule = (call) => {
      const body = call.body as { displayName?: string } | undefined;
      if (call.method !== "POST" || call.path !== "/api/scim/v2/Users" || body?.displayName !== "via okta") {
        return undefined;
      }
      oktaCreates++;
      if (oktaCreates === 1) return { kind: "ghost" };
      if (oktaCreates <= 5) return { kind: "answer", status: 503 };
      return undefined;
    };
    const mine = await h.scim("okta").createUser("contested@example.com", { displayName: "via okta" });
    await waitFor(async () => (await entity(h, "okta", "users", mine.id)).state === "retrying", {
      what: "okta's create to be in doubt and wait for a retry",
    });
    const platformId = pid(h, "contested@example.com");
    const theirs = await h.scim("entra").createUser("contested@example.com", { displayName: "via entra" });
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    const oktaStatus = await entity(h, "okta", "users", mine.id);
    const entraStatus = await entity(h, "entra", "users", theirs.id);
    expect(usersNamed(h, "contested@example.com")).toHaveLength(1);
    expect(oktaStatus, "okta's entity").toMatchObject({ state: "synced", platformId });
    expect(entraStatus.state, "entra's entity").toBe("dead");
    expect(entraStatus.lastError?.code).toBe("ownership_conflict");

    // Entra deactivating its copy must not reach Okta's user.
    ok(
      await h.scim("entra").patchUser(theirs.id, [{ op: "replace", path: "active", value: false }]),
      "entra deactivates",
    );
    await h.waitForIdle();
    expect(usersNamed(h, "contested@example.com")[0]).toMatchObject({
      active: true,
      displayName: "via okta",
    });
  }, 45_000);

  /**
   * The second source's entity, refused as the conflict, is then deleted at its source while the
   * first source's create is still in doubt (here: its sync a dead letter after the lost answer).
   * Its sync looks for a create of its own that may have landed, and finds the first source's
   * object under that name: it must not adopt it (and then deprovision it), since the platform
   * holds one user per name and the hold says whose create it is. The Okta admin expects the user
   * untouched; once Okta's dead letter is retried, Okta's entity adopts its own create.
   */
  it("the second source's lookup for a lost create of its own does not adopt the first source's", async () => {
    let oktaCreates = 0;
    let refuse = true;
    proxy.rule = (call) => {
      const body = call.body as { displayName?: string } | undefined;
      if (call.method !== "POST" || call.path !== "/api/scim/v2/Users" || body?.displayName !== "okta held") {
        return undefined;
      }
      oktaCreates++;
      if (oktaCreates === 1) return { kind: "ghost" };
      // Okta's create tried again is refused for good (the first one landed): a dead letter.
      return refuse ? { kind: "answer", status: 403 } : undefined;
    };
    const mine = await h.scim("okta").createUser("held@example.com", { displayName: "okta held" });
    await waitFor(async () => (await entity(h, "okta", "users", mine.id)).state === "dead", {
      what: "okta's in-doubt create to end as a dead letter",
      timeoutMs: 30_000,
    });
    refuse = false;
    const platformId = pid(h, "held@example.com");

    const theirs = await h.scim("entra").createUser("held@example.com", { displayName: "entra held" });
    await waitFor(async () => (await entity(h, "entra", "users", theirs.id)).state === "dead", {
      what: "entra's claim to be the visible conflict",
    });
    expect((await entity(h, "entra", "users", theirs.id)).lastError?.code).toBe("ownership_conflict");
    const since = proxy.calls.length;
    expect((await h.scim("entra").deleteUser(theirs.id)).status).toBe(204);
    await h.waitForIdle(30_000);
    expect(usersNamed(h, "held@example.com")).toEqual([
      expect.objectContaining({ id: platformId, active: true, displayName: "okta held" }),
    ]);
    const writes = proxy.calls.slice(since).filter((c) => c.method !== "GET");
    expect(writes.map((c) => `${c.method} ${c.path}`)).toEqual([]);

    // Okta's dead letter retried: its entity adopts its own create.
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBe(202);
    await waitFor(async () => (await entity(h, "okta", "users", mine.id)).state === "synced", {
      what: "okta's entity to adopt its create",
    });
    expect(await entity(h, "okta", "users", mine.id)).toMatchObject({ platformId });
    proxy.rule = undefined;
  }, 60_000);

  /**
   * The same for a group name (no groupPrefix: both sources map "Contested Team" to one platform
   * name). Okta's group create is applied with its answer lost; Entra then pushes a group of that
   * name. The Okta admin expects the platform group to stay Okta's, with Okta's member; Entra's
   * group is the visible conflict.
   */
  // Was a bug (probes-f 1, groups): the same shape in sync-group.ts createOrAdoptGroup.
  it("a group name: the platform group stays the first source's", async () => {
    const oktaMember = await h.scim("okta").createUser("contest.okta.member@example.com");
    const entraMember = await h.scim("entra").createUser("contest.entra.member@example.com");
    await h.waitForIdle();
    let oktaCreates = 0;
    proxy.rule = (call) => {
      const body = call.body as { displayName?: string; members?: Array<{ value: string }> } | undefined;
      const mine = body?.members?.some((m) => m.value === pid(h, "contest.okta.member@example.com"));
      if (call.method !== "POST" || call.path !== "/api/scim/v2/Groups" || !mine) return undefined;
      oktaCreates++;
      if (oktaCreates === 1) return { kind: "ghost" };
      if (oktaCreates <= 5) return { kind: "answer", status: 503 };
      return undefined;
    };
    const mine = await h.scim("okta").createGroup("Contested Team", [oktaMember.id]);
    await waitFor(async () => (await entity(h, "okta", "groups", mine.id)).state === "retrying", {
      what: "okta's group create to be in doubt and wait for a retry",
    });
    const platformId = groupsNamed(h, "Contested Team")[0]?.id;
    const theirs = await h.scim("entra").createGroup("Contested Team", [entraMember.id]);
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    expect(groupsNamed(h, "Contested Team").map((g) => g.members)).toEqual([
      [pid(h, "contest.okta.member@example.com")],
    ]);
    expect(await entity(h, "okta", "groups", mine.id)).toMatchObject({ state: "synced", platformId });
    expect((await entity(h, "entra", "groups", theirs.id)).lastError?.code).toBe("ownership_conflict");
  }, 45_000);
});

describe("probes-f: another source names an embed group while the first source's create is in doubt", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ({ h, proxy } = await startProxiedBridge("probes-f-contested-embed", {
      sources: {
        hr: { tokens: ["hr-token"], target: { embedTenant: "acme" } },
        sales: { tokens: ["sales-token"], target: { embedTenant: "acme" } },
      },
    }));
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  const embedGroupsNamed = (name: string) =>
    (
      h.emulator.state() as unknown as {
        embedTenants: Array<{ name: string; groups: Array<{ id: string; name: string }> }>;
      }
    ).embedTenants
      .find((t) => t.name === "acme")
      ?.groups.filter((g) => g.name === name) ?? [];

  /**
   * Two embed-tenant sources share tenant acme (no groupPrefix). hr's create of "Contested Embed"
   * is applied with its answer lost; sales then pushes a group of that name and meets the 409. The
   * hr admin expects the embed group to stay hr's; sales' group is the visible conflict (as when hr
   * already owns it: invariants/embed-isolation.test.ts).
   */
  it("the embed group stays the first source's; the second source's claim is the visible conflict", async () => {
    let creates = 0;
    proxy.rule = (call) => {
      const body = call.body as { name?: string } | undefined;
      if (call.method !== "POST" || call.path !== "/api/v1/embed-tenants/acme/groups") return undefined;
      if (body?.name !== "Contested Embed") return undefined;
      creates++;
      if (creates === 1) return { kind: "ghost" };
      if (creates <= 5) return { kind: "answer", status: 503 };
      return undefined;
    };
    const mine = await h.scim("hr").createGroup("Contested Embed", []);
    await waitFor(async () => (await entity(h, "hr", "groups", mine.id)).state === "retrying", {
      what: "hr's embed group create to be in doubt and wait for a retry",
    });
    const platformId = embedGroupsNamed("Contested Embed")[0]?.id;
    expect(platformId).toBeDefined();
    const theirs = await h.scim("sales").createGroup("Contested Embed", []);
    await h.waitForIdle(30_000);
    proxy.rule = undefined;

    expect(embedGroupsNamed("Contested Embed").map((g) => g.id)).toEqual([platformId]);
    expect(await entity(h, "hr", "groups", mine.id)).toMatchObject({ state: "synced", platformId });
    expect((await entity(h, "sales", "groups", theirs.id)).lastError?.code).toBe("ownership_conflict");

    // Deleting sales' group does not delete hr's.
    expect((await h.scim("sales").deleteGroup(theirs.id)).status).toBe(204);
    await h.waitForIdle();
    expect(embedGroupsNamed("Contested Embed").map((g) => g.id)).toEqual([platformId]);
  }, 45_000);
});
