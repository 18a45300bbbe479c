import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { PauseTooLong, RedisRequestBudget } from "../../../src/platform/client/request-budget.js";
import { watchWrites } from "../../../src/platform/client/unanswered-writes.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { type FakePlatform, scimUser, sendJson, startFakePlatform } from "./fake-platform.js";

const prefix = `test-${randomUUID()}`;
let redisA: Redis;
let redisB: Redis;
let platform: FakePlatform | undefined;
const clients: HttpPlatformClient[] = [];

beforeAll(() => {
  redisA = new Redis("redis://127.0.0.1:6379");
  redisB = new Redis("redis://127.0.0.1:6379");
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await platform?.close();
  platform = undefined;
  const keys = await redisA.keys(`${prefix}:*`);
  if (keys.length > 0) await redisA.del(...keys);
});

afterAll(async () => {
  await redisA.quit();
  await redisB.quit();
});

function clientWith(redis: Redis, url: string, requestsPerSecond = 20): HttpPlatformClient {
  const client = new HttpPlatformClient({
    baseUrl: url,
    token: "t",
    allowInsecureHttp: true,
    timeoutMs: 2000,
    maxRetries: 2,
    backoff: { baseMs: 10, capMs: 50 },
    budget: new RedisRequestBudget({ redis, prefix, requestsPerSecond }),
  });
  clients.push(client);
  return client;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The most requests seen in any window of `windowMs`. */
function peakInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}

