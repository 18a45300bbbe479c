import { Queue } from "bullmq";
import { Redis } from "ioredis";
import supertest from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../../jobs/queue-names.js";
import { type RunningBridge, startBridge } from "../../../src/bridge.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import {
  E2E_ADMIN_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  startTestBridge,
} from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../../helpers/redis-test-prefix.js";

/**
 * `sync.attempts` holds for every sync job, not only the sweeper's re-enqueues: a job the SCIM
 * intake enqueues (through the bridge's sync queue) carries it, and a platform that keeps failing
 * dead-letters the entity after that many attempts.
 */
describe("sync.attempts from the config", () => {
  let h: TestBridge | undefined;
  let bridge: RunningBridge | undefined;
  afterEach(async () => {
    await bridge?.close();
    bridge = undefined;
    await h?.close();
    h = undefined;
  });

  /** The harness's config with `sync.attempts: 3` and no client-side retries. */
  function configWithAttempts(harness: TestBridge, attempts: number) {
    return buildConfig({
      ...harness.config,
      platform: { ...harness.config.platform, maxRetries: 0 },
      sync: { ...harness.config.sync, attempts },
    });
  }

  const createUser = (url: string, userName: string) =>
    supertest(url)
      .post("/scim/v2/okta/Users")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({ schemas: [USER_SCHEMA], userName, active: true });

  it("a SCIM-enqueued sync job carries config sync.attempts", async () => {
    h = await startTestBridge("sync-attempts-opts", { start: false });
    // The api role only: the job stays waiting, as the intake enqueued it.
    bridge = await startBridge(configWithAttempts(h, 3), { role: "api", logger: createLogger("silent") });
    const created = await createUser(bridge.url!, "opts@example.com");
    expect(created.status).toBe(201);
    const redis = new Redis(TEST_REDIS_URL);
    const queue = new Queue(QUEUE_NAMES.sync, { connection: redis, prefix: h.prefix });
    try {
      const jobs = await waitFor(
        async () => {
          const found = await queue.getJobs(["waiting", "prioritized", "delayed"]);
          return found.length > 0 ? found : undefined;
        },
        { what: "the sync job" },
      );
      expect(jobs.map((j) => j.data)).toEqual([{ source: "okta", kind: "user", id: created.body.id }]);
      expect(jobs[0]!.opts.attempts).toBe(3);
    } finally {
      await queue.close();
      await redis.quit();
    }
  });

  it("a platform that keeps failing dead-letters the user after sync.attempts attempts", async () => {
    h = await startTestBridge("sync-attempts-dead", {
      start: false,
      faults: [{ type: "error", status: 503, match: { operation: "createUser" } }],
    });
    bridge = await startBridge(configWithAttempts(h, 3), { role: "all", logger: createLogger("silent") });
    const created = await createUser(bridge.url!, "dead@example.com");
    expect(created.status).toBe(201);
    const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
    // With the default (8 attempts, exponential from 1 s) this would take minutes.
    const letters = await waitFor(
      async () => {
        const res = await supertest(bridge!.url!).get("/admin/v1/dead-letters?source=okta").set(admin);
        return res.body.total === 1 ? res.body : undefined;
      },
      { what: "the dead letter", timeoutMs: 20_000 },
    );
    expect(letters.items[0]).toMatchObject({ ref: { source: "okta", kind: "user", id: created.body.id } });
    expect(letters.items[0].attempts).toBe(3);
  }, 30_000);
});
