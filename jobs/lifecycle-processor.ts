import type { Job, Queue } from "bullmq";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/observability/logger.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import { BULK_OPERATION } from "../src/sync/lifecycle-entry.js";
import { flushLifecycle } from "../src/sync/lifecycle-flusher.js";
import type { SyncContext } from "../src/sync/sync-context.js";
import { REDIS_UNAVAILABLE, classifyFailure } from "../src/sync/sync-error.js";
import type { SyncMetrics } from "./sync-metrics.js";
import { rateLimited, recordDeadLetter, redisWaitOver, waitForRedisOrGoOn } from "./sync-processor.js";

export interface LifecycleProcessorDeps {
  ctx: SyncContext;
  queue: Queue;
  budget: RequestBudget;
  metrics: SyncMetrics;
  logger: Logger;
  windowMs: number;
  maxAttempts: number;
  stopping(): boolean;
}

/** The lifecycle flush job: drains the batch into bulk calls (src/sync/lifecycle-flusher.ts). */
export function createLifecycleProcessor(deps: LifecycleProcessorDeps) {
  const { ctx, metrics, logger } = deps;
  /**
   * Redis could not serve: the flush waits for it without spending one of its attempts (for
   * REDIS_WAIT_LIMIT_MS from the first of its consecutive waits; then it spends them, the failures
   * still counted as consecutive: redisWaitGoesOn). The batch's entries stay in
   * Redis: they are flushed once it serves again. Counted as the flush job's own wait,
   * `sync_jobs_total{kind="lifecycle",outcome="redis_unavailable"}`, not as a user's sync.
   */
  const waitsForRedis = async (job: Job | undefined, token: string | undefined, err: unknown) => {
    if (job === undefined) return;
    await waitForRedisOrGoOn(job, token, token !== undefined && !redisWaitOver(job), err, {
      logger,
      fields: {},
      what: "lifecycle flush",
      count: () => metrics.jobs.inc({ kind: "lifecycle", outcome: REDIS_UNAVAILABLE }),
    });
  };
  return async (job?: Job, token?: string): Promise<number> => {
    let pausedUntil: number;
    try {
      pausedUntil = await deps.budget.pausedUntil();
    } catch (err) {
      await waitsForRedis(job, token, err);
      throw err;
    }
    if (pausedUntil > Date.now()) return rateLimited(deps, pausedUntil - Date.now());
    try {
      return await flushLifecycle(ctx, {
        windowMs: deps.windowMs,
        maxAttempts: deps.maxAttempts,
        stopping: deps.stopping,
        sleep: (ms) => sleep(ms),
        // Heals by itself (warn): the users are tried again until the platform answers.
        callFailed: ({ action, users, code, retryAt }) => {
          metrics.jobs.inc({ kind: "lifecycle", outcome: "retry" });
          logger.warn(
            {
              code,
              operation: BULK_OPERATION,
              action,
              users,
              ...(retryAt !== undefined ? { retryAt: new Date(retryAt).toISOString() } : {}),
            },
            "lifecycle flush: a bulk call failed; its users are tried again until the platform answers (each shows why on its status)",
          );
        },
        deadLetter: async ({ entry, code, message }) => {
          metrics.jobs.inc({ kind: "user", outcome: "dead" });
          await recordDeadLetter(
            deps,
            entry.ref,
            { code, message, operation: "bulkUsers" },
            entry.attempts,
            undefined,
          );
        },
      });
    } catch (err) {
      const fate = classifyFailure(err);
      if (fate.rateLimitedForMs !== undefined) {
        logger.warn(
          {
            code: fate.code,
            operation: fate.operation,
            waitSeconds: Math.ceil(fate.rateLimitedForMs / 1000),
          },
          "platform rate limited: the lifecycle queue waits, then the flush runs again",
        );
        return rateLimited(deps, fate.rateLimitedForMs);
      }
      await waitsForRedis(job, token, err);
      logger.warn({ code: fate.code }, "lifecycle flush failed, will retry");
      throw err;
    }
  };
}
