/**
 * Faults-i: Redis failing under the lifecycle (bulk) path. Redis slow or away says nothing about
 * the users of a batch: no user's bulk attempts are spent on it, no dead letter, and the flush job
 * does not spend its own attempts either; the deactivations land once Redis serves again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RunningWorkers, startWorkers } from "../../../jobs/start-workers.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";
import { patched, queuedDeactivation } from "./lifecycle-fixtures.js";

/** What ioredis rejects a command with when the store client's command timeout passes. */
const redisTimeout = () => new Error("Command timed out");

describe("faults-i: Redis failing under the lifecycle path", () => {
  let h: JobsHarness | undefined;
  let workers: RunningWorkers | undefined;
  afterEach(async () => {
    await workers?.close();
    workers = undefined;
    await h?.close();
    h = undefined;
  });

  it("a bulk answer naming the user nowhere, whose read fails on Redis: the flush fails, the user's attempts unspent", async () => {
    h = await startJobsHarness("lifecycle-redis-read", { workers: false });
    const { ctx, ref } = await queuedDeactivation(h, "unconfirmed@redis.example");
    let reads = 0;
    const flushCtx: SyncContext = {
      ...ctx,
      platform: patched(h.platform, {
        // The platform answers without naming the user (it did not apply it)…
        bulkUsers: async () => ({ succeeded: [], failed: [] }),
        // …and the read that should tell fails on the request budget's Redis.
        getUser: async () => {
          reads++;
          throw redisTimeout();
        },
      }),
    };
    const letters: string[] = [];
    const flush = () =>
      flushNow(flushCtx, {
        maxAttempts: 1,
        deadLetter: async ({ code }) => {
          letters.push(code);
        },
      });
    await expect(flush()).rejects.toThrow(/Command timed out/);
    expect(reads).toBe(1);
    expect(letters).toEqual([]);
    const [entry] = await h.state.peekLifecycle(10);
    expect(entry?.entry).toMatchObject({ ref, action: "DEACTIVATE", attempts: 0 });
    // Redis serves again: the real flush lands the deactivation.
    await flushNow(ctx, {
      maxAttempts: 1,
      deadLetter: async ({ code }) => {
        letters.push(code);
      },
    });
    expect(letters).toEqual([]);
    expect(h.platformUsers().get("unconfirmed@redis.example")?.["active"]).toBe(false);
  });

  it("the flush job waits for Redis without spending its attempts", async () => {
    h = await startJobsHarness("lifecycle-redis-job", { workers: false });
    await queuedDeactivation(h, "flush@redis.example");
    let failures = 3;
    const registry = createMetricsRegistry({ defaultMetrics: false });
    workers = await startWorkers({
      config: h.config,
      connection: h.queueRedis,
      directory: h.directory,
      platform: patched(h.platform, {
        bulkUsers: async (action, ids) => {
          if (failures-- > 0) throw redisTimeout();
          return h!.platform.bulkUsers(action, ids);
        },
      }),
      budget: new NoopRequestBudget(),
      logger: createLogger("silent"),
      registry,
      tuning: { backoffMs: 20, lockDurationMs: 5_000, stalledIntervalMs: 1_000 },
    });
    await waitFor(() => h!.platformUsers().get("flush@redis.example")?.["active"] === false, {
      timeoutMs: 30_000,
      what: "the deactivation on the platform",
    });
    const jobs = await registry.getSingleMetric("jobs_total")?.get();
    expect(
      jobs?.values.filter(
        (v) => String(v.labels.queue).includes("lifecycle") && v.labels.outcome === "retried",
      ),
    ).toEqual([]);
    // Counted as the flush job's own waits, not as syncs of users.
    const waits = await registry.getSingleMetric("sync_jobs_total")?.get();
    expect(
      waits?.values
        .filter((v) => v.labels.outcome === "redis_unavailable")
        .map((v) => [v.labels.kind, v.value]),
    ).toEqual([["lifecycle", 3]]);
    expect(await h.state.countDeadLetters()).toBe(0);
  }, 45_000);
});
