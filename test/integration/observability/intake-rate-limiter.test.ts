import { randomUUID } from "node:crypto";
import express from "express";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { intakeRateLimiter } from "../../../routes/middleware/intake-rate-limiter.js";
import { scimErrorHandler } from "../../../routes/scim/scim-errors.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";

const prefix = `test-${randomUUID()}`;
const redis = new Redis("redis://127.0.0.1:6379", { lazyConnect: false });

function appWith(redisClient: Redis, rates: Record<string, number>, burst?: number) {
  const app = express();
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const router = express.Router({ mergeParams: true });
  router.use(
    intakeRateLimiter({
      redis: redisClient,
      prefix,
      requestsPerSecond: (source) => rates[source],
      burst,
      registry,
    }),
  );
  router.get("/Users", (req, res) => {
    res.json({ source: (req.params as Record<string, string>).source });
  });
  // The limiter's 429 is rendered by the router's error handler, as on the SCIM routes.
  router.use(scimErrorHandler(createLogger("silent")));
  app.use("/scim/v2/:source", router);
  return { app, registry };
}

async function waitReady(client: Redis): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (client.status !== "ready") {
    if (Date.now() > deadline) throw new Error("redis not ready");
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe("intakeRateLimiter", () => {
  it("lets a burst through, then answers SCIM 429 with Retry-After", async () => {
    await waitReady(redis);
    const { app, registry } = appWith(redis, { okta: 0.5 }, 3);
    for (let i = 0; i < 3; i++) await request(app).get("/scim/v2/okta/Users").expect(200);
    const res = await request(app).get("/scim/v2/okta/Users").expect(429);
    expect(res.headers["content-type"]).toContain("application/scim+json");
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers["retry-after"])).toBeLessThanOrEqual(2);
    const body = JSON.parse(res.text);
    expect(body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    expect(body.status).toBe("429");
    expect(body.detail).toMatch(/okta/);
    expect(await registry.getSingleMetricAsString("intake_rate_limited_total")).toMatch(
      /intake_rate_limited_total\{source="okta"\} 1/,
    );
    expect(await redis.pttl(`${prefix}:ratelimit:okta`)).toBeGreaterThan(0);
  });

  it("keeps each source's bucket separate, so one runaway source does not starve another", async () => {
    const { app } = appWith(redis, { noisy: 1, quiet: 1 }, 2);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await request(app).get("/scim/v2/noisy/Users")).status);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(3);
    await request(app).get("/scim/v2/quiet/Users").expect(200);
    await request(app).get("/scim/v2/quiet/Users").expect(200);
  });

  it("refills at the configured rate", async () => {
    // One token a second: the second request, sent at once, finds the bucket empty even on a
    // loaded machine; the token is back within the next second or so.
    const { app } = appWith(redis, { refill: 1 }, 1);
    await request(app).get("/scim/v2/refill/Users").expect(200);
    const emptiedAt = Date.now();
    await request(app).get("/scim/v2/refill/Users").expect(429);
    const deadline = Date.now() + 3_000;
    let status = 429;
    while (status === 429 && Date.now() < deadline)
      status = (await request(app).get("/scim/v2/refill/Users")).status;
    expect(status).toBe(200);
    // and not before the rate allows
    expect(Date.now() - emptiedAt).toBeGreaterThanOrEqual(800);
  });

  it("one limiter serves two routers: shared buckets, each router's error handler renders the 429", async () => {
    const limiter = intakeRateLimiter({ redis, prefix, requestsPerSecond: () => 0.5, burst: 2 });
    const app = express();
    const scimRoutes = express.Router();
    scimRoutes.get("/scim/:source", limiter, (_req, res) => {
      res.json({ ok: true });
    });
    scimRoutes.use(scimErrorHandler(createLogger("silent")));
    const hookRoutes = express.Router();
    hookRoutes.post("/hooks/:source", limiter, (_req, res) => {
      res.json({ ok: true });
    });
    hookRoutes.use(((err, _req, res, _next) => {
      res.status(err.status).setHeader("Retry-After", String(err.retryAfter));
      res.json({ error: { code: err.code, message: err.message } });
    }) as express.ErrorRequestHandler);
    app.use(scimRoutes, hookRoutes);
    await request(app).get("/scim/shared").expect(200);
    await request(app).post("/hooks/shared").expect(200);
    const hooks = await request(app).post("/hooks/shared").expect(429);
    expect(hooks.headers["content-type"]).toMatch(/^application\/json/);
    expect(Number(hooks.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(hooks.body).toEqual({
      error: { code: "rate_limited", message: expect.stringMatching(/shared; retry after \d+ s/) },
    });
    const scim = await request(app).get("/scim/shared").expect(429);
    expect(scim.headers["content-type"]).toContain("application/scim+json");
  });

  it("lets an unknown source through (authentication decides)", async () => {
    const { app } = appWith(redis, {}, 1);
    for (let i = 0; i < 3; i++) await request(app).get("/scim/v2/stranger/Users").expect(200);
    expect(await redis.exists(`${prefix}:ratelimit:stranger`)).toBe(0);
  });

  it("lets requests through at once when Redis is unreachable", async () => {
    const down = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on("error", () => {});
    const { app } = appWith(down, { okta: 1 }, 1);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await request(app).get("/scim/v2/okta/Users").expect(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    down.disconnect();
  });
});
