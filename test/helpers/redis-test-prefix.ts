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

/**
 * Every place under `prefix` where one of `needles` occurs: key names, fields, members, values
 * (BullMQ's jobs and event streams aside: they are trimmed by count and length, not per entity).
 */
export async function redisTraces(redis: Redis, prefix: string, needles: string[]): Promise<string[]> {
  const found: string[] = [];
  const hit = (text: string) => needles.some((n) => text.includes(n));
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === "stream") continue; // BullMQ events, trimmed by length
      if (type === "hash") {
        const entries = await redis.hgetall(key);
        if ("data" in entries && "timestamp" in entries) continue; // a BullMQ job, trimmed by count
        if (hit(key)) found.push(key);
        for (const [field, value] of Object.entries(entries))
          if (hit(field) || hit(value)) found.push(`${key} ${field}=${value.slice(0, 120)}`);
        continue;
      }
      if (hit(key)) {
        found.push(key);
        continue;
      }
      let items: string[] = [];
      if (type === "set") items = await redis.smembers(key);
      else if (type === "zset") items = await redis.zrange(key, "0", "-1");
      else if (type === "list") items = await redis.lrange(key, 0, -1);
      else if (type === "string") items = [(await redis.get(key)) ?? ""];
      for (const item of items) if (hit(item)) found.push(`${key} ${item.slice(0, 120)}`);
    }
  } while (cursor !== "0");
  return found;
}
