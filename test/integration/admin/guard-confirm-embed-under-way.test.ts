/**
 * Invariant 8, the other side of guard-confirm-embed-drift: a confirmation of a held embed-tenant run
 * reads what its group repairs would take out now as the scan read it, so a member the identity
 * provider took out of a group while the run waited (its group's own sync not run yet: workers
 * busy, rate limited, blocked) is the sync's removal, not the run's, and the confirmation applies.
 * **Was a bug** (found in review round t, of 708cead): the check counted every member a group
 * resync would take out now, and the confirmation failed, applying nothing, with no drift.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("confirming a held embed run while a group's own sync is pending", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  let group = "";

  beforeAll(async () => {
    h = await startJobsHarness("guard-confirm-embed-under-way", {
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
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("a removal the identity provider made (its sync pending) does not fail the confirmation", async () => {
    const applied = await h.state.getApplied<AppliedEmbedGroup>({ source: "acme", kind: "group", id: group });
    // Drift: 3 inactive users put back behind the bridge's back; the run shows 3 removals, held.
    await h.platform.addEmbedGroupMembers("acme", applied!.platformId!, [
      { externalId: "ext-0" },
      { externalId: "ext-1" },
      { externalId: "ext-2" },
    ]);
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("acme", false, admin)).runId);
    expect(run.state).toBe("awaiting-confirmation");
    expect(run.guard).toMatchObject({ plannedDeprovisions: 3, tripped: true });

    // While it waits, the identity provider takes ext-9 out of the group; its sync has not run yet.
    await h.stopWorkers();
    await h.directory.replaceGroup("acme", group, h.group("Analysts"), users.slice(0, 9));

    await jobs.service.confirmRun(run.runId, admin);
    const after = await waitFor(
      async () => {
        const r = await jobs.runs.get(run.runId);
        return r && r.state !== "queued" ? r : null;
      },
      { what: "the confirmed run to start applying" },
    );
    // ext-9's removal is the identity provider's own (its group sync does it anyway), not drift.
    expect(after.error).toBeUndefined();
    expect(after.state).not.toBe("failed");
  });
});
