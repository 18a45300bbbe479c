import { type JobsOptions, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYNC_JOB_NAME, syncJobOptions } from "../../../jobs/sync-job.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * BullMQ's deduplication ignores an add while the job with that id is active. A change that lands
 * during its entity's sync must not be lost: `keepLastIfActive` keeps one more job that runs right
 * after (invariant 2), and there is never more than one sync per entity at a time (invariant 3).
 */
describe("deduplication with keepLastIfActive", () => {
  const prefix = testPrefix("dedup");
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** Runs: add; wait until active; add again; release; count the runs of that entity. */
  async function runsWithOptions(
    queueName: string,
    options: (ref: EntityRef) => JobsOptions,
  ): Promise<number> {
    const queue = new Queue(queueName, { connection: redis, prefix });
    let runs = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const worker = new Worker(
      queueName,
      async () => {
        runs++;
        if (runs === 1) await released;
      },
      { connection: redis, prefix, concurrency: 4 },
    );
    try {
      const ref: EntityRef = { source: "okta", kind: "user", id: "u1" };
      await queue.add(SYNC_JOB_NAME, ref, options(ref));
      await waitFor(() => runs === 1, { what: "the first run to start" });
      await queue.add(SYNC_JOB_NAME, ref, options(ref)); // the change that lands mid-sync
      release();
      await waitFor(async () => ((await queue.getJobCounts("completed")).completed ?? 0) >= 1, {
        what: "completion",
      });
      // Give a kept follow-up every chance to run before counting.
      await waitFor(
        async () => {
          const c = await queue.getJobCounts("waiting", "active", "delayed");
          return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0;
        },
        { what: "the queue to drain" },
      );
      return runs;
    } finally {
      await worker.close();
      await queue.close();
    }
  }

  it("runs again after an add that landed while the entity's job was active", async () => {
    expect(await runsWithOptions("keep-last", (ref) => syncJobOptions(ref))).toBe(2);
  });

  it("(control) without the option the mid-sync add is dropped: the test above can fail", async () => {
    const withoutKeepLast = (ref: EntityRef): JobsOptions => {
      const opts = syncJobOptions(ref);
      return { ...opts, deduplication: { id: opts.deduplication?.id as string } };
    };
    expect(await runsWithOptions("plain-dedup", withoutKeepLast)).toBe(1);
  });

  it("never runs two syncs of one entity at the same time", async () => {
    const queue = new Queue("one-at-a-time", { connection: redis, prefix });
    const running = new Map<string, number>();
    let maxParallelPerEntity = 0;
    let maxParallel = 0;
    let total = 0;
    const worker = new Worker(
      "one-at-a-time",
      async (job) => {
        const key = job.data.id as string;
        running.set(key, (running.get(key) ?? 0) + 1);
        maxParallelPerEntity = Math.max(maxParallelPerEntity, running.get(key) ?? 0);
        maxParallel = Math.max(
          maxParallel,
          [...running.values()].reduce((a, b) => a + b, 0),
        );
        await new Promise((r) => setTimeout(r, 15));
        running.set(key, (running.get(key) ?? 1) - 1);
        total++;
      },
      { connection: redis, prefix, concurrency: 8 },
    );
    try {
      for (let round = 0; round < 20; round++) {
        await Promise.all(
          ["a", "b", "c", "d"].map((id) => {
            const ref: EntityRef = { source: "okta", kind: "user", id };
            return queue.add(SYNC_JOB_NAME, ref, syncJobOptions(ref));
          }),
        );
        await new Promise((r) => setTimeout(r, 5));
      }
      await waitFor(
        async () => {
          const c = await queue.getJobCounts("waiting", "active", "delayed");
          return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0;
        },
        { what: "the queue to drain" },
      );
      expect(maxParallelPerEntity).toBe(1);
      expect(maxParallel).toBeGreaterThan(1); // different entities do run in parallel
      expect(total).toBeLessThan(80); // duplicates were folded
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});

describe("a change during its entity's sync reaches the platform (whole pipeline)", () => {
  let h: JobsHarness;
  beforeAll(async () => {
    // The sweeper is far away: only keepLastIfActive can bring the second change in time.
    h = await startJobsHarness("dedup-e2e", { sync: { sweepAfterMs: 120_000, sweepIntervalMs: 60_000 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("applies the later displayName", async () => {
    const u = await h.directory.createUser("okta", h.user("mid@example.com", { displayName: "v0" }));
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 400, match: { operation: "patchUser" }, count: 1 });
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, displayName: "v1" }));
    await waitFor(() => h.emulator.requests().some((r) => r.operation === "patchUser") || inFlight(h), {
      what: "the first PATCH to be in flight",
    });
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, displayName: "v2" }));
    await waitFor(() => h.platformUsers().get("mid@example.com")?.["displayName"] === "v2", {
      timeoutMs: 5_000,
      what: "v2 on the platform",
    });
    await h.waitForIdle();
  });
});

function inFlight(h: JobsHarness): Promise<boolean> {
  return h.syncQueue.queue.getJobCounts("active").then((c) => (c.active ?? 0) > 0);
}
