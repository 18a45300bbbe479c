/**
 * A run or resync whose platform call failed after its job was handed on (a forced close handed it
 * back, or its lock ran out, while the call was out): its failure is not this holder's to record
 * (the write is refused: OperationNotHeld) nor a human's to act on: the next holder runs the job
 * again. It ends with one warn line saying the job was handed on, and no error line (STYLE.md:
 * `error` means a human must act). A failure of a job still held is still an error line.
 */
import type { Job } from "bullmq";
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

describe("a run or resync whose platform call failed after its job was handed on", () => {
  const { prefix, config, redis, take: takeJob } = handedJobsSuite("handed-on-failure-log");
  let lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger("info", {}, {
    write: (line: string) => {
      lines.push(JSON.parse(line) as { level: number; msg: string });
    },
  } as never);
  /** A job taken as a worker takes it; `handBack` hands it back to the queue (a forced close). */
  async function take(data: unknown): Promise<{ job: Job; token: string; handBack(): Promise<void> }> {
    lines = [];
    const { job, token } = await takeJob(data);
    let handedBack: Promise<unknown> | undefined;
    return {
      job,
      token,
      async handBack() {
        handedBack ??= job.moveToWait(token);
        await handedBack;
      },
    };
  }

  /** A platform whose every call fails (lists: their first page), the job handed back while it was out. */
  const failingPlatform = (handBack: () => Promise<void>) => {
    const fail = async (name: string) => {
      await handBack();
      throw new Error(`socket hang up (${name})`);
    };
    return new Proxy(
      {},
      {
        get: (_target, name) => {
          if (typeof name !== "string" || name === "then") return undefined;
          if (name.startsWith("list")) {
            return async function* () {
              yield* [];
              await fail(name);
            };
          }
          return () => fail(name);
        },
      },
    );
  };

  const expectHandedOnQuietly = () => {
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    const warned = lines.filter((l) => l.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]?.msg).toMatch(/job is no longer this process's; stopped here/);
  };

  /** A resync of one inactive user whose platform calls go to `platform`. */
  const resyncDeps = (resyncs: ResyncStore, platform: object): ResyncDeps =>
    ({
      config,
      platform,
      directory: {
        snapshotUser: async (_source: string, id: string) => ({
          desired: { resource: { id, userName: `${id}@example.com`, active: false } },
          generation: 1,
        }),
        snapshotGroup: async () => null,
        scanIds: async function* () {},
        countEntities: async () => 1,
      },
      state: {
        getUserPlatformIds: async (_source: string, ids: string[]) => ids.map((id) => `p-${id}`),
        countEmbedUsers: async () => 0,
        countOwnedUsers: async () => 1,
      },
      requestResync: async () => {},
      resyncs,
      logger,
      chunk: 1,
    }) as unknown as ResyncDeps;

  it("a resync: no `resync: failed` error line, one warn line", async () => {
    const resyncs = new ResyncStore(redis, `${prefix}:resync`);
    const op = await resyncs.createOperation({ source: "okta", scope: { users: ["u1"], groups: [] } });
    const taken = await take({ operationId: op.id, phase: "run" });
    const deps = resyncDeps(resyncs, failingPlatform(taken.handBack));

    expect(await processResyncJob(deps, taken.job.data, taken.job, taken.token)).toBe("handed_on");
    expectHandedOnQuietly();
    expect((await resyncs.get(op.id))?.state).toBe("running");
  });

  it("a resync still held whose platform call fails: one `resync: failed` error line, the resync failed", async () => {
    const resyncs = new ResyncStore(redis, `${prefix}:resync-held`);
    const op = await resyncs.createOperation({ source: "okta", scope: { users: ["u1"], groups: [] } });
    const taken = await take({ operationId: op.id, phase: "run" });
    const deps = resyncDeps(
      resyncs,
      failingPlatform(async () => {}),
    );

    expect(await processResyncJob(deps, taken.job.data, taken.job, taken.token)).not.toBe("handed_on");
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual(["resync: failed"]);
    expect((await resyncs.get(op.id))?.state).toBe("failed");
  });

  it("a reconciliation run: no `reconcile: run failed` error line, one warn line", async () => {
    const runs = new ReconcileRunStore(redis, `${prefix}:runs`, 10);
    const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const taken = await take({ runId: run.runId, phase: "run" });
    const deps = {
      config,
      redis,
      platform: failingPlatform(taken.handBack),
      directory: { findUserId: async () => null },
      state: { ownersOf: async (_scope: string, keys: string[]) => keys.map(() => null), deadLetters: {} },
      requestResync: async () => {},
      runs,
      logger,
      registry: createMetricsRegistry({ defaultMetrics: false }),
    } as unknown as ReconcileDeps;

    expect(await processReconcileJob(deps, taken.job.data, taken.job, taken.token)).toBe("handed_on");
    expectHandedOnQuietly();
    expect((await runs.get(run.runId))?.state).toBe("running");
  });

  it("a confirmed run's apply: no `applying a confirmed run failed` error line, one warn line", async () => {
    const runs = new ReconcileRunStore(redis, `${prefix}:apply`, 10);
    const created = await runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    const run = { ...created, state: "queued" as const, settledBy: "admin" };
    await runs.transition(run, ["queued"]);
    await redis.sadd(runs.key(run.runId, "repairs"), refKey({ source: "okta", kind: "user", id: "u1" }));
    const taken = await take({ runId: run.runId, phase: "apply" });
    const deps = {
      config,
      redis,
      platform: {},
      directory: { findUserId: async () => null },
      state: { ownersOf: async (_scope: string, keys: string[]) => keys.map(() => null), deadLetters: {} },
      // The repairs' request fails (Redis, say) as the job is handed back.
      requestResync: async (_refs: EntityRef[]) => {
        await taken.handBack();
        throw new Error("Connection is closed.");
      },
      runs,
      logger,
      registry: createMetricsRegistry({ defaultMetrics: false }),
      repairChunk: 50,
    } as unknown as ReconcileDeps;

    expect(await processReconcileJob(deps, taken.job.data, taken.job, taken.token)).toBe("handed_on");
    expectHandedOnQuietly();
  });
});
