/**
 * Faults-i: Redis slow for the store's connection (every round trip past its 2 s command timeout)
 * while BullMQ's own connection still works. The wiring is the bridge's (src/bridge.ts): the
 * directory, the producer and the request budget on the fail-fast store client
 * (createStoreRedis), BullMQ and the sync state on the patient queue client (createQueueRedis);
 * only the store client goes through a latency proxy. A sync that meets the slow store says
 * nothing about its entity: it must not spend the job's attempts nor end as a dead letter, its
 * status and a metric say why it waits, and it lands once Redis is quick again.
 */
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createQueueStatus } from "../../../jobs/queue-status.js";
import { type RunningWorkers, startWorkers } from "../../../jobs/start-workers.js";
import { createSyncQueue } from "../../../jobs/sync-queue.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import {
  NoopRequestBudget,
  RedisRequestBudget,
  type RequestBudget,
} from "../../../src/platform/client/request-budget.js";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { SCHEMA_USER, type EntityRef } from "../../../src/scim/scim-types.js";
import { createQueueRedis, createStoreRedis } from "../../../src/server/redis-clients.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { LatencyProxy } from "../../helpers/latency-proxy-probes-g.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../../helpers/throwaway-redis.js";

const TOKEN = "platform-token";

async function metricValue(
  registry: ReturnType<typeof createMetricsRegistry>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const hits = metric?.values.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return (hits ?? []).reduce((sum, v) => sum + v.value, 0);
}

