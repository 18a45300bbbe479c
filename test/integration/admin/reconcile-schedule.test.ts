import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ReconcileQueue,
  createReconcileQueue,
  processScheduledTick,
} from "../../../jobs/reconcile/reconcile-queue.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

describe("scheduled reconciliation (BullMQ job schedulers)", () => {
  const prefix = testPrefix("reconcile-schedule");
  const config = (sources: string[]) =>
    buildConfig({
      platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
      redis: { url: TEST_REDIS_URL, prefix },
      reconcile: { schedule: "*/30 * * * *" },
      sources: Object.fromEntries(sources.map((id) => [id, { tokens: [`${id}-token`] }])),
    });
  let redis: Redis;
  let connection: Redis;
  let queue: ReconcileQueue;
  let runs: ReconcileRunStore;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
    connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queue = createReconcileQueue({
      connection,
      prefix,
      logger: createLogger("silent"),
      name: `reconcile-${prefix}`,
    });
    runs = new ReconcileRunStore(redis, prefix, 3);
  });

  afterAll(async () => {
    await queue.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
    await connection.quit();
  });

  it("keeps one scheduler per configured source on a queue of its own, and drops removed sources", async () => {
    await queue.schedule(config(["okta", "entra"]));
    await queue.schedule(config(["okta", "entra"]));
    let schedulers = await queue.scheduleQueue.getJobSchedulers();
    expect(schedulers.map((s) => s.key).sort()).toEqual(["reconcile-entra", "reconcile-okta"]);
    expect(schedulers[0]?.pattern).toBe("*/30 * * * *");
    // The next runs wait delayed on the schedule queue, not on the reconcile queue (idle stays true).
    expect(await queue.queue.getJobCountByTypes("delayed", "waiting")).toBe(0);

    await queue.schedule(config(["okta"]));
    schedulers = await queue.scheduleQueue.getJobSchedulers();
    expect(schedulers.map((s) => s.key)).toEqual(["reconcile-okta"]);
  });

  it("a tick creates a run and enqueues it, unless one is already in progress", async () => {
    const deps = { config: config(["okta"]), runs } as unknown as ReconcileDeps;
    const runId = await processScheduledTick(deps, "okta", queue.enqueue);
    expect(await runs.get(runId)).toMatchObject({ state: "queued", trigger: "schedule", dryRun: false });
    expect(await queue.queue.getJob(`run-${runId}`)).toBeTruthy();
    expect(await processScheduledTick(deps, "okta", queue.enqueue)).toMatch(/^skipped/);
    expect(await processScheduledTick(deps, "gone", queue.enqueue)).toBe("unknown source");
  });

  it("keeps only the newest finished runs of a source (reconcile.keepRuns)", async () => {
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      const run = await runs.createRun({ source: "entra", dryRun: true, trigger: "admin" });
      await runs.transition({ ...run, state: "succeeded" }, ["queued"]);
      made.push(run.runId);
    }
    const listed = await runs.list({ source: "entra", offset: 0, limit: 10 });
    // Trimmed when each run was created (queued, so not counted yet): 3 finished ones before the newest.
    expect(listed.total).toBe(4);
    expect(listed.items.map((r) => r.runId)).toEqual(made.slice(2).reverse());
    expect(await runs.get(made[0]!)).toBeNull();
  });
});
