/**
 * Review round q3, attacks the guard withstood: a source that owns one user (1/1 trips), a run
 * confirmed twice (the second is refused), a discarded run confirmed afterwards (refused, nothing
 * deprovisioned).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("the guard with one owned user, double confirms, confirm after discard", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  let only = "";
  const pid = async (id: string) => (await h.state.getUserPlatformIds("okta", [id]))[0] as string;
  const activeOnPlatform = () => h.emulator.state().users.filter((u) => u.active !== false).length;

  beforeAll(async () => {
    h = await startJobsHarness("review-q3-guard-holds");
    jobs = await startAdminJobsOver(h, { orphans: "report", maxDeprovisionShare: 0.1 });
    only = (await h.directory.createUser("okta", h.user("solo@example.com"))).resource.id;
    await h.waitForIdle();
    await h.directory.updateUser("okta", only, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(activeOnPlatform()).toBe(0);
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("holds 1 of 1, refuses a confirmation after a discard", async () => {
    h.emulator.drift({ action: "setUserActive", userId: await pid(only), active: true });
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run.guard).toMatchObject({ plannedDeprovisions: 1, ownedUsers: 1, tripped: true });
    await jobs.service.discardRun(run.runId, admin);
    await expect(jobs.service.confirmRun(run.runId, admin)).rejects.toThrow(/not awaiting-confirmation/);
    await h.waitForIdle();
    expect(activeOnPlatform()).toBe(1);
  });

  it("refuses a second confirmation of the same run", async () => {
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    const [first, second] = await Promise.allSettled([
      jobs.service.confirmRun(run.runId, admin),
      jobs.service.confirmRun(run.runId, admin),
    ]);
    expect([first.status, second.status].sort()).toEqual(["fulfilled", "rejected"]);
    const applied = await runSettled(jobs, run.runId);
    expect(applied.state).toBe("succeeded");
    await h.waitForIdle();
    expect(activeOnPlatform()).toBe(0);
  });
});
