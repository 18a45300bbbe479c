import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningWorkers, startWorkers } from "../../../jobs/start-workers.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../../helpers/throwaway-redis.js";

/**
 * A Redis outage makes every BullMQ worker and queue handle emit `error` many times a second; the
 * workers write the first of them and then at most one line per 30 s for each, not one per error.
 */
describe("worker error lines during a Redis outage", () => {
  let redis: ThrowawayRedis | undefined;
  let connection: Redis | undefined;
  let workers: RunningWorkers | undefined;
  afterAll(async () => {
    await Promise.race([workers?.close(), new Promise((r) => setTimeout(r, 2_000))]);
    connection?.disconnect();
    await redis?.dispose();
  });

  it("writes a few lines, not one per error", async () => {
    redis = await ThrowawayRedis.start();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger("warn", {}, sink);
    const config = buildConfig({
      platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
      redis: { url: redis.url, prefix: "{flood}" },
      server: { shutdownTimeoutMs: 500 },
      sources: { okta: { tokens: ["okta-token"] } },
    });
    connection = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 20 });
    const budget = new NoopRequestBudget();
    workers = await startWorkers({
      config,
      connection,
      directory: new RedisDirectoryStore({
        redis: connection,
        prefix: "{flood}",
        logger,
        matchesFilter,
        notify: async () => {},
      }),
      platform: new HttpPlatformClient({
        baseUrl: "http://127.0.0.1:1",
        token: "t",
        allowInsecureHttp: true,
        timeoutMs: 1_000,
        maxRetries: 0,
        budget,
      }),
      budget,
      logger,
      registry: createMetricsRegistry({ defaultMetrics: false }),
    });
    await redis.stop();
    const errors = () => lines.filter((l) => l.msg === "worker error" || l.msg === "queue error");
    // The outage is noticed...
    await waitFor(() => errors().length > 0, { what: "a worker error line", timeoutMs: 5_000 });
    // ... and a few seconds of it (dozens of errors per handle) make one line per handle at most.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(errors().length).toBeGreaterThan(0);
    const perQueue = new Map<string, number>();
    for (const line of errors()) {
      const key = `${line.msg} ${line.queue}`;
      perQueue.set(key, (perQueue.get(key) ?? 0) + 1);
    }
    for (const [key, count] of perQueue) expect(count, key).toBe(1);
  }, 20_000);
});
