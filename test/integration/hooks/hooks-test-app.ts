import express from "express";
import { Registry } from "prom-client";
import supertest from "supertest";
import { createHooksRouter } from "../../../routes/hooks/hooks-router.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { signWebhook } from "../../../src/hooks/standard-webhooks.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";
import { createRecordingDirectory } from "../../helpers/recording-directory.js";

export const OKTA_SECRET = "okta-hook-secret-0123456789";
export const EVENTS_SECRET = `whsec_${Buffer.from("events signing key for tests 32b").toString("base64")}`;

/** The hooks router on an app of its own, over a real Redis with a prefix of its own. */
export async function createHooksTestApp(name: string) {
  const prefix = testPrefix(name);
  const config = buildConfig({
    platform: { baseUrl: "https://platform.example.com", token: "x" },
    redis: { url: TEST_REDIS_URL, prefix },
    server: { bodyLimit: "64kb" },
    logLevel: "silent",
    sources: {
      okta: { tokens: ["t1"], hooks: { okta: { secret: OKTA_SECRET }, events: { secret: EVENTS_SECRET } } },
      custom: { tokens: ["t2"], hooks: { okta: { secret: OKTA_SECRET, header: "X-Hook-Key" } } },
      plain: { tokens: ["t3"] },
    },
  });
  const { redis, directory, notified, logger } = await createRecordingDirectory(prefix);
  const registry = new Registry();
  let nowMs = Date.now();
  const app = express();
  app.use(
    "/hooks",
    createHooksRouter({ config, directory, redis, prefix, logger, registry, now: () => nowMs }),
  );
  const request = supertest(app);
  return {
    config,
    prefix,
    redis,
    directory,
    notified,
    registry,
    request,
    setNow(ms: number) {
      nowMs = ms;
    },
    /** POSTs a delivery to /hooks/<source>/okta with the secret. */
    postOkta(body: unknown, source = "okta") {
      return request
        .post(`/hooks/${source}/okta`)
        .set("Authorization", OKTA_SECRET)
        .set("Content-Type", "application/json")
        .send(JSON.stringify(body));
    },
    /** POSTs signed events to /hooks/<source>/events. */
    postEvents(
      body: unknown,
      options: { id?: string; timestamp?: number; secret?: string; raw?: string } = {},
    ) {
      const raw = options.raw ?? JSON.stringify(body);
      const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
      const timestamp = options.timestamp ?? Math.floor(nowMs / 1000);
      return request
        .post("/hooks/okta/events")
        .set("Content-Type", "application/json")
        .set("webhook-id", id)
        .set("webhook-timestamp", String(timestamp))
        .set("webhook-signature", signWebhook(options.secret ?? EVENTS_SECRET, id, timestamp, raw))
        .send(raw);
    },
    async user(key: { externalId?: string; userName?: string }, source = "okta") {
      const id = await directory.findUserId(source, key);
      return id ? directory.getUser(source, id) : null;
    },
    async group(key: { externalId?: string; displayName?: string }, source = "okta") {
      const id = await directory.findGroupId(source, key);
      return id ? directory.getGroup(source, id, { withMembers: true }) : null;
    },
    async counter(labels: Record<string, string>): Promise<number> {
      const metric = await registry.getSingleMetric("scim_bridge_hook_events_total")?.get();
      return (metric?.values ?? [])
        .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
        .reduce((sum, v) => sum + v.value, 0);
    },
    async close() {
      await deleteKeys(redis, prefix);
      await redis.quit();
    },
  };
}

export type HooksTestApp = Awaited<ReturnType<typeof createHooksTestApp>>;