describe("RedisRequestBudget", () => {
  it("keeps two clients with their own connections within one 20 rps budget", async () => {
    platform = await startFakePlatform((_req, res) => sendJson(res, 200, scimUser("u1", "ada")));
    const a = clientWith(redisA, platform.url);
    const b = clientWith(redisB, platform.url);
    const calls = 30;
    const started = Date.now();
    await Promise.all([
      ...Array.from({ length: calls }, () => a.getUser("u1")),
      ...Array.from({ length: calls }, () => b.getUser("u1")),
    ]);
    const elapsed = Date.now() - started;
    const times = platform.requests.map((r) => r.at);
    expect(times).toHaveLength(2 * calls);
    // 60 requests at 20 rps take at least ~2.95 s; without the shared budget they take milliseconds.
    expect(elapsed).toBeGreaterThanOrEqual(2800);
    // No one-second window holds more than the rate (+ slack for timer jitter on a busy machine;
    // two unshared budgets would show ~40).
    expect(peakInWindow(times, 1000)).toBeLessThanOrEqual(24);
  });

  it("a 429 with Retry-After pauses every client that shares the budget", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index === 0)
        sendJson(res, 429, { error: { code: "RATE_LIMITED", message: "wait" } }, { "retry-after": "1" });
      else sendJson(res, 200, scimUser("u1", "ada"));
    });
    const a = clientWith(redisA, platform.url, 100);
    const b = clientWith(redisB, platform.url, 100);
    const budgetB = new RedisRequestBudget({ redis: redisB, prefix, requestsPerSecond: 100 });
    const first = a.getUser("u1");
    // Wait until the 429 has been answered and its pause stored in Redis.
    const deadline = Date.now() + 5000;
    while ((await budgetB.pausedUntil()) === 0) {
      if (Date.now() > deadline) throw new Error("pause never stored");
      await new Promise((r) => setTimeout(r, 5));
    }
    await b.getUser("u1");
    await first;
    const rateLimitedAt = platform.requests[0]!.at;
    expect(platform.requests).toHaveLength(3);
    for (const later of platform.requests.slice(1))
      expect(later.at - rateLimitedAt).toBeGreaterThanOrEqual(1000);
  });

  it("only moves the pause later", async () => {
    const budget = new RedisRequestBudget({ redis: redisA, prefix, requestsPerSecond: 10 });
    const later = Date.now() + 5000;
    await budget.pauseUntil(later);
    await budget.pauseUntil(Date.now() + 1000);
    expect(await budget.pausedUntil()).toBe(later);
    await budget.pauseUntil(later + 1000);
    expect(await budget.pausedUntil()).toBe(later + 1000);
    expect(await redisA.pttl(budget.pauseKey)).toBeGreaterThan(5000);
  });

  it("a queue job's call fails at once on a pause longer than the client waits; other calls wait it out", async () => {
    let calls = 0;
    platform = await startFakePlatform((_req, res) => {
      calls += 1;
      sendJson(res, 200, scimUser("u1", "ada"));
    });
    const client = clientWith(redisA, platform.url);
    const budget = new RedisRequestBudget({ redis: redisA, prefix, requestsPerSecond: 20 });
    // Another call's answer asked everyone to pause for 90 s (over the client's 60 s).
    await budget.pauseUntil(Date.now() + 90_000);
    const started = Date.now();
    const err = await watchWrites({ putBackOnLongPause: true }, () => client.getUser("u1")).catch((e) => e);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({
      failure: "rate_limited",
      transient: true,
      operation: "getUser",
      heldBack: true,
    });
    expect(err.retryAfterMs).toBeGreaterThan(85_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(90_000);
    expect(calls).toBe(0);
    // A short pause is waited out in the call, job or not.
    await redisA.del(budget.pauseKey);
    await budget.pauseUntil(Date.now() + 300);
    await expect(
      watchWrites({ putBackOnLongPause: true }, () => client.getUser("u1")),
    ).resolves.toMatchObject({
      id: "u1",
    });
    // Outside a queue job (a reconciliation's listing, say) the long pause is waited out as before.
    await budget.pauseUntil(Date.now() + 90_000);
    await expect(
      budget.acquire({ maxWaitMs: 60_000 }).then(
        () => "went",
        (e) => e,
      ),
    ).resolves.toBeInstanceOf(PauseTooLong);
    const waiting = client.getUser("u1");
    const early = await Promise.race([waiting.then(() => "answered"), sleep(1_500).then(() => "waiting")]);
    expect(early).toBe("waiting");
    await redisA.del(budget.pauseKey);
    await expect(waiting).resolves.toMatchObject({ id: "u1" });
  });

  it("a pause one of the job's own calls was answered with is not another's: the job's next call is not heldBack", async () => {
    let calls = 0;
    platform = await startFakePlatform((_req, res) => {
      calls += 1;
      res.setHeader("retry-after", "90");
      sendJson(res, 429, { detail: "slow down" });
    });
    const client = clientWith(redisA, platform.url);
    const own = await watchWrites({ putBackOnLongPause: true }, async () => {
      // A best-effort call of the job meets the platform's 429 (a pause of 90 s, over the client's
      // 60 s) and the job swallows it; its next call finds the pause that answer set.
      const first = await client.getUser("u1").catch((e) => e);
      expect(first).toMatchObject({ failure: "rate_limited", heldBack: false, unsent: false });
      return client.getUser("u2").catch((e) => e);
    });
    expect(calls).toBe(1);
    expect(own).toBeInstanceOf(PlatformError);
    expect(own).toMatchObject({
      failure: "rate_limited",
      operation: "getUser",
      heldBack: false,
      unsent: true,
    });
    expect(own.retryAfterMs).toBeGreaterThan(85_000);
    // Another job's call, which met no 429 itself, is held back by that pause.
    const other = await watchWrites({ putBackOnLongPause: true }, () => client.getUser("u3")).catch((e) => e);
    expect(other).toMatchObject({ failure: "rate_limited", heldBack: true, unsent: true });
    expect(calls).toBe(1);
  });

  it("waits out its turn of the rate, however slow the rate, where a long pause would put a job back", async () => {
    // 0.5 requests a second: the second request's turn is 2 s away, longer than the 0.5 s the
    // caller sits out of a pause. A turn of the rate is no pause the platform asked for: waited.
    const budget = new RedisRequestBudget({ redis: redisA, prefix, requestsPerSecond: 0.5 });
    await budget.acquire({ maxWaitMs: 500 });
    const started = Date.now();
    await expect(budget.acquire({ maxWaitMs: 500 })).resolves.toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    // A pause longer than both is still not waited out.
    await budget.pauseUntil(Date.now() + 10_000);
    await expect(budget.acquire({ maxWaitMs: 500 })).rejects.toBeInstanceOf(PauseTooLong);
  });
});