async function startRig(budgetOn: "store" | "none") {
  const redis = await ThrowawayRedis.start();
  const proxy = new LatencyProxy(redis.port);
  const proxyPort = await proxy.start();
  const emulator = createPlatformEmulator({ token: TOKEN, seed: 3 });
  const platformUrl = await emulator.start({ port: 0 });
  const prefix = "{faults-i-redis}";
  const config = buildConfig({
    platform: {
      baseUrl: platformUrl,
      token: TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2_000,
      maxRetries: 2,
    },
    redis: { url: redis.url, prefix },
    sync: {
      concurrency: 2,
      attempts: 3,
      lifecycleBatchWindowMs: 50,
      sweepIntervalMs: 300,
      sweepAfterMs: 500,
    },
    logLevel: "silent",
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? "silent");
  const storeRedis: Redis = createStoreRedis(`redis://127.0.0.1:${proxyPort}`);
  storeRedis.on("error", () => {});
  await storeRedis.connect();
  const queueRedis: Redis = createQueueRedis(redis.url);
  const syncQueue = createSyncQueue({ connection: storeRedis, prefix, logger, attempts: 3, backoffMs: 200 });
  const directory = new RedisDirectoryStore({
    redis: storeRedis,
    prefix,
    notify: syncQueue.notify,
    logger,
    matchesFilter,
  });
  const budget: RequestBudget =
    budgetOn === "store"
      ? new RedisRequestBudget({ redis: storeRedis, prefix, requestsPerSecond: 500, burst: 10 })
      : new NoopRequestBudget();
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const platform = new HttpPlatformClient({
    baseUrl: platformUrl,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 2_000,
    maxRetries: 2,
    budget,
    registry,
    backoff: { baseMs: 5, capMs: 50 },
  });
  // Read on the quick connection: the test's own view, not the bridge's.
  const status = createQueueStatus({ connection: queueRedis, prefix, directory });
  const state = new RedisSyncStateStore(queueRedis, prefix);
  let workers: RunningWorkers | undefined;
  return {
    proxy,
    emulator,
    directory,
    state,
    registry,
    syncQueue,
    async startWorkers() {
      workers = await startWorkers({
        config,
        connection: queueRedis,
        directory,
        platform,
        budget,
        logger,
        registry,
        tuning: { attempts: 3, backoffMs: 200, lockDurationMs: 10_000, stalledIntervalMs: 2_000 },
      });
    },
    async waitForIdle(timeoutMs = 20_000) {
      await waitFor(
        async () =>
          (await status.isIdle()) &&
          (await new Promise((r) => setTimeout(r, 50))) === undefined &&
          (await status.isIdle()),
        { timeoutMs, what: "the pipeline to be idle" },
      );
    },
    async close() {
      proxy.latencyMs = 0;
      await workers?.close();
      await syncQueue.close();
      await status.close();
      await emulator.close();
      platform.close();
      storeRedis.disconnect();
      queueRedis.disconnect();
      await proxy.close();
      await redis.dispose();
    },
  };
}

type Rig = Awaited<ReturnType<typeof startRig>>;

describe("faults-i: Redis slow for the store while BullMQ's connection works", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  /**
   * Two users changed while the workers are away; then every store round trip takes 2.2 s (past
   * the 2 s command timeout) for 12 s, longer than the jobs' 3 attempts (backoff 200 ms) last.
   */
  async function slowStoreScenario(r: Rig) {
    const user = (userName: string) => ({ schemas: [SCHEMA_USER], userName, active: true });
    const a = await r.directory.createUser("okta", user("slow.a@example.com"));
    const b = await r.directory.createUser("okta", user("slow.b@example.com"));
    const refs: EntityRef[] = [a, b].map((u) => ({ source: "okta", kind: "user", id: u.resource.id }));
    r.proxy.latencyMs = 1_100;
    await r.startWorkers();
    const statuses = new Set<string>();
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      for (const ref of refs) {
        const s = await r.state.getStatus(ref);
        if (s?.lastError) statuses.add(`${s.state}:${s.lastError.code}`);
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    const lettersWhileSlow = await r.state.countDeadLetters();
    r.proxy.latencyMs = 0;
    // A change that lands while the entity's job waits for Redis (its deduplication still held):
    // read by that job's next run, not lost (invariant 2).
    await r.directory.updateUser("okta", a.resource.id, (c) => ({
      ...c.resource,
      displayName: "After the wait",
    }));
    await r.waitForIdle(40_000);
    expect(
      r.emulator.state().users.find((u) => u["userName"] === "slow.a@example.com")?.["displayName"],
    ).toBe("After the wait");
    return { refs, statuses, lettersWhileSlow };
  }

  it("the directory's reads time out: no attempt spent, no dead letter, pending with its reason; lands once quick", async () => {
    rig = await startRig("none");
    const { refs, statuses, lettersWhileSlow } = await slowStoreScenario(rig);
    expect(lettersWhileSlow).toBe(0);
    expect(await rig.state.countDeadLetters()).toBe(0);
    // Invariant 7: the entity's status said why it waited.
    expect([...statuses]).toContain("pending:redis_unavailable");
    expect([...statuses].some((s) => s.startsWith("dead:"))).toBe(false);
    expect(
      await metricValue(rig.registry, "sync_jobs_total", { outcome: "redis_unavailable" }),
    ).toBeGreaterThan(0);
    expect(await metricValue(rig.registry, "sync_jobs_total", { outcome: "dead" })).toBe(0);
    expect(await metricValue(rig.registry, "jobs_total", { queue: "sync", outcome: "retried" })).toBe(0);
    for (const ref of refs) expect((await rig.state.getStatus(ref))?.state).toBe("synced");
    const users = rig.emulator
      .state()
      .users.map((u) => u["userName"])
      .sort();
    expect(users).toEqual(["slow.a@example.com", "slow.b@example.com"]);
  }, 90_000);

  it("also when the request budget shares the slow connection (the bridge's wiring): no job fails", async () => {
    rig = await startRig("store");
    const { refs, statuses, lettersWhileSlow } = await slowStoreScenario(rig);
    // Attempts spent on Redis, and jobs failed for good (with no dead letter: the sweeper finds
    // the entity again later), were what the slow store cost before.
    expect(await metricValue(rig.registry, "jobs_total", { queue: "sync", outcome: "retried" })).toBe(0);
    expect(await metricValue(rig.registry, "jobs_total", { queue: "sync", outcome: "dead_lettered" })).toBe(
      0,
    );
    expect(lettersWhileSlow).toBe(0);
    expect(await rig.state.countDeadLetters()).toBe(0);
    expect([...statuses]).toContain("pending:redis_unavailable");
    for (const ref of refs) expect((await rig.state.getStatus(ref))?.state).toBe("synced");
    expect(rig.emulator.state().users).toHaveLength(2);
  }, 90_000);
});
