import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../../src/bridge.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../../helpers/throwaway-redis.js";

/**
 * GET /metrics while Redis is down: a whole bridge (api and workers in one process) on a Redis of
 * this file's own, which is killed and started again. The scrape must answer quickly with every
 * metric that does not come from Redis, and say that the Redis-backed ones could not be read.
 */
describe("GET /metrics when Redis goes away", () => {
  let redis: ThrowawayRedis;
  let bridge: RunningBridge;

  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
    const config = buildConfig({
      // Never called: no user is created.
      platform: { baseUrl: "http://127.0.0.1:1", token: "platform-token", allowInsecureHttp: true },
      redis: { url: redis.url, prefix: "{metrics-outage}" },
      server: { port: 0, host: "127.0.0.1", shutdownTimeoutMs: 1_000 },
      logLevel: "silent",
      sources: { okta: { tokens: ["okta-token"] } },
    });
    bridge = await startBridge(config, { role: "all", listen: false, logger: createLogger("silent") });
  }, 20_000);

  afterAll(async () => {
    await bridge?.close();
    await redis?.dispose();
  }, 20_000);

  const scrape = async () => {
    const started = Date.now();
    const res = await request(bridge.app!).get("/metrics").timeout(15_000);
    return { res, ms: Date.now() - started };
  };

  it("answers within a few seconds with the other metrics and metrics_redis_read_ok 0, then recovers", async () => {
    // An http metric to find later (served by the bridge's own app).
    await request(bridge.app!).get("/healthz").expect(200);

    const before = await scrape();
    expect(before.res.status).toBe(200);
    expect(before.res.text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 0$/m);
    expect(before.res.text).toMatch(/^queue_depth\{queue="sync",state="waiting"\} 0$/m);
    expect(before.res.text).toMatch(/^dead_letters\{source="okta"\} 0$/m);
    expect(before.res.text).toMatch(/^metrics_redis_read_ok 1$/m);

    await redis.stop();
    // Both clients have noticed (the first scrape after the kill may still find a socket open).
    await waitFor(async () => (await request(bridge.app!).get("/readyz")).status === 503, {
      timeoutMs: 5_000,
    });

    const during = await scrape();
    expect(during.res.status).toBe(200);
    expect(during.ms).toBeLessThan(5_000);
    expect(during.res.text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(during.res.text).toMatch(/^nodejs_heap_size_used_bytes /m);
    expect(during.res.text).toMatch(
      /^http_requests_total\{method="GET",route="\/healthz",status="200"\} 1$/m,
    );
    expect(during.res.text).toMatch(/^metrics_redis_read_ok 0$/m);
    // The Redis-backed gauges keep their last values (they are stale, which metrics_redis_read_ok says).
    expect(during.res.text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 0$/m);
    expect(during.res.text).toMatch(/^dead_letters\{source="okta"\} 0$/m);

    // A second scrape during the outage answers as fast.
    const again = await scrape();
    expect(again.res.status).toBe(200);
    expect(again.ms).toBeLessThan(5_000);

    await redis.start();
    await waitFor(async () => /^metrics_redis_read_ok 1$/m.test((await scrape()).res.text), {
      timeoutMs: 15_000,
      intervalMs: 200,
    });
    const after = await scrape();
    expect(after.res.status).toBe(200);
    expect(after.res.text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 0$/m);
    expect(after.res.text).toMatch(/^queue_depth\{queue="sync",state="waiting"\} 0$/m);
    expect(after.res.text).toMatch(/^dead_letters\{source="okta"\} 0$/m);
  }, 60_000);
});
