import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../../jobs/queue-names.js";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { USER_SCHEMA } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { freePort } from "../../helpers/throwaway-redis.js";
import { type BridgeProcess, call, spawnBridge, waitUntilReady } from "./bridge-process.js";

const SHUTDOWN_TIMEOUT_MS = 1_000;
/** Far longer than the test: the first process's create is still unanswered when it stops. */
const SLOW_MS = 120_000;

/**
 * A sync still running at server.shutdownTimeoutMs is handed back to the queue when the process
 * stops: the next start runs it at once, not once its BullMQ lock has expired and the stalled check
 * has moved it (about 35 s with the default lockDuration and stalledInterval).
 */
describe("a forced shutdown hands the jobs it still runs back to the queue", () => {
  const prefix = testPrefix("handback");
  let emulator: PlatformEmulator;
  let redis: Redis;
  let queue: Queue;
  let port: number;
  let config: ConfigInput;
  const bridges: BridgeProcess[] = [];

  beforeAll(async () => {
    emulator = createPlatformEmulator({ token: "platform-token" });
    const platformUrl = await emulator.start({ port: 0 });
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    await redis.connect();
    queue = new Queue(QUEUE_NAMES.sync, { connection: redis, prefix });
    port = await freePort();
    config = {
      platform: {
        baseUrl: platformUrl,
        token: "platform-token",
        allowInsecureHttp: true,
        requestsPerSecond: 200,
        // The client waits for the slow answer (no timeout, no retry in the meantime).
        timeoutMs: SLOW_MS * 2,
      },
      redis: { url: TEST_REDIS_URL, prefix },
      server: { port, host: "127.0.0.1", shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS },
      logLevel: "info",
      sources: { okta: { tokens: ["okta-token"] } },
    };
  }, 20_000);

  afterAll(async () => {
    for (const bridge of bridges) await bridge.dispose();
    await queue?.close();
    await emulator?.close();
    if (redis) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  it("the restarted bridge runs the interrupted sync within seconds", async () => {
    emulator.addFault({ type: "slow", delayMs: SLOW_MS, count: 1, match: { operation: "createUser" } });
    const first = spawnBridge(config);
    bridges.push(first);
    await waitUntilReady(port, first);
    const userName = "handback.user@example.com";
    const created = await call(port, {
      method: "POST",
      path: "/scim/v2/okta/Users",
      headers: { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" },
      body: { schemas: [USER_SCHEMA], userName, active: true },
    });
    expect(created.kind === "answer" && created.status).toBe(201);

    // The sync is stuck in the platform's create: the slow rule fired, and the job is active.
    await waitFor(() => emulator.faults().length === 0, { what: "the create to reach the platform" });
    expect(await queue.getActiveCount()).toBe(1);

    const sigterm = Date.now();
    first.child.kill("SIGTERM");
    expect(await first.exited, first.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - sigterm).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5_000);
    // Handed back before the process ended: waiting, no longer active (nor left to its lock).
    expect(await queue.getJobCounts("active", "wait")).toEqual({ active: 0, wait: 1 });
    expect(first.output()).toContain("handing their jobs back");

    const second = spawnBridge(config);
    bridges.push(second);
    await waitUntilReady(port, second);
    const restarted = Date.now();
    await waitFor(() => emulator.state().users.some((u) => u.userName === userName), {
      timeoutMs: 10_000,
      what: "the user created on the platform by the restarted bridge",
    });
    expect(Date.now() - restarted).toBeLessThan(10_000);
    await waitFor(async () => (await queue.getJobCounts("active", "wait")).active === 0, {
      what: "the sync to finish",
    });
    expect(emulator.state().users.filter((u) => u.userName === userName)).toHaveLength(1);
    second.child.kill("SIGTERM");
    expect(await second.exited, second.output()).toEqual({ code: 0, signal: null });
  }, 60_000);
});
