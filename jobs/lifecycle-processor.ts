import type { Job, Queue } from "bullmq";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/observability/logger.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import { BULK_OPERATION } from "../src/sync/lifecycle-entry.js";
import { WritesStopped } from "../src/platform/client/unanswered-writes.js";
import { flushLifecycle } from "../src/sync/lifecycle-flusher.js";
import type { SyncContext } from "../src/sync/sync-context.js";
import { REDIS_UNAVAILABLE, classifyFailure } from "../src/sync/sync-error.js";
import { DEFAULT_LOCK_DURATION_MS, jobStartedAt, lockLost } from "./job-lease.js";
import type { SyncMetrics } from "./sync-metrics.js";
import {
  LOCK_LOST,
  rateLimited,
  recordDeadLetter,
  redisWaitOver,
  waitForRedisOrGoOn,
} from "./sync-processor.js";

export interface LifecycleProcessorDeps {
  ctx: SyncContext;
  queue: Queue;
  budget: RequestBudget;
  metrics: SyncMetrics;
  logger: Logger;
  windowMs: number;
  maxAttempts: number;
  stopping(): boolean;
  /** The worker's lock duration (default 30 s): a run past it may have lost its job (lockLost). */
  lockDurationMs?: number;
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
    const startedAt = jobStartedAt(job);
    try {
      return await flushLifecycle(ctx, {
        windowMs: deps.windowMs,
        maxAttempts: deps.maxAttempts,
        stopping: deps.stopping,
        // A run frozen past its job's lock sends nothing more: the job's next run flushes the batch
        // as it is now (what this run peeked before the freeze may have been replaced since).
        beforeWrite: async () => {
          if (
            job &&
            (await lockLost(job, token, startedAt, deps.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS))
          ) {
            throw new WritesStopped("the lifecycle flush's job lock ran out: another run flushes the batch");
          }
        },
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
      if (err instanceof WritesStopped) {
        metrics.jobs.inc({ kind: "lifecycle", outcome: LOCK_LOST });
        logger.warn(
          { operation: BULK_OPERATION },
          "lifecycle flush ran on after its job's lock ran out: it stopped before its next bulk call; another run flushes the batch",
        );
        return 0;
      }
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
