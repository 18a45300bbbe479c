import express from "express";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHealthRouter } from "../../../routes/health.js";
import { intakeRateLimiter } from "../../../routes/middleware/intake-rate-limiter.js";
import { scimErrorHandler } from "../../../routes/scim/scim-errors.js";
import { createLogger } from "../../../src/observability/logger.js";
import { ThrowawayRedis, freePort } from "../../helpers/throwaway-redis.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

// A Redis of this file's own on a spare port, so it can be stalled, killed and restarted.
let spare: ThrowawayRedis;
let client: Redis;
let app: express.Express;

beforeAll(async () => {
  spare = new ThrowawayRedis(await freePort());
  await spare.start();
  // Like the bridge's store client: reconnects for ever, fails commands fast while offline.
  client = new Redis(spare.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: () => 50,
  });
  client.on("error", () => {});
  await waitFor(() => client.status === "ready");
  app = express();
  app.use(createHealthRouter({ redis: client, isReady: () => true, readyTimeoutMs: 300 }));
  const scim = express.Router({ mergeParams: true });
  scim.use(
    intakeRateLimiter({ redis: client, prefix: "{t}", requestsPerSecond: () => 1, burst: 1, timeoutMs: 200 }),
  );
  scim.get("/Users", (_req, res) => {
    res.json({ ok: true });
  });
  scim.use(scimErrorHandler(createLogger("silent")));
  app.use("/scim/v2/:source", scim);
});

afterAll(async () => {
  client?.disconnect();
  await spare?.dispose();
});

const readyStatus = async () => (await request(app).get("/readyz")).status;

describe("when Redis stalls or goes away", () => {
  /** Makes the spare Redis hang for `seconds`; resolves once a readiness check has seen it hang. */
  async function stall(seconds: number): Promise<{ done: Promise<unknown>; blocker: Redis }> {
    const blocker = new Redis(spare.url);
    await waitFor(() => blocker.status === "ready");
    const done = blocker.call("DEBUG", "SLEEP", String(seconds));
    await waitFor(async () => (await readyStatus()) === 503, { timeoutMs: 1_000 });
    return { done, blocker };
  }

  it("/readyz answers 503 within its timeout while Redis hangs, and 200 once it answers again", async () => {
    expect(await readyStatus()).toBe(200);
    const { done, blocker } = await stall(2);
    try {
      const started = Date.now();
      const res = await request(app).get("/readyz");
      expect(res.status).toBe(503);
      expect(res.body.failing).toEqual(["redis"]);
      expect(res.body.checks.redis.reason).toMatch(/300 ms/);
      expect(Date.now() - started).toBeLessThan(800);
    } finally {
      await done;
      blocker.disconnect();
    }
    await waitFor(async () => (await readyStatus()) === 200);
  });

  it("the intake limiter lets requests through at once while Redis hangs", async () => {
    const { done, blocker } = await stall(2);
    try {
      const started = Date.now();
      for (let i = 0; i < 3; i++) await request(app).get("/scim/v2/okta/Users").expect(200);
      expect(Date.now() - started).toBeLessThan(1_200);
    } finally {
      await done;
      blocker.disconnect();
    }
  });

  it("/readyz answers 503 at once when Redis is down, /healthz stays 200, and readiness returns with Redis", async () => {
    await waitFor(async () => (await readyStatus()) === 200);
    await spare.stop();
    await waitFor(async () => (await readyStatus()) === 503, { timeoutMs: 3_000 });
    await request(app).get("/healthz").expect(200);
    const res = await request(app).get("/readyz").expect(503);
    expect(res.body.failing).toEqual(["redis"]);
    // The limiter steps aside while Redis is down: the request is not refused or held.
    await request(app).get("/scim/v2/okta/Users").expect(200);
    await spare.start();
    await waitFor(async () => (await readyStatus()) === 200, { timeoutMs: 10_000 });
  });
});
