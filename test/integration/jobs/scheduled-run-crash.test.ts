/**
 * A scheduled reconciliation tick (jobs/reconcile/reconcile-queue.ts processScheduledTick) writes
 * the run's record (`queued`, OperationStore.create) and then, in a separate step, enqueues its job.
 * A process killed between the two leaves a run `queued` that no job holds: the next tick enqueues
 * it again (one job per run and phase, so a no-op while its job exists), and the run is taken.
 * **Was a bug** (found in review round r's crash-window audit): the next ticks read it as "a run in
 * progress" and created none, for STUCK_AFTER_MS (6 h: twelve scheduled reconciliations at the
 * default schedule), and the record was never settled nor trimmed.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { processScheduledTick } from "../../../jobs/reconcile/reconcile-queue.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { deleteKeys, TEST_REDIS_URL, testPrefix } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("scheduled-run-crash");
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe("scheduled reconciliation tick, killed between the run's record and its job", () => {
  it("the next tick enqueues the queued run again", async () => {
    const runs = new ReconcileRunStore(redis, prefix, 50);
    const deps = { config: { sources: { okta: {} } }, runs } as unknown as ReconcileDeps;

    // The tick dies right after the run's record is written: its enqueue never happens.
    const killed = await processScheduledTick(deps, "okta", async () => {
      throw new Error("killed");
    }).catch(() => "killed");
    expect(killed).toBe("killed");
    const [orphan] = await runs.listAll({ source: "okta" });
    expect(orphan?.state).toBe("queued");

    // The scheduler fires again (30 min later by default): the queued run is handed its job, and
    // no second run is made beside it.
    const enqueued: string[] = [];
    const outcome = await processScheduledTick(deps, "okta", async (runId) => {
      enqueued.push(runId);
    });
    expect(outcome).toMatch(/in progress/);
    expect(enqueued).toEqual([orphan?.runId]);
    expect(await runs.listAll({ source: "okta" })).toHaveLength(1);
  });
});
