/**
 * The workers' forced close (jobs/start-workers.ts): a sync still running at
 * server.shutdownTimeoutMs is frozen and handed back to the queue. Frozen means that once the job is
 * back in wait (where another worker may take it), this process goes no further with it: the
 * platform's late answer to its call in flight is not acted on, nothing more is written to the
 * platform, and nothing is recorded (one sync per entity at a time: invariant 3).
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../../jobs/queue-names.js";
import { type RunningWorkers, startWorkers } from "../../../jobs/start-workers.js";
import { type SyncQueue, createSyncQueue } from "../../../jobs/sync-queue.js";
import type { Config } from "../../../src/config/config-schema.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";

const TOKEN = "platform-token";
const SHUTDOWN_TIMEOUT_MS = 300;
/** The create's answer comes well after the forced close has handed the job back. */
const SLOW_MS = 1_500;

describe("workers' forced close: the job still running is frozen and handed back", () => {
  const prefix = testPrefix("forced-close");
  let emulator: PlatformEmulator;
  let storeRedis: Redis;
  let queueRedis: Redis;
  let syncQueue: SyncQueue;
  let queue: Queue;
  let workers: RunningWorkers | undefined;
  let config: Config;
  let directory: RedisDirectoryStore;
  let platform: HttpPlatformClient;

  beforeAll(async () => {
    emulator = createPlatformEmulator({
      token: TOKEN,
      faults: [{ type: "slow", delayMs: SLOW_MS, count: 1, match: { operation: "createUser" } }],
    });
    const platformUrl = await emulator.start({ port: 0 });
    config = buildConfig({
      platform: { baseUrl: platformUrl, token: TOKEN, allowInsecureHttp: true, timeoutMs: 10_000 },
      redis: { url: TEST_REDIS_URL, prefix },
      server: { shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS },
      logLevel: "silent",
      sources: { okta: { tokens: ["okta-token"] } },
    });
    const logger = createLogger("silent");
    storeRedis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await storeRedis.connect();
    queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    syncQueue = createSyncQueue({ connection: queueRedis, prefix, logger });
    queue = new Queue(QUEUE_NAMES.sync, { connection: queueRedis, prefix });
    directory = new RedisDirectoryStore({
      redis: storeRedis,
      prefix,
      notify: syncQueue.notify,
      logger,
      matchesFilter,
    });
    const budget = new NoopRequestBudget();
    platform = new HttpPlatformClient({
      baseUrl: platformUrl,
      token: TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 10_000,
      maxRetries: 0,
      budget,
    });
    workers = await startWorkers({
      config,
      connection: queueRedis,
      directory,
      platform,
      budget,
      logger,
      registry: createMetricsRegistry({ defaultMetrics: false }),
    });
  }, 20_000);

  afterAll(async () => {
    await syncQueue?.close();
    await queue?.close();
    platform?.close();
    await emulator?.close();
    if (storeRedis) {
      await deleteKeys(storeRedis, prefix);
      await storeRedis.quit();
    }
    queueRedis?.disconnect();
  });

  it("is back in wait at once, and acts on nothing after that", async () => {
    const { resource } = await directory.createUser("okta", {
      schemas: [SCHEMA_USER],
      userName: "frozen.user@example.com",
      active: true,
    });
    await waitFor(() => emulator.faults().length === 0, { what: "the create to reach the platform" });
    expect(await queue.getActiveCount()).toBe(1);

    const closing = Date.now();
    await workers?.close();
    const handedBackAt = Date.now();
    expect(handedBackAt - closing).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 1_500);
    expect(await queue.getJobCounts("active", "wait")).toEqual({ active: 0, wait: 1 });

    // The platform answers the create later (it applies it): the frozen job does not go on.
    await waitFor(() => emulator.count("createUser") === 1, {
      timeoutMs: SLOW_MS * 4,
      what: "the platform's answer to the create",
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const afterHandBack = emulator
      .requests()
      .filter((r) => Date.parse(r.time) > handedBackAt)
      .map((r) => r.operation);
    expect(afterHandBack).toEqual(["createUser"]);
    // Nothing recorded: not the platform id the answer carried, nor a failure.
    const state = new RedisSyncStateStore(storeRedis, prefix);
    expect(await state.getUserPlatformIds("okta", [resource.id])).toEqual([null]);
    expect(
      (await state.getStatus({ source: "okta", kind: "user", id: resource.id }))?.lastError,
    ).toBeUndefined();
    expect(await queue.getJobCounts("active", "wait", "failed", "delayed")).toEqual({
      active: 0,
      wait: 1,
      failed: 0,
      delayed: 0,
    });
  }, 30_000);
});
