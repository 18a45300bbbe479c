/**
 * The e2e harness (test/helpers/bridge-harness.ts) with the real admin surface: the bridge is
 * started with the admin routers of jobs/reconcile/admin-jobs.ts built on connections of their
 * own (all state lives in Redis under the harness's prefix), plus small HTTP helpers.
 */
import { Redis } from "ioredis";
import supertest from "supertest";
import { createQueueStatus } from "../../../jobs/queue-status.js";
import { type AdminJobs, startAdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import { createSyncQueue } from "../../../jobs/sync-queue.js";
import { createAdminRouter } from "../../../routes/admin/admin-router.js";
import { createQueueBoardRouter } from "../../../routes/admin/queue-board-router.js";
import { type RunningBridge, startBridge } from "../../../src/bridge.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createLogger } from "../../../src/observability/logger.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import {
  E2E_ADMIN_TOKEN,
  PLATFORM_TOKEN,
  type TestBridgeOptions,
  startTestBridge,
} from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../../helpers/redis-test-prefix.js";

export async function startReconcileBridge(name: string, options: TestBridgeOptions = {}) {
  const h = await startTestBridge(name, { ...options, start: false });
  const logger = createLogger(process.env.E2E_LOG_LEVEL ?? "silent");
  const redis = new Redis(TEST_REDIS_URL);
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const syncQueue = createSyncQueue({ connection, prefix: h.prefix, logger });
  const directory = new RedisDirectoryStore({
    redis,
    prefix: h.prefix,
    notify: syncQueue.notify,
    matchesFilter,
  });
  const queueStatus = createQueueStatus({ connection, prefix: h.prefix, directory });
  const platform = new HttpPlatformClient({
    baseUrl: h.platformUrl,
    token: PLATFORM_TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 2_000,
    maxRetries: 4,
    budget: new NoopRequestBudget(),
  });
  const jobs: AdminJobs = await startAdminJobs({
    config: h.config,
    connection,
    redis,
    directory,
    syncState: new RedisSyncStateStore(redis, h.prefix),
    queueStatus,
    logger,
    platform,
    schedule: false,
  });
  const bridge: RunningBridge = await startBridge(h.config, {
    role: "all",
    logger,
    adminRouters: {
      admin: createAdminRouter({
        service: jobs.service,
        principals: jobs.principals,
        audit: jobs.audit,
        logger,
      }),
      queues: createQueueBoardRouter({
        principals: jobs.principals,
        queues: [syncQueue.queue, ...jobs.queues],
      }),
    },
  });
  const http = () => supertest(bridge.url!);
  const scimAuth = (source: string) => ({ Authorization: `Bearer ${source}-token` });
  return {
    emulator: h.emulator,
    config: h.config,
    bridge,
    jobs,
    http,
    admin(token = E2E_ADMIN_TOKEN) {
      const auth = { Authorization: `Bearer ${token}` };
      return {
        get: (path: string) => http().get(`/admin/v1${path}`).set(auth),
        post: (path: string, body: object = {}) => http().post(`/admin/v1${path}`).set(auth).send(body),
      };
    },
    scim(source: string) {
      const base = `/scim/v2/${source}`;
      return {
        createUser: async (userName: string, extra: Record<string, unknown> = {}) => {
          const res = await http()
            .post(`${base}/Users`)
            .set(scimAuth(source))
            .send({
              schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
              userName,
              active: true,
              ...extra,
            });
          if (res.status !== 201) throw new Error(`create user ${res.status}: ${JSON.stringify(res.body)}`);
          return res.body as { id: string };
        },
        createGroup: async (displayName: string, members: string[]) => {
          const res = await http()
            .post(`${base}/Groups`)
            .set(scimAuth(source))
            .send({
              schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
              displayName,
              members: members.map((value) => ({ value })),
            });
          if (res.status !== 201) throw new Error(`create group ${res.status}: ${JSON.stringify(res.body)}`);
          return res.body as { id: string };
        },
        setActive: (id: string, active: boolean) =>
          http()
            .patch(`${base}/Users/${id}`)
            .set(scimAuth(source))
            .send({
              schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
              Operations: [{ op: "replace", path: "active", value: active }],
            }),
      };
    },
    /** Idle as GET /admin/v1/status reports it, twice in a row. */
    async waitForIdle(timeoutMs = 20_000): Promise<void> {
      const idle = async () => (await this.admin().get("/status")).body.idle === true;
      await waitFor(
        async () =>
          (await idle()) && (await new Promise((r) => setTimeout(r, 30))) === undefined && (await idle()),
        { timeoutMs, what: "the bridge to be idle" },
      );
    },
    async close(): Promise<void> {
      await bridge.close();
      await jobs.close();
      await queueStatus.close();
      await syncQueue.close();
      platform.close?.();
      await redis.quit();
      await connection.quit();
      await h.close();
    },
  };
}

export type ReconcileBridge = Awaited<ReturnType<typeof startReconcileBridge>>;
