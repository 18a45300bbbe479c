/**
 * A run or resync whose job a forced close handed back to the queue (HeldJobs.handBack:
 * moveToWait with the lock token) stops in the closing process before its next chunk of Redis
 * work: the next bridge process runs the same job from its start, so this one must neither go on
 * fanning out nor write the record, and it records no failure (the job did not fail).
 */
import { describe, expect, it } from "vitest";
import { processReconcileJob } from "../../../jobs/reconcile/reconcile-queue.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { processResyncJob } from "../../../jobs/resync/resync-queue.js";
import type { ResyncDeps } from "../../../jobs/resync/resync-runner.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { type EntityRef, refKey } from "../../../src/scim/scim-types.js";
import { handedJobsSuite } from "../../helpers/handed-jobs.js";

describe("a run or resync handed back to the queue stops in the closing process", () => {
  const { prefix, config, redis, take } = handedJobsSuite("handed-back-ops");
  const logger = createLogger("silent");

  it("a resync handed back mid fan-out enqueues no further chunk and leaves its record to the next holder", async () => {
    const resyncs = new ResyncStore(redis, `${prefix}:resync`);
    const users = ["u1", "u2", "u3"];
    const op = await resyncs.createOperation({ source: "okta", scope: { users, groups: [] } });
    const { job, token, queue } = await take({ operationId: op.id, phase: "run" });
    const requested: EntityRef[][] = [];
    const deps: ResyncDeps = {
      config,
      platform: { getUser: async () => null },
      directory: {
        snapshotUser: async (_source: string, id: string) => ({
          desired: { resource: { id, userName: `${id}@example.com`, active: true } },
          generation: 1,
        }),
        snapshotGroup: async () => null,
        scanIds: async function* () {},
        countEntities: async () => users.length,
      } as unknown as ResyncDeps["directory"],
      state: {
        getUserPlatformIds: async (_source, ids) => ids.map(() => null),
        countEmbedUsers: async () => 0,
        countOwnedUsers: async () => users.length,
      },
      requestResync: async (refs) => {
        requested.push(refs);
        // The forced close hands the job back while the first chunk is enqueued.
        if (requested.length === 1) await job.moveToWait(token);
      },
      resyncs,
      logger,
      chunk: 1,
    };

    const answer = await processResyncJob(deps, job.data, job, token);

    expect(requested).toHaveLength(1);
    expect(answer).toBe("handed_on");
    // Left as the next holder finds it: not ended here (neither succeeded nor failed).
    const after = await resyncs.get(op.id);
    expect(after?.state).toBe("running");
    expect(after?.enqueued).toBe(0);
    expect(await queue.getJobCounts("active", "wait", "failed")).toEqual({ active: 0, wait: 1, failed: 0 });
  });

  it("a confirmed run handed back mid apply enqueues no further chunk and records no outcome", async () => {
    const runs = new ReconcileRunStore(redis, `${prefix}:runs`, 10);
    const created = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    // Held, then confirmed: queued again with settledBy, its repairs in its set.
    const run = { ...created, state: "queued" as const, settledBy: "admin" };
    await runs.transition(run, ["queued"]);
    // Past a small set's encoding (SSCAN answers those whole): read in chunks of repairChunk.
    const repairs = Array.from({ length: 300 }, (_v, i) =>
      refKey({ source: "okta", kind: "user", id: `u${i}` }),
    );
    await redis.sadd(runs.key(run.runId, "repairs"), ...repairs);
    const { job, token } = await take({ runId: run.runId, phase: "apply" });
    const requested: EntityRef[][] = [];
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const deps = {
      config,
      redis,
      platform: {},
      directory: { findUserId: async () => null },
      state: {
        ownersOf: async (_scope: string, keys: string[]) => keys.map(() => null),
        deadLetters: {},
      },
      requestResync: async (refs: EntityRef[]) => {
        requested.push(refs);
        if (requested.length === 1) await job.moveToWait(token);
      },
      runs,
      logger,
      registry,
      repairChunk: 50,
    } as unknown as ReconcileDeps;

    const answer = await processReconcileJob(deps, job.data, job, token);

    expect(requested).toHaveLength(1);
    expect(requested[0]?.length).toBeGreaterThan(0);
    expect(requested[0]?.length).toBeLessThan(repairs.length);
    expect(answer).toBe("handed_on");
    const after = await runs.get(run.runId);
    expect(after?.state).toBe("running");
    expect(after?.repairs.applied).toBe(false);
    // The next holder applies the repairs again: their set is still there.
    expect(await redis.scard(runs.key(run.runId, "repairs"))).toBe(repairs.length);
    expect(await registry.metrics()).not.toMatch(/reconcile_runs_total\{/);
  });
});
