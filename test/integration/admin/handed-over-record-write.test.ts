/**
 * The lease check before a record write and the write are two steps: a job handed over exactly
 * between them (a forced close handed it back, another worker took it and wrote the record) must
 * not let the old holder's write through. The record write itself checks that the job's BullMQ
 * lock still holds the writer's token (OperationStore.transition with the lease's holder), in the
 * same script: the stale write is refused and the old holder stops, quietly (HANDED_ON).
 */
import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { processReconcileJob } from "../../../jobs/reconcile/reconcile-queue.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { processResyncJob } from "../../../jobs/resync/resync-queue.js";
import type { ResyncDeps } from "../../../jobs/resync/resync-runner.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import type { TrackedResync, TrackedRun } from "../../../src/admin/repair-outcome.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import type { RunState } from "../../../src/reconcile/reconcile-types.js";
import { type EntityRef, refKey } from "../../../src/scim/scim-types.js";
import { handedJobsSuite } from "../../helpers/handed-jobs.js";

describe("a record write of a job handed over between its lease check and the write", () => {
  const suite = handedJobsSuite("handed-over-write");
  const { prefix, config, redis } = suite;
  const logger = createLogger("silent");

  /** A job taken as a worker takes it, and `handOver`: handed back, then taken by another holder. */
  async function take(data: unknown): Promise<{ job: Job; token: string; handOver(): Promise<void> }> {
    const taken = await suite.take(data);
    return { ...taken, handOver: () => suite.handOver(taken) };
  }

  it("a resync's progress written after the hand-over is refused: the new holder's record stays", async () => {
    const users = ["u1", "u2"];
    let taken: Awaited<ReturnType<typeof take>> | undefined;
    let newHolderRecord: TrackedResync | undefined;
    /** Hands the job over right before the first progress write (past its lease check). */
    class HandingOverStore extends ResyncStore {
      override async transition(next: TrackedResync, from: readonly RunState[], ...rest: unknown[]) {
        if (taken && !newHolderRecord && next.enqueued === 1) {
          await taken.handOver();
          // The new holder starts it over and writes its record first.
          newHolderRecord = { ...next, enqueued: 0, startedAt: "2030-01-01T00:00:00.000Z" };
          expect(await super.transition(newHolderRecord, ["running"])).toBe(true);
        }
        return (super.transition as (...args: unknown[]) => Promise<boolean>)(next, from, ...rest);
      }
    }
    const resyncs = new HandingOverStore(redis, `${prefix}:resync`);
    const op = await resyncs.createOperation({ source: "okta", scope: { users, groups: [] } });
    taken = await take({ operationId: op.id, phase: "run" });
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
      },
      resyncs,
      logger,
      chunk: 1,
    };

    const answer = await processResyncJob(deps, taken.job.data, taken.job, taken.token);

    expect(newHolderRecord).toBeDefined();
    expect(answer).toBe("handed_on");
    expect(requested).toHaveLength(1);
    const after = await resyncs.get(op.id);
    expect(after?.state).toBe("running");
    expect(after?.startedAt).toBe("2030-01-01T00:00:00.000Z");
    expect(after?.enqueued).toBe(0);
  });

  /** A resync of inactive users whose platform users are active: each is a planned deprovisioning. */
  function deprovisioningDeps(resyncs: ResyncStore, users: string[]): ResyncDeps {
    return {
      config,
      platform: { getUser: async (id: string) => ({ id, userName: `${id}@example.com`, active: true }) },
      directory: {
        snapshotUser: async (_source: string, id: string) => ({
          desired: { resource: { id, userName: `${id}@example.com`, active: false } },
          generation: 1,
        }),
        snapshotGroup: async () => null,
        scanIds: async function* () {},
        countEntities: async () => users.length,
      } as unknown as ResyncDeps["directory"],
      state: {
        getUserPlatformIds: async (_source: string, ids: string[]) => ids.map((id) => `p-${id}`),
        countEmbedUsers: async () => 0,
        countOwnedUsers: async () => users.length,
      },
      requestResync: async () => {},
      resyncs,
      logger,
      chunk: 1,
    } as unknown as ResyncDeps;
  }

  it("a resync started over keeps the held set its new holder wrote: the old holder's drop is refused", async () => {
    let taken: Awaited<ReturnType<typeof take>> | undefined;
    let handedOver = false;
    /** Hands the job over right before the old holder drops the resync's sets as its pass starts. */
    class HandingOverStore extends ResyncStore {
      override async dropOwnedKeys(id: string, ...rest: unknown[]) {
        if (taken && !handedOver) {
          handedOver = true;
          await taken.handOver();
          // The new holder starts the pass over: its sets dropped, its first planned user held.
          await super.dropOwnedKeys(id);
          await super.addHeld(id, ["u-new"]);
        }
        return (super.dropOwnedKeys as (...args: unknown[]) => Promise<void>)(id, ...rest);
      }
    }
    const resyncs = new HandingOverStore(redis, `${prefix}:resync-drop`);
    const op = await resyncs.createOperation({ source: "okta", scope: { users: ["u1"], groups: [] } });
    taken = await take({ operationId: op.id, phase: "run" });

    const answer = await processResyncJob(
      deprovisioningDeps(resyncs, ["u1"]),
      taken.job.data,
      taken.job,
      taken.token,
    );

    expect(handedOver).toBe(true);
    expect(answer).toBe("handed_on");
    expect(await redis.smembers(resyncs.key(op.id, "held"))).toEqual(["u-new"]);
  });

  it("a resync started over holds only what its new holder planned: the old holder's held users are refused", async () => {
    let taken: Awaited<ReturnType<typeof take>> | undefined;
    let handedOver = false;
    /** Hands the job over right before the old holder records the users it planned to deprovision. */
    class HandingOverStore extends ResyncStore {
      override async addHeld(id: string, users: readonly string[], ...rest: unknown[]) {
        if (taken && !handedOver && users.length > 0) {
          handedOver = true;
          await taken.handOver();
          // The new holder starts the pass over (its sets dropped) and has planned nothing yet.
          await super.dropOwnedKeys(id);
        }
        return (super.addHeld as (...args: unknown[]) => Promise<void>)(id, users, ...rest);
      }
    }
    const resyncs = new HandingOverStore(redis, `${prefix}:resync-add`);
    const op = await resyncs.createOperation({ source: "okta", scope: { users: ["u1"], groups: [] } });
    taken = await take({ operationId: op.id, phase: "run" });

    const answer = await processResyncJob(
      deprovisioningDeps(resyncs, ["u1"]),
      taken.job.data,
      taken.job,
      taken.token,
    );

    expect(handedOver).toBe(true);
    expect(answer).toBe("handed_on");
    expect(await redis.smembers(resyncs.key(op.id, "held"))).toEqual([]);
  });

  it("a confirmed run's outcome written after the hand-over is refused, and not counted", async () => {
    let taken: Awaited<ReturnType<typeof take>> | undefined;
    let handedOver = false;
    /** Hands the job over right before the run's outcome is written (past its lease check). */
    class HandingOverStore extends ReconcileRunStore {
      override async transition(next: TrackedRun, from: readonly RunState[], ...rest: unknown[]) {
        if (taken && !handedOver && next.state === "succeeded") {
          handedOver = true;
          await taken.handOver();
        }
        return (super.transition as (...args: unknown[]) => Promise<boolean>)(next, from, ...rest);
      }
    }
    const runs = new HandingOverStore(redis, `${prefix}:runs`, 10);
    const created = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const run = { ...created, state: "queued" as const, settledBy: "admin" };
    await runs.transition(run, ["queued"]);
    await redis.sadd(runs.key(run.runId, "repairs"), refKey({ source: "okta", kind: "user", id: "u1" }));
    taken = await take({ runId: run.runId, phase: "apply" });
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const deps = {
      config,
      redis,
      platform: {},
      directory: { findUserId: async () => null },
      state: {
        ownersOf: async (_scope: string, keys: string[]) => keys.map(() => null),
        deadLetters: { list: async () => [] },
      },
      requestResync: async () => {},
      runs,
      logger,
      registry,
    } as unknown as ReconcileDeps;

    const answer = await processReconcileJob(deps, taken.job.data, taken.job, taken.token);

    expect(handedOver).toBe(true);
    expect(answer).toBe("handed_on");
    // The new holder applies it again: the record is not ended by the old one.
    expect((await runs.get(run.runId))?.state).toBe("running");
    expect(await registry.metrics()).not.toMatch(/reconcile_runs_total\{/);
  });
});
