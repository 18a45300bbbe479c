import type { Queue } from "bullmq";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/observability/logger.js";
import type { RequestBudget } from "../src/platform/client/request-budget.js";
import { flushLifecycle } from "../src/sync/lifecycle-flusher.js";
import type { SyncContext } from "../src/sync/sync-context.js";
import { classifyFailure } from "../src/sync/sync-error.js";
import type { SyncMetrics } from "./sync-metrics.js";
import { rateLimited, recordDeadLetter } from "./sync-processor.js";

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
  return async (): Promise<number> => {
    const pausedUntil = await deps.budget.pausedUntil();
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
      logger.warn({ code: fate.code }, "lifecycle flush failed, will retry");
      throw err;
    }
  };
}
