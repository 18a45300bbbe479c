import supertest from "supertest";
import { createApp } from "../../routes/app.js";
import { buildConfig } from "../../src/config/load-config.js";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "./redis-test-prefix.js";
import { createRecordingDirectory } from "./recording-directory.js";

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
  const { redis, directory, notified, logger } = await createRecordingDirectory(prefix);
  const app = createApp({
    logger,
    trustProxy: config.server.trustProxy,
    scim: { config, directory, logger },
  });
  const request = supertest(app);
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  const okta = auth(OKTA_TOKEN);
  return {
    app,
    config,
    prefix,
    redis,
    directory,
    notified,
    request,
    okta,
    entra: auth(ENTRA_TOKEN),
    /** A SCIM write as identity providers send it: a JSON body as application/scim+json, okta's token unless `as` says otherwise. */
    send(method: "post" | "put" | "patch", url: string, body: unknown, as: Record<string, string> = okta) {
      return request[method](url)
        .set(as)
        .set("Content-Type", "application/scim+json")
        .send(JSON.stringify(body));
    },
    async close() {
      await deleteKeys(redis, prefix);
      await redis.quit();
    },
  };
}

export type ScimTestApp = Awaited<ReturnType<typeof createScimTestApp>>;
