import express from "express";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { createHealthRouter, type HealthRouterOptions } from "../../../routes/health.js";

const redis = new Redis("redis://127.0.0.1:6379");
afterAll(async () => {
  await redis.quit();
});

function appWith(options: HealthRouterOptions) {
  const app = express();
  app.use(createHealthRouter(options));
  return app;
}

describe("health router", () => {
  it("/healthz answers 200 without touching Redis", async () => {
    const ping = () => Promise.reject(new Error("must not be called"));
    const app = appWith({ redis: { ping }, isReady: () => false });
    const res = await request(app).get("/healthz").expect(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it("/readyz answers 200 when Redis answers and workers run", async () => {
    const app = appWith({ redis, isReady: () => true, workersRunning: () => true });
    const res = await request(app).get("/readyz").expect(200);
    expect(res.body.status).toBe("ok");
    expect(res.body.checks).toEqual({ shutdown: { ok: true }, workers: { ok: true }, redis: { ok: true } });
  });

  it("/readyz answers 503 naming shutdown once shutdown has begun", async () => {
    let ready = true;
    const app = appWith({ redis, isReady: () => ready });
    await request(app).get("/readyz").expect(200);
    ready = false;
    const res = await request(app).get("/readyz").expect(503);
    expect(res.body.failing).toEqual(["shutdown"]);
  });

  it("/readyz answers 503 naming workers when this process's workers are not running", async () => {
    const app = appWith({ redis, isReady: () => true, workersRunning: () => false });
    const res = await request(app).get("/readyz").expect(503);
    expect(res.body.failing).toEqual(["workers"]);
  });

  it("/readyz answers 503 naming redis within the timeout when Redis does not answer", async () => {
    // A real client whose server is unreachable: commands wait in the offline queue.
    const down = new Redis("redis://127.0.0.1:1", { retryStrategy: () => 1_000 });
    down.on("error", () => {});
    try {
      const app = appWith({ redis: down, isReady: () => true, readyTimeoutMs: 200 });
      const started = Date.now();
      const res = await request(app).get("/readyz").expect(503);
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(res.body.failing).toEqual(["redis"]);
      expect(res.body.checks.redis.reason).toMatch(/200 ms/);
    } finally {
      down.disconnect();
    }
  });
});
