import { Redis } from "ioredis";
import supertest from "supertest";
import { createApp } from "../../routes/app.js";
import { buildConfig } from "../../src/config/load-config.js";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { RedisDirectoryStore } from "../../src/directory/redis-directory-store.js";
import { createLogger } from "../../src/observability/logger.js";
import { matchesFilter } from "../../src/scim/filter-eval.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "./redis-test-prefix.js";

export const OKTA_TOKEN = "okta-token-123";
export const ENTRA_TOKEN = "entra-token-456";
export const ADMIN_TOKEN = "admin-token-789";

/** An intake app over a real Redis with its own prefix; `notified` records every enqueue request. */
export async function createScimTestApp(name: string, overrides: Partial<ConfigInput> = {}) {
  const prefix = testPrefix(name);
  const config = buildConfig({
    platform: { baseUrl: "https://platform.example.com", token: "x" },
    admin: { tokens: [ADMIN_TOKEN] },
    redis: { url: TEST_REDIS_URL, prefix },
    sources: { okta: { tokens: [OKTA_TOKEN] }, entra: { tokens: [ENTRA_TOKEN] } },
    logLevel: "silent",
    ...overrides,
  });
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
  const app = createApp({ logger, scim: { config, directory, logger } });
  const request = supertest(app);
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  return {
    app,
    config,
    prefix,
    redis,
    directory,
    notified,
    request,
    okta: auth(OKTA_TOKEN),
    entra: auth(ENTRA_TOKEN),
    async close() {
      await deleteKeys(redis, prefix);
      await redis.quit();
    },
  };
}

export type ScimTestApp = Awaited<ReturnType<typeof createScimTestApp>>;
