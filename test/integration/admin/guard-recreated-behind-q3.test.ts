/**
 * Found in review (round q3; a bug: planned 0, succeeded): a user the source wants inactive whose platform user was deleted behind the bridge's
 * back and created again (same userName, new id, active, owned by no source: a platform-side
 * restore or re-invite). Reconciliation classifies it `deletedBehind` (repair: a resync, counted as
 * no deprovisioning); resync counts it as nothing (getUser of the recorded id is null). The repair
 * creates the user, meets 409, adopts the platform user of that userName and DEACTIVATES it. The
 * guard never counted those deactivations (invariant 8), unlike the same adoption for a user
 * without a platform id (countAdoptedDeactivations / adoptedAndDeactivated).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { resyncSettled, runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("deactivations by adoption of users recreated behind the bridge's back", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];

  const activeOnPlatform = () =>
    h.emulator
      .state()
      .users.filter((u) => u.active !== false)
      .map((u) => String(u.userName));

  beforeEach(async () => {
    users.splice(0);
    h = await startJobsHarness(`review-q3-recreated-${Math.random().toString(36).slice(2, 8)}`);
    jobs = await startAdminJobsOver(h, { orphans: "report", maxDeprovisionShare: 0.1 });
    for (let i = 0; i < 10; i++) {
      users.push((await h.directory.createUser("okta", h.user(`r${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
    // Three leavers: inactive at the source, and on the platform.
    for (const id of users.slice(0, 3)) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    expect(activeOnPlatform()).toHaveLength(7);
    // Behind the bridge's back (a platform-side restore): the three are deleted and created again,
    // active, under new ids that no source owns.
    for (let i = 0; i < 3; i++) {
      const pid = (await h.state.getUserPlatformIds("okta", [users[i]!]))[0] as string;
      expect(await h.platform.deleteUser(pid)).toBe(true);
      h.emulator.drift({ action: "addOrphanUser", user: { userName: `r${i}@example.com`, active: true } });
    }
    expect(activeOnPlatform()).toHaveLength(10);
  }, 30_000);

  afterEach(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("a reconciliation that would deactivate 3 of 10 (30%) waits for an admin", async () => {
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    await h.waitForIdle();
    // What the run did on the platform: the three were deactivated unless the run was held.
    const activeAfter = activeOnPlatform().length;
    expect({ state: run.state, guard: run.guard, activeAfter }).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 3, tripped: true },
      activeAfter: 10,
    });
  });

  it("a resync of everything that would deactivate 3 of 10 (30%) waits for an admin", async () => {
    const op = await resyncSettled(jobs, (await jobs.service.triggerResync("okta", { all: true }, admin)).id);
    await h.waitForIdle();
    const activeAfter = activeOnPlatform().length;
    expect({ state: op.state, guard: op.guard, activeAfter }).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 3, tripped: true },
      activeAfter: 10,
    });
  });
});
