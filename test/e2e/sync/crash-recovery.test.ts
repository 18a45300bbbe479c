import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueStatus } from "../../../jobs/queue-status.js";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { createSyncQueue } from "../../../jobs/sync-queue.js";
import { createLogger } from "../../../src/observability/logger.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { spawnSyncWorker } from "./fixtures/crash-harness.js";

const TOKEN = "crash-token";
const USERS = 600;
const GROUPS = 6;

/**
 * Invariants 1 and 2 under crashes: a worker process is killed with SIGKILL in the middle of a
 * large sync (jobs active, creates in flight); after a restart everything converges, nothing is
 * lost, and no platform object exists twice.
 */
describe("crash recovery (SIGKILL mid-sync)", () => {
  let emulator: PlatformEmulator;
  let redis: Redis;
  let queueRedis: Redis;
  const prefix = testPrefix("crash");
  let configJson = "";
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // Slow answers keep jobs in flight, so the kill lands mid-request.
    emulator = createPlatformEmulator({ token: TOKEN, seed: 3, faults: [{ type: "slow", delayMs: 4 }] });
    const url = await emulator.start({ port: 0 });
    const config: ConfigInput = {
      platform: {
        baseUrl: url,
        token: TOKEN,
        allowInsecureHttp: true,
        timeoutMs: 2_000,
        maxRetries: 3,
        requestsPerSecond: 5_000,
      },
      redis: { url: TEST_REDIS_URL, prefix },
      sync: { concurrency: 16, lifecycleBatchWindowMs: 50, sweepIntervalMs: 300, sweepAfterMs: 1_000 },
      logLevel: "silent",
      sources: { okta: { tokens: ["t"], groupPrefix: "okta-" } },
    };
    configJson = JSON.stringify(config);
    redis = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    await redis.connect();
    queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await emulator?.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
    await queueRedis.quit();
  });

  const spawnWorker = (): Promise<ChildProcess> => spawnSyncWorker(configJson, children);

  it("converges after a worker is killed with SIGKILL in the middle of a large sync", async () => {
    const logger = createLogger("silent");
    const syncQueue = createSyncQueue({ connection: queueRedis, prefix, logger, backoffMs: 20 });
    const directory = new RedisDirectoryStore({
      redis,
      prefix,
      notify: syncQueue.notify,
      logger,
      matchesFilter,
    });
    const status = createQueueStatus({ connection: queueRedis, prefix, directory });
    try {
      const ids: string[] = new Array(USERS);
      await Promise.all(
        Array.from({ length: 16 }, async (_, lane) => {
          for (let i = lane; i < USERS; i += 16) {
            const rec = await directory.createUser("okta", {
              schemas: [SCHEMA_USER],
              userName: `crash${i}@example.com`,
              active: i % 10 !== 0,
              displayName: `User ${i}`,
            });
            ids[i] = rec.resource.id;
          }
        }),
      );
      for (let g = 0; g < GROUPS; g++) {
        await directory.createGroup(
          "okta",
          { schemas: [SCHEMA_GROUP], displayName: `team-${g}` },
          ids.filter((_, i) => i % GROUPS === g),
        );
      }
      const first = await spawnWorker();
      await waitFor(() => emulator.state().users.length >= USERS / 4, {
        timeoutMs: 20_000,
        what: "a quarter synced",
      });
      first.kill("SIGKILL");
      await new Promise((r) => first.once("exit", r));
      const atKill = emulator.state().users.length;
      expect(atKill).toBeLessThan(USERS); // it really died mid-way

      // Changes keep arriving while no worker runs (they must not be lost either).
      await directory.updateUser("okta", ids[1] as string, (c) => ({
        ...c.resource,
        displayName: "renamed",
      }));
      await directory.deleteUser("okta", ids[2] as string);

      const second = await spawnWorker();
      await waitFor(
        async () =>
          (await status.isIdle()) &&
          (await new Promise((r) => setTimeout(r, 50))) === undefined &&
          (await status.isIdle()),
        { timeoutMs: 45_000, intervalMs: 100, what: "convergence after the restart" },
      );
      const exited = new Promise<number | null>((r) => second.once("exit", (code) => r(code)));
      second.kill("SIGTERM");
      expect(await exited).toBe(0); // graceful shutdown on SIGTERM

      const state = emulator.state();
      const byName = new Map(state.users.map((u) => [String(u["userName"]), u]));
      expect(state.users).toHaveLength(USERS); // one platform user per directory user, no duplicates
      expect(byName.size).toBe(USERS);
      for (let i = 0; i < USERS; i++) {
        const u = byName.get(`crash${i}@example.com`);
        expect(u?.active, `crash${i}`).toBe(i === 2 ? false : i % 10 !== 0);
      }
      expect(byName.get("crash1@example.com")?.["displayName"]).toBe("renamed");
      expect(state.groups).toHaveLength(GROUPS);
      const pid = (i: number) => byName.get(`crash${i}@example.com`)?.id;
      for (let g = 0; g < GROUPS; g++) {
        const group = state.groups.find((x) => x.displayName === `okta-team-${g}`);
        const want = ids.flatMap((_, i) => (i % GROUPS === g && i !== 2 ? [pid(i)] : []));
        expect(group?.members.slice().sort(), `okta-team-${g}`).toEqual(want.sort());
      }
      expect(emulator.violations()).toEqual([]);
      expect(await directory.countDirty()).toBe(0);
    } finally {
      await status.close();
      await syncQueue.close();
    }
  }, 90_000);

  it("SIGTERM lets running jobs finish and leaves none active", async () => {
    const logger = createLogger("silent");
    const syncQueue = createSyncQueue({ connection: queueRedis, prefix, logger, backoffMs: 20 });
    const directory = new RedisDirectoryStore({
      redis,
      prefix,
      notify: syncQueue.notify,
      logger,
      matchesFilter,
    });
    const status = createQueueStatus({ connection: queueRedis, prefix, directory });
    try {
      emulator.setFaults([{ type: "slow", delayMs: 30 }]);
      const before = emulator.state().users.length;
      for (let i = 0; i < 200; i++) {
        await directory.createUser("okta", {
          schemas: [SCHEMA_USER],
          userName: `term${i}@example.com`,
          active: true,
        });
      }
      const worker = await spawnWorker();
      await waitFor(() => emulator.state().users.length > before + 10, { what: "some users synced" });
      const exited = new Promise<number | null>((r) => worker.once("exit", (code) => r(code)));
      worker.kill("SIGTERM");
      expect(await exited).toBe(0);
      const counts = await status.queueCounts();
      expect(counts.sync?.active).toBe(0); // finished, not abandoned
      expect(emulator.state().users.length).toBeLessThan(before + 200); // it stopped taking jobs
      emulator.clearFaults();
      const again = await spawnWorker();
      await waitFor(async () => (await status.isIdle()) && emulator.state().users.length === before + 200, {
        timeoutMs: 30_000,
        what: "the rest after a restart",
      });
      again.kill("SIGTERM");
    } finally {
      await status.close();
      await syncQueue.close();
    }
  }, 60_000);
});
