import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

/**
 * Probes h: a held scheduled run supersedes the source's older held scheduled runs however many
 * runs came between them. It read only the newest 500 runs of the source (the limit GET /status had
 * until a6afb9e): with `reconcile.keepRuns` above 500 an older held scheduled run stayed held for
 * ever, repair sets and all, next to the newer one.
 */
describe("probes h: superseding an old held scheduled run", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;

  const scheduled = async () => {
    const run = await jobs.runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
    await jobs.queues[0]?.add("run", { runId: run.runId, phase: "run" }, { jobId: `run-${run.runId}` });
    return runSettled(jobs, run.runId);
  };

  beforeAll(async () => {
    h = await startJobsHarness("held-supersede-h");
    jobs = await startAdminJobsOver(h, { maxDeprovisionShare: 0.1, keepRuns: 700 });
    const users: string[] = [];
    for (let i = 0; i < 10; i++) {
      users.push((await h.directory.createUser("okta", h.user(`s${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
    for (const id of users.slice(0, 2)) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle();
    // Reactivated behind the bridge's back: 2 of 10 to deactivate trips the guard (0.1).
    const pids = await h.state.getUserPlatformIds("okta", users.slice(0, 2));
    for (const pid of pids)
      h.emulator.drift({ action: "setUserActive", userId: pid as string, active: true });
  }, 60_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("after 520 later runs", async () => {
    const first = await scheduled();
    expect(first.state).toBe("awaiting-confirmation");
    for (let i = 0; i < 520; i++) {
      const run = await jobs.runs.createRun({ source: "okta", dryRun: true, trigger: "schedule" });
      await jobs.runs.transition({ ...run, state: "succeeded" }, ["queued"]);
    }
    expect((await jobs.runs.get(first.runId))?.state).toBe("awaiting-confirmation");

    const second = await scheduled();
    expect(second.state).toBe("awaiting-confirmation");
    // The run is held before it looks for older ones: wait for the look (it never ended before).
    const superseded = await waitFor(
      async () => {
        const run = await jobs.runs.get(first.runId);
        return run?.state === "discarded" ? run : null;
      },
      { timeoutMs: 5_000, what: "the older held run superseded" },
    );
    expect(superseded).toMatchObject({ settledBy: "scheduler", supersededBy: second.runId });
    const held = (await jobs.service.status()).awaitingConfirmation.map((op) => op.id);
    expect(held).toEqual([second.runId]);
  }, 60_000);

  it("while runs read already are trimmed: the older held run does not fall between two pages", async () => {
    const [older] = (await jobs.service.status()).awaitingConfirmation;
    const finished: string[] = [];
    for (let i = 0; i < 150; i++) {
      const run = await jobs.runs.createRun({ source: "okta", dryRun: true, trigger: "schedule" });
      await jobs.runs.transition({ ...run, state: "succeeded" }, ["queued"]);
      finished.push(run.runId);
    }
    // The runner's walk in pages of 100; after the first, 60 of the runs it read are trimmed (what
    // OperationStore.remove does). Offset pages started the second page 60 runs too far on, past
    // the held run (the 152nd newest).
    const pages = jobs.runs.pages.bind(jobs.runs);
    let trimmed = 0;
    jobs.runs.pages = async function* (options = {}) {
      let first = true;
      for await (const page of pages({ ...options, pageSize: 100 })) {
        yield page;
        if (!first || page.length < 100) continue;
        first = false;
        for (const id of finished.slice(-61, -1)) await jobs.runs.remove(id, "okta");
        trimmed += 60;
      }
    };
    try {
      const third = await scheduled();
      expect(third.state).toBe("awaiting-confirmation");
      const superseded = await waitFor(
        async () => {
          const run = await jobs.runs.get(older?.id as string);
          return run?.state === "discarded" ? run : null;
        },
        { timeoutMs: 5_000, what: "the older held run superseded" },
      );
      expect(superseded).toMatchObject({ settledBy: "scheduler", supersededBy: third.runId });
      expect(trimmed).toBe(60);
    } finally {
      jobs.runs.pages = pages;
    }
  }, 60_000);
});
