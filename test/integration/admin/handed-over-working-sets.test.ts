/**
 * A reconciliation run keeps working sets in Redis (seen ids, planned repairs and orphans, embed
 * membership, adoptable userNames). Its record write checks the job's lock in its own script
 * (handed-over-record-write.test.ts); so must the writes of those sets: a job handed over between
 * a lease check and a set write (a forced close handed it back, another worker took it and started
 * the run over) must not let the old holder wipe or pollute the sets the new holder is building.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { processReconcileJob } from "../../../jobs/reconcile/reconcile-queue.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import type { TrackedRun } from "../../../src/admin/repair-outcome.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import type { RunState } from "../../../src/reconcile/reconcile-types.js";
import { JobTaker } from "../../helpers/handed-jobs.js";
import { type JobsHarness, reconcileDeps, startJobsHarness } from "../jobs/jobs-harness.js";

describe("a reconcile run's working sets when its job is handed over", () => {
  let h: JobsHarness;
  let jobs: JobTaker;

  beforeAll(async () => {
    h = await startJobsHarness("handed-over-sets", { workers: false });
    jobs = new JobTaker(h.prefix, "handed-over-sets");
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  /**
   * A job taken as a worker takes it. `handOverAfterNextCheck(then)`: the next lease check (an
   * extendLock of this holder) succeeds, then the job is handed back and taken by another holder,
   * and `then` runs as that holder's work; the old holder goes on past its check.
   */
  async function take(data: unknown) {
    const taken = await jobs.take(data);
    const { job, token } = taken;
    let pending: (() => Promise<void>) | undefined;
    let handedOver = false;
    const extendLock = job.extendLock.bind(job);
    job.extendLock = async (lockToken: string, duration: number) => {
      const extended = await extendLock(lockToken, duration);
      const then = pending;
      if (then && extended === 1) {
        pending = undefined;
        await jobs.handOver(taken);
        handedOver = true;
        await then();
      }
      return extended;
    };
    return {
      job,
      token,
      handOverAfterNextCheck(then: () => Promise<void>) {
        pending = then;
      },
      handedOver: () => handedOver,
    };
  }

  it("an old holder whose platform call fails after the hand-over does not drop the new holder's sets", async () => {
    const runs = new ReconcileRunStore(h.storeRedis, h.prefix, 10);
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const taken = await take({ runId: run.runId, phase: "run" });
    const repairsKey = runs.key(run.runId, "repairs");
    const seenKey = runs.key(run.runId, "seen:user");
    // The old holder's listing: the job is handed over while the call is out (a forced close), the
    // new holder starts the run over and records what it found, then the call fails.
    const platform = Object.create(h.platform, {
      listUsers: {
        value: async function* () {
          taken.handOverAfterNextCheck(async () => {
            await h.storeRedis.sadd(seenKey, "u-new");
            await h.storeRedis.sadd(repairsKey, "okta/user/u-new");
          });
          await taken.job.extendLock(taken.token, 30_000);
          throw new Error("socket hang up");
        },
      },
    }) as PlatformClient;
    const deps: ReconcileDeps = reconcileDeps(h, { runs, platform });

    const answer = await processReconcileJob(deps, taken.job.data, taken.job, taken.token);

    expect(taken.handedOver()).toBe(true);
    expect(answer).toBe("handed_on");
    expect((await runs.get(run.runId))?.state).toBe("running");
    expect(await h.storeRedis.smembers(seenKey)).toEqual(["u-new"]);
    expect(await h.storeRedis.smembers(repairsKey)).toEqual(["okta/user/u-new"]);
  }, 30_000);

  it("an old holder handed over right after its start does not drop the sets the new holder wrote", async () => {
    let taken: Awaited<ReturnType<typeof take>> | undefined;
    let seenKey = "";
    /** Arms the hand-over once the run's start is written: the check before the start's drop. */
    class HandingOverStore extends ReconcileRunStore {
      override async transition(next: TrackedRun, from: readonly RunState[], ...rest: unknown[]) {
        const written = await (super.transition as (...args: unknown[]) => Promise<boolean>)(
          next,
          from,
          ...rest,
        );
        if (taken && written && next.state === "running" && from.includes("queued")) {
          const current = taken;
          current.handOverAfterNextCheck(async () => {
            // The new holder has started the run over and recorded a user it saw.
            await h.storeRedis.sadd(seenKey, "u-new");
          });
        }
        return written;
      }
    }
    const runs = new HandingOverStore(h.storeRedis, h.prefix, 10);
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    seenKey = runs.key(run.runId, "seen:user");
    taken = await take({ runId: run.runId, phase: "run" });
    const deps: ReconcileDeps = reconcileDeps(h, { runs });

    const answer = await processReconcileJob(deps, taken.job.data, taken.job, taken.token);

    expect(taken.handedOver()).toBe(true);
    expect(answer).toBe("handed_on");
    expect(await h.storeRedis.smembers(seenKey)).toEqual(["u-new"]);
  }, 30_000);

  it("an old holder handed over past its check on a platform page adds nothing to the new holder's sets", async () => {
    // An active platform user no source owns: its userName is adoptable, recorded as the page is read.
    await h.platform.createUser({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "stray@example.com",
      active: true,
    });
    const runs = new ReconcileRunStore(h.storeRedis, h.prefix, 10);
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const taken = await take({ runId: run.runId, phase: "run" });
    const adoptableKey = runs.key(run.runId, "adoptable");
    // The check on the first page of platform users is the last the old holder passes: the new
    // holder starts the run over (its sets dropped) and has read nothing yet.
    const platform = Object.create(h.platform, {
      listUsers: {
        value: (...args: Parameters<PlatformClient["listUsers"]>) => {
          taken.handOverAfterNextCheck(async () => {
            await h.storeRedis.del(adoptableKey);
          });
          return h.platform.listUsers(...args);
        },
      },
    }) as PlatformClient;
    const deps: ReconcileDeps = reconcileDeps(h, { runs, platform });

    const answer = await processReconcileJob(deps, taken.job.data, taken.job, taken.token);

    expect(taken.handedOver()).toBe(true);
    expect(answer).toBe("handed_on");
    expect(await h.storeRedis.smembers(adoptableKey)).toEqual([]);
  }, 30_000);
});
