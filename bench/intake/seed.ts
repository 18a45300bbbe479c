import { Redis } from "ioredis";
import { RedisDirectoryStore } from "../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../src/scim/filter-eval.js";
import { toCanonicalUser } from "../../src/scim/canonical-resource.js";
import type { JsonObject } from "../../src/scim/scim-types.js";

/** A user as Okta creates one (RFC 7643 §4.1 attributes Okta sends on a push). */
export function userBody(userName: string, i: number): JsonObject {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    externalId: `ext-${userName}`,
    name: { givenName: "Bench", familyName: `User${i}` },
    displayName: `Bench User${i}`,
    emails: [{ primary: true, value: userName, type: "work" }],
    locale: "en-US",
    active: true,
  };
}

/**
 * Stores users directly through the directory store (one Lua script each, many in flight on one
 * connection so ioredis pipelines them). Notify is a no-op: seeded users are not the measurement.
 */
export async function seedUsers(options: {
  redisUrl: string;
  prefix: string;
  source: string;
  userName: (i: number) => string;
  count: number;
  inFlight?: number;
}): Promise<string[]> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  const store = new RedisDirectoryStore({
    redis,
    prefix: options.prefix,
    notify: async () => {},
    matchesFilter,
  });
  const ids = new Array<string>(options.count);
  let next = 0;
  const worker = async () => {
    while (next < options.count) {
      const i = next;
      next += 1;
      const record = await store.createUser(
        options.source,
        toCanonicalUser(userBody(options.userName(i), i)),
      );
      ids[i] = record.resource.id;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.inFlight ?? 256 }, worker));
  } finally {
    await redis.quit();
  }
  return ids;
}

/** Deletes every key under `prefix` (SCAN + UNLINK); returns how many. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  if (!prefix.startsWith("{bench-intake-")) throw new Error(`refusing to delete keys under ${prefix}`);
  const redis = new Redis(redisUrl);
  let deleted = 0;
  try {
    let cursor = "0";
    do {
      const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    await redis.quit();
  }
  return deleted;
}
