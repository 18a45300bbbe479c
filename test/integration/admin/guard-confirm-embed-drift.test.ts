/**
 * Invariant 8 for a confirmed reconciliation of an embed-tenant source: a confirmation never takes
 * out of a group an embed user the run did not show (applyConfirmedRun, reconcile-runner.ts;
 * guard-confirm-drift-q3 proves the workspace side). The held run's repairs are group resyncs that
 * do what the state says when they run: members put back on the platform while the run waited
 * would be taken out too. The run keeps the removals it showed (`embedShown`); a confirmation that
 * finds others applies nothing and fails, naming them; a new run shows the new count.
 * **Was a bug** (found by the chaos probe of review round r, test/e2e/chaos-guard.test.ts):
 * the recount at confirmation counted only orphans and user refs, and 6 were taken out on a
 * confirmation for 3.
 *
 * 10 embed users in one group, 6 of them inactive at the source (so out of the embed group).
 * Behind the bridge's back 3 inactive ones are put back into the embed group: the run counts
 * 3 of 10 (> 0.2): held. While it waits, the other 3 inactive ones are put back too. The admin
 * confirms 3 removals.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("what a confirmed reconciliation of an embed-tenant source deprovisions", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  let group = "";
  const members = () =>
    [
      ...(h.emulator
        .state()
        .embedTenants.find((t) => t.name === "acme")
        ?.groups.find((g) => g.name === "Analysts")?.members ?? []),
    ].sort();
  const putBack = async (from: number, to: number) => {
    const applied = await h.state.getApplied<AppliedEmbedGroup>({ source: "acme", kind: "group", id: group });
    await h.platform.addEmbedGroupMembers(
      "acme",
      applied!.platformId!,
      Array.from({ length: to - from }, (_, i) => ({ externalId: `ext-${from + i}` })),
    );
  };

  beforeAll(async () => {
    h = await startJobsHarness("guard-confirm-embed-drift", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
    });
    jobs = await startAdminJobsOver(h, { orphans: "report", maxDeprovisionShare: 0.2 });
    for (let i = 0; i < 10; i++) {
      users.push(
        (await h.directory.createUser("acme", { ...h.user(`e${i}@example.com`), externalId: `ext-${i}` }))
          .resource.id,
      );
    }
    group = (await h.directory.createGroup("acme", h.group("Analysts"), users)).resource.id;
    await h.waitForIdle();
    for (const id of users.slice(0, 6)) {
      await h.directory.updateUser("acme", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    expect(members()).toEqual(["ext-6", "ext-7", "ext-8", "ext-9"]);
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("deprovisions no more embed users than the run showed the admin", async () => {
    await putBack(0, 3);
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("acme", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 3, tripped: true });
    expect(members()).toHaveLength(7);

    // While the run waits, the other 3 inactive users are put back into the group.
    await putBack(3, 6);
    expect(members()).toHaveLength(10);

    await jobs.service.confirmRun(run.runId, admin);
    const applied = await runSettled(jobs, run.runId);
    await h.waitForIdle();
    // Confirmed: 3 removals. As for a workspace source, it applies nothing and fails, naming them.
    expect(members()).toHaveLength(10);
    expect(applied.state).toBe("failed");
    expect(applied.error).toMatch(/3 embed users out of groups that the confirmation did not show/);
  });
});
