import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A key prefix of its own for one test file, with a hash tag like production's. */
export function testPrefix(name: string): string {
  return `{test-${name}-${randomUUID().slice(0, 8)}}`;
}

/** Deletes every key under a prefix (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 15_000, intervalMs = 50, what = "condition" } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
