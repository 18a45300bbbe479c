import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { evaluateGuard } from "../../../src/reconcile/deprovision-guard.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { resyncSettled, runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };
const KEEP_RUNS = 3;

/**
 * Invariant 8: a confirmation deprovisions no more than the admin was shown, and a held run or
 * resync waits for its admin however many runs come after it (keepRuns trims finished ones only).
 */
describe("held runs and resyncs", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];

  const pid = async (id: string) => (await h.state.getUserPlatformIds("okta", [id]))[0] as string;
  const activeOnPlatform = () =>
    h.emulator
      .state()
      .users.filter((u) => u.active !== false)
      .map((u) => String(u.userName))
      .sort();
  const names = (from: number, to: number) =>
    Array.from({ length: to - from }, (_v, i) => `h${from + i}@example.com`);
  async function reactivateBehind(ids: string[]): Promise<void> {
    for (const id of ids) h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
  }

  beforeAll(async () => {
    h = await startJobsHarness("held-operations");
    jobs = await startAdminJobsOver(h, { maxDeprovisionShare: 0.1, keepRuns: KEEP_RUNS });
    for (let i = 0; i < 20; i++) {
      users.push((await h.directory.createUser("okta", h.user(`h${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
    // Users 0..14 are inactive at the source.
    for (const id of users.slice(0, 15)) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    expect(activeOnPlatform()).toEqual(names(15, 20));
  }, 60_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("a confirmed resync deprovisions only the users its guard counted; more found since wait in a new held resync", async () => {
    await reactivateBehind(users.slice(0, 3));
    const op = await resyncSettled(jobs, (await jobs.service.triggerResync("okta", { all: true }, admin)).id);
    expect(op.state).toBe("awaiting-confirmation");
    expect(op.guard).toMatchObject({ plannedDeprovisions: 3, ownedUsers: 20, tripped: true });

    // More drift after the admin was shown 3: the other 12 inactive users are active again.
    await reactivateBehind(users.slice(3, 15));
    await jobs.service.settleResync(op.id, "confirm", admin);
    const done = await resyncSettled(jobs, op.id);
    expect(done).toMatchObject({ state: "succeeded", withheld: 12, enqueued: 8 });
    await h.waitForIdle();
    // Only the 3 shown were deactivated (not 15 = 75% of the source).
    expect(activeOnPlatform()).toEqual([...names(3, 15), ...names(15, 20)].sort());

    const again = await jobs.resyncs.get(done.heldAgainAs as string);
    expect(again).toMatchObject({ state: "awaiting-confirmation", heldFrom: op.id, total: 12 });
    expect(again?.guard).toMatchObject({ plannedDeprovisions: 12, ownedUsers: 20, tripped: true });
    expect(again?.scope).toEqual({ users: expect.arrayContaining(users.slice(3, 15)), groups: [] });

    await jobs.service.settleResync(again?.id as string, "confirm", admin);
    expect(await resyncSettled(jobs, again?.id as string)).toMatchObject({
      state: "succeeded",
      enqueued: 12,
    });
    expect((await jobs.resyncs.get(again?.id as string))?.withheld).toBeUndefined();
    await h.waitForIdle();
    expect(activeOnPlatform()).toEqual(names(15, 20));
  }, 60_000);

  it("a held run outlives more than keepRuns later runs and can still be confirmed", async () => {
    await reactivateBehind(users.slice(0, 3));
    const held = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(held.state).toBe("awaiting-confirmation");
    expect(held.guard).toMatchObject({ plannedDeprovisions: 3, tripped: true });

    const dryRuns: string[] = [];
    for (let i = 0; i < KEEP_RUNS + 2; i++) {
      const dry = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
      expect(dry.state).toBe("succeeded");
      dryRuns.push(dry.runId);
    }
    const listed = await jobs.runs.list({ source: "okta", offset: 0, limit: 100 });
    // Trimmed when the newest was created (queued, so not counted): keepRuns finished runs before
    // it, the newest, and the held one besides. The oldest dry run is gone.
    expect(listed.total).toBe(KEEP_RUNS + 2);
    expect(listed.items.map((run) => run.runId)).toEqual([...dryRuns.slice(1).reverse(), held.runId]);

    expect((await jobs.service.getRun(held.runId)).state).toBe("awaiting-confirmation");
    await jobs.service.confirmRun(held.runId, admin);
    expect(await runSettled(jobs, held.runId)).toMatchObject({ state: "succeeded", settledBy: "test-admin" });
    await h.waitForIdle();
    expect(activeOnPlatform()).toEqual(names(15, 20));

    // Settled, it is a finished run like the others: the next run trims it.
    await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
    expect(await jobs.runs.get(held.runId)).toBeNull();
  }, 60_000);

  it("a held scheduled run replaces the older held scheduled runs; a held run an admin started stays", async () => {
    // Held runs are never trimmed: without this, a source whose drift keeps tripping the guard
    // would add one held run, repair sets and all, on every scheduled tick.
    await reactivateBehind(users.slice(0, 3));
    const scheduled = async () => {
      const run = await jobs.runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
      await jobs.queues[0]?.add("run", { runId: run.runId, phase: "run" }, { jobId: `run-${run.runId}` });
      return runSettled(jobs, run.runId);
    };
    const byAdmin = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    const first = await scheduled();
    const second = await scheduled();
    expect([byAdmin.state, first.state, second.state]).toEqual(Array(3).fill("awaiting-confirmation"));
    const third = await scheduled();
    expect(third.state).toBe("awaiting-confirmation");
    for (const older of [first, second]) {
      expect(await jobs.runs.get(older.runId)).toMatchObject({
        state: "discarded",
        settledBy: "scheduler",
        supersededBy: expect.any(String),
      });
    }
    expect((await jobs.runs.get(second.runId))?.supersededBy).toBe(third.runId);
    expect((await jobs.runs.get(byAdmin.runId))?.state).toBe("awaiting-confirmation");
    // The newest held run still applies what it held; the admin's is settled by the admin.
    await jobs.service.confirmRun(third.runId, admin);
    expect(await runSettled(jobs, third.runId)).toMatchObject({ state: "succeeded" });
    await jobs.service.discardRun(byAdmin.runId, admin);
    await h.waitForIdle();
    expect(activeOnPlatform()).toEqual(names(15, 20));
  }, 60_000);

  it("GET /status lists what waits for an admin's confirmation", async () => {
    await reactivateBehind(users.slice(0, 3));
    const held = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(held.state).toBe("awaiting-confirmation");
    const status = await jobs.service.status();
    expect(status.awaitingConfirmation).toContainEqual({
      kind: "reconcile",
      id: held.runId,
      source: "okta",
      plannedDeprovisions: 3,
      ownedUsers: 20,
    });
    await jobs.service.discardRun(held.runId, admin);
    expect((await jobs.service.status()).awaitingConfirmation.map((op) => op.id)).not.toContain(held.runId);
    // Left as it was for the next test: the drift is still there, repaired by a confirmed run.
    const again = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    await jobs.service.confirmRun(again.runId, admin);
    await runSettled(jobs, again.runId);
    await h.waitForIdle();
    expect(activeOnPlatform()).toEqual(names(15, 20));
  }, 60_000);

  it("a held resync outlives more than keep later resyncs, with its held set", async () => {
    const store = new ResyncStore(h.storeRedis, `${h.config.redis.prefix}:keep`, 2);
    const guard = evaluateGuard(2, 20, 0.1);
    const held = await store.createOperation({
      source: "okta",
      scope: { users: ["a", "b"], groups: [] },
      held: { guard, users: ["a", "b"], from: "earlier" },
    });
    for (let i = 0; i < 4; i++) {
      const op = await store.createOperation({ source: "okta", scope: { all: true } });
      await store.transition({ ...op, state: "succeeded" }, ["queued"]);
    }
    const after = await store.createOperation({ source: "okta", scope: { all: true } });
    expect((await store.get(held.id))?.state).toBe("awaiting-confirmation");
    expect(await store.heldAmong(held.id, ["a", "b", "c"])).toEqual([true, true, false]);
    const listed = await store.list({ source: "okta", offset: 0, limit: 10 });
    // Two finished, the queued one, and the held one.
    expect(listed.items.map((op) => op.id)).toEqual(expect.arrayContaining([held.id, after.id]));
    expect(listed.total).toBe(4);
  });
});
