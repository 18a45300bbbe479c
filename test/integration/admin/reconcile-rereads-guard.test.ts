/**
 * Invariant 8 with bounded re-reads (scan-directory.ts): an unseen user the run does not read again
 * counts as deletedBehind, and its repair is a resync, which reads the platform and applies what
 * differs. For a user the source wants inactive that is on the platform after all (the listing
 * skipped it) and active there, that resync deactivates it: a deprovisioning the guard must count.
 * So such users are always read again, whatever the cap, and classified as listed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import { type JobsHarness, reconcileDeps, startJobsHarness } from "../jobs/jobs-harness.js";

describe("re-reads of unseen users the source wants inactive", () => {
  let h: JobsHarness;
  const inactive: string[] = [];

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-rereads-guard");
    for (let i = 0; i < 3; i++) {
      const user = h.user(`left${i}@example.com`, { active: false });
      inactive.push((await h.directory.createUser("okta", user)).resource.id);
    }
    await h.directory.createUser("okta", h.user("stays@example.com"));
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("reads them again past the cap: reactivated behind the bridge's back, they count for the guard", async () => {
    const pids = (await h.state.getUserPlatformIds("okta", inactive)) as string[];
    expect(pids.every((pid) => typeof pid === "string")).toBe(true);
    // Reactivated on the platform behind the bridge's back.
    await h.platform.bulkUsers("ACTIVATE", pids);
    // A listing that skips them (shifted under deletions made meanwhile on the platform).
    const platform = new Proxy(h.platform, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key !== "listUsers") return typeof value === "function" ? value.bind(target) : value;
        return async function* (options?: { pageSize?: number }) {
          for await (const user of target.listUsers(options)) if (!pids.includes(user.id)) yield user;
        };
      },
    }) as PlatformClient;
    const deps = reconcileDeps(h, { platform, maxUnseenRereads: 0 });
    const runs = deps.runs;
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    // The run starts well after the users' syncs: none of them counts as synced during the run.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    const done = await runReconcile(deps, run.runId).finally(() => vi.useRealTimers());

    expect(done?.counts).toMatchObject({ activeMismatch: inactive.length, deletedBehind: 0 });
    expect(done?.guard).toMatchObject({ plannedDeprovisions: inactive.length, tripped: true });
    expect(done?.state).toBe("awaiting-confirmation");
  }, 30_000);
});
