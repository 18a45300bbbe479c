/**
 * A 429 whose Retry-After is longer than the platform client sleeps in a call (`maxRetryAfterMs`)
 * pauses the sync queue for the (capped) wait and puts the job back without spending an attempt.
 * BullMQ honours a manual rate limit in moveToActive only when the worker has a limiter: without
 * one, other fetches took jobs during the pause and left them unprocessed, their locks unrenewed,
 * until the pause ended; a wait longer than the lock lost the locks ("Missing lock for job …
 * moveJobFromActiveToWait", "Lock mismatch … moveToFinished") and ran jobs twice. And the wait
 * was silent: no log line named the 429, the entity's status carried no lastError.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { RedisRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { TEST_REDIS_URL, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("info", {}, sink) };
}

describe("a 429 with a Retry-After longer than the client sleeps", () => {
  let h: JobsHarness | undefined;
  let budgetRedis: Redis | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await budgetRedis?.quit();
    budgetRedis = undefined;
  });

  it("pauses the queue for the wait without losing job locks, spends no attempt, and says why", async () => {
    const { lines, logger } = captureLogger();
    const name = "long-retry-after";
    budgetRedis = new Redis(TEST_REDIS_URL);
    // The shared budget in Redis, as in production: the 429 pauses every caller.
    const budget = new RedisRequestBudget({
      redis: budgetRedis,
      prefix: testPrefix(name),
      requestsPerSecond: 1_000,
      maxPollMs: 50,
    });
    h = await startJobsHarness(name, {
      // One attempt: a rate-limited run that spent it would end in a dead letter.
      sync: { attempts: 1 },
      // The production ratio, scaled down: the wait (3 s) outlasts both the client's in-call
      // sleep (0.5 s, 60 s in production) and the job lock (1 s, 30 s in production).
      maxRetryAfterMs: 500,
      tuning: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
      budget,
      logger,
      workers: false,
    });
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 3,
      count: 1,
      match: { operation: "createUser" },
    });
    const created = [
      await h.directory.createUser("okta", h.user("first@example.com")),
      await h.directory.createUser("okta", h.user("second@example.com")),
    ];
    const refs: EntityRef[] = created.map((u) => ({ source: "okta", kind: "user", id: u.resource.id }));
    const started = Date.now();
    await h.startWorkers();

    // While the pause lasts, the rate-limited user's status says why it waits.
    const state = h.state;
    const limitedStatus = async () => {
      for (const ref of refs) {
        const status = await state.getStatus(ref);
        if (status?.lastError?.code === "platform_rate_limited") return status;
      }
      return undefined;
    };
    await waitFor(async () => (await limitedStatus()) !== undefined, {
      timeoutMs: 2_000,
      what: "a status naming the rate limit",
    });
    expect(await limitedStatus()).toMatchObject({
      state: "pending",
      lastError: { code: "platform_rate_limited", operation: "createUser" },
    });

    await h.waitForIdle(15_000);
    // The wait is the Retry-After's.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    for (const ref of refs) {
      const status = await h.state.getStatus(ref);
      expect(status?.state).toBe("synced");
      expect(status?.lastError).toBeUndefined();
    }
    expect(h.platformUsers().size).toBe(2);
    expect(await h.state.countDeadLetters()).toBe(0);
    // One 429, then one successful create per user: no job ran twice.
    expect(h.emulator.count("createUser")).toBe(3);

    const errors = lines.filter((l) => /error/.test(String(l["msg"])));
    expect(errors.map((l) => l["err"])).toEqual([]);
    const notices = lines.filter((l) => /rate limited/.test(String(l["msg"])));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ level: 40, operation: "createUser", waitSeconds: 3 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("first@example.com");
    expect(text).not.toContain("second@example.com");
  }, 30_000);
});
