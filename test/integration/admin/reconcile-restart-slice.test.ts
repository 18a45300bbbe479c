/**
 * A run reads attribute values for one slice of a large source's users, and successive runs walk
 * through the slices (src/reconcile/attribute-slices.ts). A run started over (its job handed back
 * by a rolling deploy's forced close, or stalled) reads the slice it took when it first started:
 * taking another turn would make the source's runs skip a slice at every restart.
 */
import { randomUUID } from "node:crypto";
import { type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobHandedOn } from "../../../jobs/job-lease.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { processReconcileJob } from "../../../jobs/reconcile/reconcile-queue.js";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";
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

  it("a run whose start is refused (its job handed over as it starts) takes no turn", async () => {
    const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    const name = `restart-slice-${randomUUID().slice(0, 8)}`;
    const queue = new Queue(name, { connection, prefix: h.prefix });
    const taker = new Worker(name, null, { connection, prefix: h.prefix, autorun: false });
    try {
      const run = await deps.runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
      await queue.add("run", { runId: run.runId, phase: "run" });
      const token = randomUUID();
      const job = (await taker.getNextJob(token)) as Job;
      const turnKey = deps.runs.key("attribute-turn:okta");
      const turnBefore = Number((await h.storeRedis.get(turnKey)) ?? 0);
      // Past its lease check, as it plans its slice: the job is handed back and taken by another holder.
      let handedOver = false;
      const directory = Object.create(h.directory, {
        countEntities: {
          value: async (...args: Parameters<typeof h.directory.countEntities>) => {
            if (!handedOver) {
              handedOver = true;
              await job.moveToWait(token);
              expect(await taker.getNextJob(randomUUID())).toBeDefined();
            }
            return h.directory.countEntities(...args);
          },
        },
      });

      const answer = await processReconcileJob({ ...deps, directory }, job.data, job, token);

      expect(handedOver).toBe(true);
      expect(answer).toBe("handed_on");
      expect(Number((await h.storeRedis.get(turnKey)) ?? 0)).toBe(turnBefore);
      // The next holder takes the turn the refused start did not.
      const done = await runReconcile(deps, run.runId);
      expect(done?.attributeSlice).toEqual({ slice: (turnBefore + 1) % 3, slices: 3 });
    } finally {
      await taker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
    }
  }, 30_000);
});
