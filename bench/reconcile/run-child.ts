/**
 * Child of bench/reconcile-100k.ts: runs one reconciliation of the seeded source and prints one
 * JSON line: duration, peak RSS (getrusage maxRSS), counts. Nothing else lives in this process.
 */
import { Redis } from "ioredis";
import { runReconcile } from "../../jobs/reconcile/reconcile-runner.js";
import { reconcileSyncState } from "../../jobs/reconcile/sync-state-adapter.js";
import { ReconcileRunStore } from "../../src/admin/reconcile-run-store.js";
import { buildConfig } from "../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../src/directory/redis-directory-store.js";
import { createLogger } from "../../src/observability/logger.js";
import { HttpPlatformClient } from "../../src/platform/client/http-platform-client.js";
import { RedisRequestBudget } from "../../src/platform/client/request-budget.js";
import { matchesFilter } from "../../src/scim/filter-eval.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const prefix = env("BENCH_PREFIX");
const url = env("BENCH_PLATFORM_URL");
const rps = Number(env("BENCH_RPS"));
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const config = buildConfig({
  platform: { baseUrl: url, token: env("BENCH_TOKEN"), allowInsecureHttp: true, requestsPerSecond: rps },
  redis: { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", prefix },
  reconcile: { maxDeprovisionShare: 0.1, orphans: "report", schedule: "0 0 * * *", keepRuns: 5 },
  logLevel: "silent",
  sources: { bench: { tokens: ["bench-token"] } },
});
const logger = createLogger("silent");
let platformRequests = 0;
const budget = new RedisRequestBudget({ redis, prefix, requestsPerSecond: rps });
const counting = {
  acquire: async () => {
    platformRequests += 1;
    return budget.acquire();
  },
  pauseUntil: (ms: number) => budget.pauseUntil(ms),
} as unknown as RedisRequestBudget;
const platform = new HttpPlatformClient({
  baseUrl: url,
  token: config.platform.token,
  allowInsecureHttp: true,
  timeoutMs: 10_000,
  maxRetries: 3,
  budget: counting,
});
let repaired = 0;
const directory = new RedisDirectoryStore({ redis, prefix, notify: async () => {}, matchesFilter });
const state = new RedisSyncStateStore(redis, prefix);
const runs = new ReconcileRunStore(redis, prefix, 5);

global.gc?.();
const baselineRssMb = process.memoryUsage().rss / 1e6;
const run = await runs.createRun({ source: "bench", dryRun: false, trigger: "admin" });
const t0 = performance.now();
const done = await runReconcile(
  {
    config,
    redis,
    platform,
    directory,
    state: reconcileSyncState(state, redis, prefix),
    // The bench measures the run, not the syncs it enqueues: repairs are counted, not synced.
    requestResync: async (refs: EntityRef[]) => {
      repaired += refs.length;
    },
    runs,
    logger,
  },
  run.runId,
);
const durationMs = performance.now() - t0;
const peakRssMb = (process.resourceUsage().maxRSS * 1024) / 1e6;
process.stdout.write(
  `${JSON.stringify({ durationMs, peakRssMb, baselineRssMb, platformRequests, repaired, state: done?.state, counts: done?.counts, repairs: done?.repairs, phaseMs: done?.phaseMs, error: done?.error })}\n`,
);
platform.close?.();
await redis.quit();
