/**
 * An admin's resync (AdminService.triggerResync) writes the operation's record (`queued`) and
 * then, in a separate step, enqueues its job; a confirmation (settleResync) moves the record to
 * `queued` and then enqueues the apply phase. A process killed between the two left a resync
 * `queued` that no job held: it never ran, and, unfinished, was never trimmed from the list.
 * The source's next scheduled reconciliation tick now enqueues it again (one job per operation and
 * phase, so a no-op while its job exists). **Was a gap** named in the previous notes (crash-window
 * audit of review round r).
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { QUEUE_NAMES } from "../../../jobs/queue-names.js";
import { processScheduledTick } from "../../../jobs/reconcile/reconcile-queue.js";
import { createResyncQueue, requeueQueuedResyncs } from "../../../jobs/resync/resync-queue.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { GuardResult } from "../../../src/reconcile/reconcile-types.js";
import { startTestBridge } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("resync-trigger-crash");
/** A tripped guard: what a held resync carries. */
const GUARD: GuardResult = { plannedDeprovisions: 1, ownedUsers: 1, share: 1, maxShare: 0.1, tripped: true };
let redis: Redis;
let queueRedis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
  queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
  await queueRedis.quit();
});

describe("a resync whose record was written by a process killed before its enqueue", () => {
  it("the source's next scheduled tick enqueues it: a trigger's run phase, a confirmation's apply", async () => {
    const resyncs = new ResyncStore(redis, prefix);
    const runs = new ReconcileRunStore(redis, prefix, 50);
    const deps = { config: { sources: { okta: {}, hr: {} } }, runs } as unknown as ReconcileDeps;

    // What triggerResync writes before its enqueue (the kill comes right after).
    const triggered = await resyncs.createOperation({
      source: "okta",
      scope: { all: true },
      requestedBy: "ops",
    });
    // A held resync an admin confirmed: settleResync moved it to `queued`, then the kill.
    const held = await resyncs.createOperation({
      source: "okta",
      scope: { users: ["u1"], groups: [] },
      requestedBy: "ops",
      held: { guard: GUARD, users: ["u1"], from: "r" },
    });
    const confirmed = {
      ...held,
      state: "queued" as const,
      settledBy: "lead",
      settledAt: new Date().toISOString(),
    };
    expect(await resyncs.transition(confirmed, ["awaiting-confirmation"])).toBe(true);
    // Not to be touched: another source's queued resync, a finished one, one still held.
    const other = await resyncs.createOperation({ source: "hr", scope: { all: true } });
    const done = await resyncs.createOperation({ source: "okta", scope: { all: true } });
    await resyncs.transition({ ...done, state: "succeeded" }, ["queued"]);
    const stillHeld = await resyncs.createOperation({
      source: "okta",
      scope: { users: ["u2"], groups: [] },
      held: { guard: GUARD, users: ["u2"], from: "r" },
    });

    const enqueued: string[] = [];
    await processScheduledTick(
      deps,
      "okta",
      async () => {},
      (source) =>
        requeueQueuedResyncs(resyncs, source, async (id, phase) => void enqueued.push(`${phase}-${id}`)),
    );
    expect(enqueued.sort()).toEqual([`apply-${confirmed.id}`, `run-${triggered.id}`].sort());
    expect(enqueued.join()).not.toContain(other.id);
    expect(enqueued.join()).not.toContain(stillHeld.id);
  });

  it("a failure to enqueue them again is logged and does not keep the tick from its run", async () => {
    const runs = new ReconcileRunStore(redis, `${prefix}:failing`, 50);
    const warned: unknown[] = [];
    const logger = { warn: (fields: unknown) => void warned.push(fields) };
    const deps = { config: { sources: { okta: {} } }, runs, logger } as unknown as ReconcileDeps;
    const enqueued: string[] = [];
    const outcome = await processScheduledTick(
      deps,
      "okta",
      async (runId) => void enqueued.push(runId),
      async () => {
        throw new Error("Redis is loading the dataset in memory");
      },
    );
    expect(enqueued).toEqual([outcome]);
    expect(warned).toEqual([{ source: "okta", err: "Redis is loading the dataset in memory" }]);
  });

  it("enqueueing again is a no-op while the operation's job exists", async () => {
    const resyncs = new ResyncStore(redis, `${prefix}:noop`);
    const queue = createResyncQueue({ connection: queueRedis, prefix, logger: createLogger("silent") });
    try {
      const op = await resyncs.createOperation({ source: "okta", scope: { all: true } });
      await queue.enqueue(op.id, "run"); // the trigger's own enqueue did happen
      expect(await requeueQueuedResyncs(resyncs, "okta", queue.enqueue)).toBe(1);
      expect(await requeueQueuedResyncs(resyncs, "okta", queue.enqueue)).toBe(1);
      const jobs = await queue.queue.getJobs(["waiting", "delayed", "active", "prioritized"]);
      expect(jobs.map((j) => j.id)).toEqual([`run-${op.id}`]);
    } finally {
      await queue.queue.obliterate({ force: true });
      await queue.close();
    }
  });
});

describe("through a running bridge (the ticker's wiring, jobs/reconcile/admin-jobs.ts)", () => {
  it("a resync left queued without a job runs at the source's next scheduled tick", async () => {
    const h = await startTestBridge("resync-trigger-crash-bridge", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    const ticks = new Queue(`${QUEUE_NAMES.reconcile}-schedule`, {
      connection: queueRedis,
      prefix: h.prefix,
    });
    try {
      const id = (await h.scim("okta").createUser("resync.tick@example.com")).id;
      await h.waitForIdle();
      // The killed trigger's record: `queued`, no job.
      const op = await new ResyncStore(redis, h.prefix).createOperation({
        source: "okta",
        scope: { users: [id], groups: [] },
        requestedBy: "ops",
      });
      await new Promise((r) => setTimeout(r, 300));
      expect((await h.admin().get(`/resyncs/${op.id}`)).body.state).toBe("queued");

      await ticks.add("scheduled", { source: "okta", scheduled: true });
      const done = await waitFor(
        async () => {
          const body = (await h.admin().get(`/resyncs/${op.id}`)).body;
          return ["queued", "running"].includes(body.state) ? null : body;
        },
        { what: "the resync to run" },
      );
      expect(done).toMatchObject({ state: "succeeded", total: 1 });
    } finally {
      await ticks.close();
      await h.close();
    }
  });
});
