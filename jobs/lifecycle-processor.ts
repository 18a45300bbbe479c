import { DelayedError, type Job, type Queue } from "bullmq";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/observability/logger.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import { flushLifecycle } from "../src/sync/lifecycle-flusher.js";
import type { SyncContext } from "../src/sync/sync-context.js";
import { REDIS_UNAVAILABLE, classifyFailure, isRedisFailure } from "../src/sync/sync-error.js";
import type { SyncMetrics } from "./sync-metrics.js";
import { rateLimited, recordDeadLetter, redisWaitMs } from "./sync-processor.js";

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
  /** Redis could not serve: the flush waits for it without spending one of its attempts. */
  const waitForRedis = async (job: Job, token: string, err: unknown): Promise<never> => {
    const waits = Math.max(0, (job.attemptsStarted ?? 1) - job.attemptsMade - 1);
    const delayMs = redisWaitMs(job, waits);
    metrics.jobs.inc({ kind: "user", outcome: REDIS_UNAVAILABLE });
    logger.warn(
      { code: REDIS_UNAVAILABLE, err: err instanceof Error ? err.message : String(err), waitMs: delayMs },
      "Redis unavailable during the lifecycle flush: the flush waits, then runs again (no attempt spent)",
    );
    // The batch's entries stay in Redis: they are flushed once it serves again.
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError();
  };
  return async (job?: Job, token?: string): Promise<number> => {
    let pausedUntil: number;
    try {
      pausedUntil = await deps.budget.pausedUntil();
    } catch (err) {
      if (job && token !== undefined && isRedisFailure(err)) return waitForRedis(job, token, err);
      throw err;
    }
    if (pausedUntil > Date.now()) return rateLimited(deps, pausedUntil - Date.now());
    try {
      return await flushLifecycle(ctx, {
        windowMs: deps.windowMs,
        maxAttempts: deps.maxAttempts,
        stopping: deps.stopping,
        sleep: (ms) => sleep(ms),
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
      if (fate.redisUnavailable && job && token !== undefined) return waitForRedis(job, token, err);
      logger.warn({ code: fate.code }, "lifecycle flush failed, will retry");
      throw err;
    }
  };
}
