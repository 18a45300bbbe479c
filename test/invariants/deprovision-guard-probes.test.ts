import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * Invariant 8 probed where a guard is easiest to get wrong: a platform listing that fails half-way
 * (the users not seen must not be taken for deleted behind the bridge's back, nor the orphans of
 * the pages seen deactivated), a source that owns no user yet, and one that owns a single user.
 */
describe("the deprovisioning guard at its edges", () => {
  let h: TestBridge;

  const settle = async (path: string) =>
    waitFor(
      async () => {
        const res = await h.admin().get(path);
        return SETTLED.includes(res.body.state) ? res.body : null;
      },
      { what: `${path} to settle`, timeoutMs: 30_000 },
    );
  const reconcile = async (source: string) => {
    const res = await h.admin().post(`/sources/${source}/reconcile`, { dryRun: false });
    expect(res.status).toBe(202);
    return res.body.runId as string;
  };
  const writes = () => {
    const counters = h.emulator.counters().byOperation;
    return ["createUser", "patchUser", "replaceUser", "deleteUser", "bulkUsers"].reduce(
      (sum, op) => sum + (counters[op]?.calls ?? 0),
      0,
    );
  };
  const activeOrphans = (ids: string[]) =>
    h.emulator.state().users.filter((u) => ids.includes(String(u.id)) && u.active !== false).length;

  beforeAll(async () => {
    h = await startTestBridge("inv-guard-probes", {
      sources: {
        okta: { tokens: ["okta-token"] },
        fresh: { tokens: ["fresh-token"] },
        solo: { tokens: ["solo-token"] },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.5, keepRuns: 50 },
      },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("a listing that fails after its first page fails the run: nothing deactivated, nothing created again", async () => {
    const scim = h.scim("okta");
    for (let i = 0; i < 5; i++) await scim.createUser(`listed${i}@example.com`);
    await h.waitForIdle();
    const orphans = h.emulator.seed({
      users: Array.from({ length: 150 }, (_, i) => ({ userName: `orphan${i}@example.com`, active: true })),
    }).users;
    expect(activeOrphans(orphans)).toBe(150);
    const before = writes();

    // The first page is slow; every page after it fails, however often it is asked for.
    h.emulator.addFault({ type: "slow", delayMs: 1_000, count: 1, match: { operation: "listUsers" } });
    const runId = await reconcile("okta");
    await waitFor(async () => (await h.admin().get(`/reconcile-runs/${runId}`)).body.state === "running", {
      what: "the run to start",
    });
    h.emulator.addFault({ type: "error", status: 503, match: { operation: "listUsers" } });
    const run = await settle(`/reconcile-runs/${runId}`);
    h.emulator.clearFaults();
    expect(run.state).toBe("failed");
    expect(run.repairs).toMatchObject({ applied: false });
    await h.waitForIdle();
    expect(writes()).toBe(before);
    expect(activeOrphans(orphans)).toBe(150);

    // The same run once the platform answers again: 150 orphans of 5 owned users wait for an
    // admin, and go once confirmed; nobody is created again.
    const again = await settle(`/reconcile-runs/${await reconcile("okta")}`);
    expect(again).toMatchObject({
      state: "awaiting-confirmation",
      counts: { orphans: 150, deletedBehind: 0, missing: 0 },
    });
    expect(writes()).toBe(before);
    expect((await h.admin().post(`/reconcile-runs/${again.runId}/confirm`)).status).toBeLessThan(300);
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${again.runId}`)).body.state === "succeeded",
      {
        what: "the confirmed run",
      },
    );
    await h.waitForIdle();
    expect(activeOrphans(orphans)).toBe(0);
    expect(h.emulator.count("createUser")).toBe(5);
  });

  it("a source that owns one user: its one deactivation is above any share below 1, and waits", async () => {
    const solo = await h.scim("solo").createUser("solo@example.com");
    await h.waitForIdle();
    await h.scim("solo").patchUser(solo.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    const pid = h.platformUsers().get("solo@example.com")?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: true });
    const run = await settle(`/reconcile-runs/${await reconcile("solo")}`);
    expect(run).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 1, ownedUsers: 1, tripped: true },
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("solo@example.com")?.active).toBe(true);
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/confirm`)).status).toBeLessThan(300);
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${run.runId}`)).body.state === "succeeded",
      {
        what: "the confirmed run",
      },
    );
    await h.waitForIdle();
    expect(h.platformUsers().get("solo@example.com")?.active).toBe(false);
  });

  it("a source that owns no user yet holds any deprovisioning; discard changes nothing, and the run cannot be confirmed after", async () => {
    const [orphan] = h.emulator.seed({
      users: [{ userName: "lonely-orphan@example.com", active: true }],
    }).users;
    const run = await settle(`/reconcile-runs/${await reconcile("fresh")}`);
    expect(run).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 1, ownedUsers: 0, tripped: true },
    });
    const before = writes();
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/discard`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(writes()).toBe(before);
    expect(activeOrphans([orphan as string])).toBe(1);
    // A discarded run cannot be confirmed afterwards.
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/confirm`)).status).toBe(409);
    await h.waitForIdle();
    expect(activeOrphans([orphan as string])).toBe(1);
  });
});
