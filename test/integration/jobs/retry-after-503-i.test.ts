/**
 * Faults-i: a 503 with a Retry-After longer than the client sleeps in a call (`maxRetryAfterMs`):
 * the platform says when it serves again (maintenance). Like a 429's (long-retry-after.test.ts),
 * the wait pauses the queue and puts the job back without spending an attempt (docs/operations.md,
 * "Platform rate limits"); it must not end as a dead letter when the attempts are few.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { TEST_REDIS_URL, testPrefix } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

describe("faults-i: a 503 with a Retry-After longer than the client sleeps", () => {
  let h: JobsHarness | undefined;
  let budgetRedis: Redis | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await budgetRedis?.quit();
    budgetRedis = undefined;
  });

  for (const asDate of [false, true]) {
    it(`pauses for it without spending an attempt (Retry-After ${asDate ? "HTTP-date" : "seconds"})`, async () => {
      const name = `retry-after-503-${asDate ? "date" : "secs"}`;
      budgetRedis = new Redis(TEST_REDIS_URL);
      const budget = new RedisRequestBudget({
        redis: budgetRedis,
        prefix: testPrefix(name),
        requestsPerSecond: 1_000,
        maxPollMs: 50,
      });
      h = await startJobsHarness(name, {
        // One attempt: a paused run that spent it would end in a dead letter.
        sync: { attempts: 1 },
        maxRetryAfterMs: 500,
        platform: { maxRetries: 1 },
        budget,
        workers: false,
      });
      h.emulator.addFault({
        type: "error",
        status: 503,
        retryAfterSeconds: 2,
        retryAfterDate: asDate,
        count: 2,
        match: { operation: "createUser" },
      });
      const u = await h.directory.createUser("okta", h.user("maintenance@example.com"));
      const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
      const started = Date.now();
      await h.startWorkers();
      await h.waitForIdle(20_000);
      expect(await h.state.countDeadLetters()).toBe(0);
      expect((await h.state.getStatus(ref))?.state).toBe("synced");
      expect(h.platformUsers().size).toBe(1);
      // Two 503s, each waited out, then the create.
      expect(h.emulator.count("createUser")).toBe(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3_500);
    }, 30_000);
  }
});
