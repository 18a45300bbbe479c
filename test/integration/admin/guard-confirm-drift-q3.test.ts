/**
 * Found in review (round q3): a confirmed reconciliation deprovisioned more users than the admin was shown. A held
 * run keeps its repair set (entity refs); applyConfirmedRun enqueues a resync of every one of them,
 * and each resync does whatever the state says at that moment. Users in the set for a harmless
 * difference (a displayName changed on the platform) whose platform user was made active again
 * after the run (behind the bridge's back) are deactivated by the confirmation, though the admin
 * confirmed only the run's counted deactivations. A confirmed resync withholds exactly this
 * (resync-runner.ts withholdUnshown/holdAgain); a confirmed reconciliation does not.
 *
 * 10 users, 7 leavers (inactive at the source and on the platform). Behind the bridge's back:
 * leavers 0-1 are active again (the run counts 2 of 10: held), leavers 2-6 get a new displayName
 * (drift "changed", no deprovisioning). While the run waits, leavers 2-6 are made active again
 * on the platform. The admin confirms 2 deactivations; 7 were deactivated. Now the confirmed run
 * counts again what its repairs would deprovision (as a resync's guard does): 7 > 2, so nothing is
 * applied and the run fails naming both counts; a new run shows the admin the new count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("what a confirmed reconciliation deprovisions", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  const pid = async (id: string) => (await h.state.getUserPlatformIds("okta", [id]))[0] as string;
  const activeOnPlatform = () => h.emulator.state().users.filter((u) => u.active !== false).length;

  beforeAll(async () => {
    h = await startJobsHarness("review-q3-confirm-larger");
    jobs = await startAdminJobsOver(h, { orphans: "report", maxDeprovisionShare: 0.1 });
    for (let i = 0; i < 10; i++) {
      users.push((await h.directory.createUser("okta", h.user(`c${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
    for (const id of users.slice(0, 7)) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    expect(activeOnPlatform()).toBe(3);
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("deprovisions no more than the run showed the admin: drift since the hold fails the run, nothing applied", async () => {
    for (const id of users.slice(0, 2))
      h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
    for (const id of users.slice(2, 7))
      await h.platform.patchUser(await pid(id), [{ op: "replace", path: "displayName", value: "Renamed" }]);
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 2, ownedUsers: 10, tripped: true });
    expect(activeOnPlatform()).toBe(5);

    // While the run waits, leavers 2-6 become active again on the platform (behind the bridge).
    for (const id of users.slice(2, 7))
      h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
    expect(activeOnPlatform()).toBe(10);

    await jobs.service.confirmRun(run.runId, admin);
    const applied = await runSettled(jobs, run.runId);
    await h.waitForIdle();
    // Confirmed: 2 deactivations; the repairs would now make 7. Nothing is applied.
    expect({ state: applied.state, activeAfter: activeOnPlatform() }).toEqual({
      state: "failed",
      activeAfter: 10,
    });
    expect(applied.error).toContain("would now deactivate or delete 7 users, the confirmation was for 2");
    // A new run shows the admin what is to be deprovisioned now.
    const again = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(again.state).toBe("awaiting-confirmation");
    expect(again.guard).toMatchObject({ plannedDeprovisions: 7, ownedUsers: 10, tripped: true });
  });
});
