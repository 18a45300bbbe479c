/**
 * A run reads attribute values for one slice of a large source's users, and successive runs walk
 * through the slices (src/reconcile/attribute-slices.ts). A run started over (its job handed back
 * by a rolling deploy's forced close, or stalled) reads the slice it took when it first started:
 * taking another turn would make the source's runs skip a slice at every restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobHandedOn } from "../../../jobs/job-lease.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";
import { type JobsHarness, reconcileDeps, startJobsHarness } from "../jobs/jobs-harness.js";

describe("a real run started over", () => {
  let h: JobsHarness;
  let deps: ReconcileDeps;

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-restart-slice", {
      workers: false,
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" } },
        },
      },
    });
    for (let i = 0; i < 3; i++) await h.directory.createUser("okta", h.user(`slice${i}@example.com`));
    // Three users, one attribute read a run: three slices.
    deps = reconcileDeps(h, { maxAttributeChecksPerRun: 1 });
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("reads the slice it took when it first started, and takes no new turn", async () => {
    const run = await deps.runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
    // The first process: its job is handed back right after the run started (a rolling deploy).
    let checks = 0;
    const lease = {
      check: async () => {
        checks += 1;
        if (checks === 2) throw new JobHandedOn("run");
      },
    };
    await expect(runReconcile({ ...deps, lease }, run.runId)).rejects.toThrow(JobHandedOn);
    expect((await deps.runs.get(run.runId))?.state).toBe("running");

    // The next process runs it again: the same slice, not the next one.
    const done = await runReconcile(deps, run.runId);
    expect(done?.state).toBe("succeeded");
    expect(done?.attributeSlice).toEqual({ slice: 1, slices: 3 });

    // The source's next run reads the next slice.
    const next = await deps.runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
    expect((await runReconcile(deps, next.runId))?.attributeSlice).toEqual({ slice: 2, slices: 3 });
  }, 30_000);
});
