/**
 * A run's or resync's lease check extends its job's lock (jobs/job-lease.ts) by the lock duration
 * of the worker that took the job, not by a constant: a lock extended past the worker's own
 * duration would hold a crashed worker's job longer than its lockDuration says before the stalled
 * check hands it on.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResyncQueue, startResyncWorker } from "../../../jobs/resync/resync-queue.js";
import type { ResyncDeps } from "../../../jobs/resync/resync-runner.js";
import { ResyncStore } from "../../../src/admin/resync-store.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";

describe("the lease of a resync's job", () => {
  const prefix = testPrefix("lease-duration");
  const config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    redis: { url: TEST_REDIS_URL, prefix },
    logLevel: "silent",
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const logger = createLogger("silent");
  let redis: Redis;
  let connection: Redis;
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    await redis.connect();
    connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await deleteKeys(redis, prefix);
    await redis.quit();
    connection.disconnect();
  });

  it("extends the lock by the worker's lockDuration", async () => {
    const name = `lease-duration-${randomUUID().slice(0, 8)}`;
    const resyncs = new ResyncStore(redis, prefix);
    const op = await resyncs.createOperation({ source: "okta", scope: { users: ["u1"], groups: [] } });
    const lockKey = `${prefix}:${name}:run-${op.id}:lock`;
    const lockTtls: number[] = [];
    const deps: ResyncDeps = {
      config,
      platform: { getUser: async () => null },
      directory: {
        // Read right after the lease check that comes before the guard's chunk.
        snapshotUser: async (_source: string, id: string) => {
          lockTtls.push(await redis.pttl(lockKey));
          return {
            desired: { resource: { id, userName: `${id}@example.com`, active: true } },
            generation: 1,
          };
        },
        snapshotGroup: async () => null,
        scanIds: async function* () {},
        countEntities: async () => 1,
      } as unknown as ResyncDeps["directory"],
      state: {
        getUserPlatformIds: async (_source, ids) => ids.map(() => null),
        countEmbedUsers: async () => 0,
        countOwnedUsers: async () => 1,
      },
      requestResync: async () => {},
      resyncs,
      logger,
    };
    const queue = createResyncQueue({ connection, prefix, logger, name });
    const worker = startResyncWorker({ connection, prefix, name, deps, lockDurationMs: 4_000 });
    closers.push(
      () => worker.close(),
      () => queue.queue.obliterate({ force: true }).then(() => queue.close()),
    );
    await queue.enqueue(op.id, "run");

    await waitFor(async () => (await resyncs.get(op.id))?.state === "succeeded", { what: "the resync" });
    expect(lockTtls.length).toBeGreaterThan(0);
    for (const ttl of lockTtls) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(4_000);
    }
  });
});
