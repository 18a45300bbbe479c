import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { resyncSettled, runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("the mass-deprovisioning guard (invariant 8)", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  let orphanId = "";

  const pid = async (id: string) => (await h.state.getUserPlatformIds("okta", [id]))[0] as string;
  const activeOnPlatform = () =>
    h.emulator
      .state()
      .users.filter((u) => u.active !== false)
      .map((u) => String(u.userName));

  /** Users 0..2 are inactive at the source; behind the bridge's back they become active again. */
  async function reactivateBehind(): Promise<void> {
    for (const id of users.slice(0, 3))
      h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
  }

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-guard");
    jobs = await startAdminJobsOver(h, { orphans: "deactivate", maxDeprovisionShare: 0.1 });
    for (let i = 0; i < 10; i++) {
      users.push((await h.directory.createUser("okta", h.user(`g${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
    for (const id of users.slice(0, 3)) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(7);
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("holds a run above the share: nothing is deprovisioned until an admin confirms", async () => {
    await reactivateBehind();
    orphanId = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "orphan@example.com" },
    }) as string;
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 4, ownedUsers: 10, tripped: true });
    expect(run.counts).toMatchObject({ activeMismatch: 3, orphans: 1 });
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(11);

    await jobs.service.confirmRun(run.runId, admin);
    const applied = await runSettled(jobs, run.runId);
    expect(applied).toMatchObject({ state: "succeeded", settledBy: "test-admin" });
    expect(applied.repairs).toMatchObject({ entities: 3, orphanDeactivations: 1, applied: true });
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(7);
    expect(h.emulator.state().users.find((u) => u.id === orphanId)?.active).toBe(false);
  });

  it("a discarded run changes nothing", async () => {
    await reactivateBehind();
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    const discarded = await jobs.service.discardRun(run.runId, admin);
    expect(discarded.state).toBe("discarded");
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(10);
  });

  it("holds a whole-source resync above the share too, and applies it once confirmed", async () => {
    const op = await resyncSettled(jobs, (await jobs.service.triggerResync("okta", { all: true }, admin)).id);
    expect(op.state).toBe("awaiting-confirmation");
    expect(op.guard).toMatchObject({ plannedDeprovisions: 3, tripped: true });
    expect(op.enqueued).toBe(0);
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(10);

    await jobs.service.settleResync(op.id, "confirm", admin);
    const done = await resyncSettled(jobs, op.id);
    expect(done).toMatchObject({ state: "succeeded", total: 10, enqueued: 10 });
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(7);
  });

  it("a resync of a converged source writes nothing; unknown ids are named", async () => {
    await h.waitForIdle();
    const writes = h.writes();
    const op = await resyncSettled(
      jobs,
      (await jobs.service.triggerResync("okta", { users: [users[5]!, "no-such-user"], groups: [] }, admin))
        .id,
    );
    expect(op).toMatchObject({ state: "succeeded", enqueued: 1, total: 1, unknown: ["user/no-such-user"] });
    await h.waitForIdle();
    const all = await resyncSettled(
      jobs,
      (await jobs.service.triggerResync("okta", { all: true }, admin)).id,
    );
    expect(all).toMatchObject({ state: "succeeded", enqueued: 10 });
    await h.waitForIdle();
    expect(h.writes()).toBe(writes);
  });
});
