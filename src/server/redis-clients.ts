/**
 * The Redis clients of a bridge process (fail-fast for the intake, patient for BullMQ), how their
 * outages are logged, and how they and the other parts are closed within a bound at shutdown.
 */
import { Redis } from "ioredis";
import { directoryRedisOptions } from "../directory/redis-directory-store.js";
import type { Logger } from "../observability/logger.js";

/**
 * ioredis for the intake: no offline queue, one retry, a command timeout, so a Redis outage or
 * stall answers 503 at once. It reconnects for ever (at most 2 s apart) on its own.
 */
export function createStoreRedis(url: string): Redis {
  return new Redis(url, {
    ...directoryRedisOptions,
    lazyConnect: true,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 50, 1_000),
    // Concurrent requests' commands share one write: ~0.2 socket writes per create instead of ~3.
    enableAutoPipelining: true,
  });
}

/**
 * ioredis for BullMQ workers: BullMQ requires maxRetriesPerRequest null for blocking commands. It
 * queues commands while Redis is away and reconnects for ever, so workers pause and resume.
 */
export function createQueueRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: false,
    retryStrategy: (times) => Math.min(times * 50, 1_000),
  });
}

/** One warning when a client loses Redis (not one per reconnect attempt), one line when it is back. */
export function logOutages(redis: Redis, client: string, logger: Logger): void {
  let down = false;
  redis.on("error", (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ client, err: err.message }, "redis unreachable; reconnecting");
  });
  redis.on("ready", () => {
    if (!down) return;
    down = false;
    logger.info({ client }, "redis reachable again");
  });
}

/** How long one closing step (a queue, a Redis client) may take before shutdown goes on without it. */
export const CLOSE_STEP_MS = 500;

/** Resolves true when `work` settles within `ms`, false otherwise (a rejection counts as settled). */
export async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return result;
}

/** quit(), or a hard disconnect when Redis does not answer within `timeoutMs` (it may be down). */
export async function closeRedis(redis: Redis, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([redis.quit().catch(() => {}), timeout]);
  clearTimeout(timer);
  redis.disconnect();
}
