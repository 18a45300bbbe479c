/**
 * Before calling an unseen entity deletedBehind, a run reads its platform object once more: a sync
 * may have created it after the listing had passed its page (scan-directory.ts). Those a sync
 * recorded during the run are always read; the others at most maxUnseenRereads a run, so that a
 * platform wiped behind the bridge costs the run a bounded number of reads, not one per user.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import { type JobsHarness, reconcileDeps, startJobsHarness } from "../jobs/jobs-harness.js";

describe("re-reads of unseen entities", () => {
  let h: JobsHarness;
  const wiped: string[] = [];

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-rereads");
    for (let i = 0; i < 6; i++) {
      wiped.push((await h.directory.createUser("okta", h.user(`wiped${i}@example.com`))).resource.id);
    }
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("reads at most maxUnseenRereads of a wiped platform's users again, and always a user synced during the run", async () => {
    const pids = (await h.state.getUserPlatformIds("okta", wiped)) as string[];
    expect(pids.every((pid) => typeof pid === "string")).toBe(true);
    // Wiped behind the bridge's back.
    for (const pid of pids) await h.platform.deleteUser(pid);
    const before = h.emulator.requests().length;
    let lateId: string | undefined;
    const directory = Object.create(h.directory) as typeof h.directory;
    // The identity provider creates a user once the run's platform listing is over: its sync
    // creates it on the platform before the run's directory pass reaches it.
    directory.scanIds = (source, kind, count) => {
      const ids = h.directory.scanIds(source, kind, count);
      return (async function* () {
        if (kind === "user" && !lateId) {
          lateId = (await h.directory.createUser("okta", h.user("late@example.com"))).resource.id;
          await h.waitForIdle();
        }
        yield* ids;
      })();
    };
    const deps = reconcileDeps(h, { directory, maxUnseenRereads: 2 });
    const runs = deps.runs;
    const run = await runs.createRun({ source: "okta", dryRun: true, trigger: "admin" });
    // The run starts well after the users' syncs (more than another process's clock may lag).
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    const done = await runReconcile(deps, run.runId).finally(() => vi.useRealTimers());

    expect(done?.state).toBe("succeeded");
    expect(done?.counts.deletedBehind).toBe(wiped.length);
    const lateDrift = Object.values(done?.samples ?? {})
      .flat()
      .filter((entry) => (entry as { id?: string }).id === lateId);
    expect(lateDrift).toEqual([]);
    const reads = h.emulator
      .requests()
      .slice(before)
      .filter((r) => r.operation === "getUser" && pids.some((pid) => r.path.endsWith(`/${pid}`)));
    expect(reads).toHaveLength(2);
  }, 30_000);
});
