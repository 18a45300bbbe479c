import supertest from "supertest";
import { afterAll, beforeAll, expect } from "vitest";
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

/** A resource as the intake answers it (a user; a group has no `userName`): its id and the rest. */
export type ScimResource = { id: string; userName: string } & Record<string, unknown>;

/**
 * A suite's requests to one source's SCIM endpoints (`/scim/v2/<source>`) with that source's token,
 * over an app on a key prefix of its own (`name`) made before the suite's tests and closed (its
 * keys deleted) after them.
 */
export function scimSourceSuite(name: string, source: "okta" | "entra") {
  let made: ScimTestApp | undefined;
  const app = (): ScimTestApp => {
    if (!made) throw new Error("the suite's app is made in its beforeAll");
    return made;
  };
  beforeAll(async () => {
    made = await createScimTestApp(name);
  });
  afterAll(async () => {
    await made?.close();
  });

  const base = `/scim/v2/${source}`;
  const token = () => (source === "okta" ? app().okta : app().entra);
  const get = (path: string) => app().request.get(`${base}${path}`).set(token());
  const send = (method: "post" | "put" | "patch", path: string, body: unknown) =>
    app().send(method, `${base}${path}`, body, token());
  return {
    base,
    get,
    send,
    /** POSTs `body` to `path`, expects a 201 and answers the created resource. */
    async created<T = ScimResource>(path: string, body: Record<string, unknown>): Promise<T> {
      const res = await send("post", path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as T;
    },
    /** The user `id` as a GET answers it (a 200 expected). */
    async stored<T = ScimResource>(id: string): Promise<T> {
      const res = await get(`/Users/${id}`);
      expect(res.status).toBe(200);
      return res.body as T;
    },
    /** The ids of the users a `filter` lists (a 200 expected), in the order listed. */
    async ids(filter: string): Promise<string[]> {
      const res = await get(`/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.Resources as { id: string }[]).map((r) => r.id);
    },
  };
}
