/**
 * queue-status.ts `pausedQueues`: a queue paused for the platform (`queue.rateLimit`, as the sync
 * and lifecycle processors do on a long Retry-After) is reported with when the pause ends, and no
 * longer once it has; the workers' own limiter (by count, never reached) is no pause.
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DirectoryStore } from "../../../src/directory/directory-types.js";
import { type QueueStatus, createQueueStatus } from "../../../jobs/queue-status.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("queue-status-paused-n");
let connection: Redis;
let status: QueueStatus;
let sync: Queue;

beforeAll(async () => {
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  status = createQueueStatus({ connection, prefix, directory: {} as DirectoryStore });
  sync = new Queue("sync", { connection, prefix });
});
afterAll(async () => {
  await sync.close();
  await status.close();
  await deleteKeys(connection, prefix);
  await connection.quit();
});

describe("pausedQueues", () => {
  it("names a queue paused for the platform, with when it ends, until it has ended", async () => {
    expect(await status.pausedQueues()).toEqual([]);
    // What a worker's limiter leaves behind: a count under its max, with a TTL.
    await connection.set(`${prefix}:sync:limiter`, 3, "PX", 5_000);
    expect(await status.pausedQueues()).toEqual([]);

    const before = Date.now();
    await sync.rateLimit(1_500);
    const paused = await status.pausedQueues();
    expect(paused).toHaveLength(1);
    expect(paused[0]?.queue).toBe("sync");
    expect(paused[0]?.until).toBeGreaterThanOrEqual(before + 1_000);
    expect(paused[0]?.until).toBeLessThanOrEqual(Date.now() + 2_500);
    await waitFor(async () => (await status.pausedQueues()).length === 0, {
      timeoutMs: 5_000,
      what: "the pause to end",
    });
  });
});
