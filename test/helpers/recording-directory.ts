import { Redis } from "ioredis";
import { RedisDirectoryStore } from "../../src/directory/redis-directory-store.js";
import { createLogger } from "../../src/observability/logger.js";
import { matchesFilter } from "../../src/scim/filter-eval.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { TEST_REDIS_URL } from "./redis-test-prefix.js";

/**
 * A real RedisDirectoryStore under `prefix` whose enqueue requests are recorded in `notified`
 * instead of reaching a queue (intake-only tests). The client is connected and fails fast, as the
 * bridge's store client does.
 */
export async function createRecordingDirectory(prefix: string) {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  await redis.connect();
  const notified: EntityRef[] = [];
  const logger = createLogger("silent");
  const directory = new RedisDirectoryStore({
    redis,
    prefix,
    logger,
    matchesFilter,
    notify: async (refs) => {
      notified.push(...refs);
    },
  });
  return { redis, directory, notified, logger };
}
