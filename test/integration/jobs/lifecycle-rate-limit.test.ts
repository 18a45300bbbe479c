/**
 * The lifecycle flush job pauses its queue when the platform's budget is paused, for at least 1 ms:
 * BullMQ's rateLimit(0) is a Redis error ("invalid expire time"), which failed the flush attempt
 * instead of pausing. A pause that ends between the check and the call, or a Retry-After of 0 or a
 * past date, asks for 0 ms or less.
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type LifecycleProcessorDeps, createLifecycleProcessor } from "../../../jobs/lifecycle-processor.js";
import type { RequestBudget } from "../../../src/platform/client/request-budget.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("lifecycle-rate-limit");
let connection: Redis;
let queue: Queue;

beforeAll(() => {
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue("lifecycle", { connection, prefix });
});

afterAll(async () => {
  await queue.close();
  await deleteKeys(connection, prefix);
  await connection.quit();
});

describe("lifecycle flush job while the platform's budget is paused", () => {
  it("pauses its queue for at least 1 ms when the pause has (just) run out", async () => {
    const now = Date.now();
    // The pause ends at now + 1: still ahead at the check, over at the call.
    vi.spyOn(Date, "now")
      .mockReturnValueOnce(now)
      .mockReturnValueOnce(now + 1);
    const budget = { pausedUntil: async () => now + 1 } as unknown as RequestBudget;
    const processor = createLifecycleProcessor({ queue, budget } as unknown as LifecycleProcessorDeps);
    const outcome = await processor().then(
      () => "flushed",
      (err: unknown) => err,
    );
    vi.restoreAllMocks();
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).name).toBe(Worker.RateLimitError().name);
    expect(await queue.getRateLimitTtl()).toBeLessThanOrEqual(1);
  });
});
