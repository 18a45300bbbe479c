/**
 * A far-future Retry-After against the platform emulator: the client (and the shared Redis budget
 * every worker draws from) waits only platform.retryAfterCapMs, logs one warning, then asks the
 * platform again, instead of stopping all provisioning for as long as the header asks.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { RedisRequestBudget } from "../../../src/platform/client/request-budget.js";
import {
  createPlatformEmulator,
  type PlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import type { PlatformError } from "../../../src/platform/platform-error.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const TOKEN = "retry-after-cap-token";
const CAP_MS = 1_000;
const DAY_SECONDS = 86_400;
const prefix = testPrefix("retry-after-cap");
let emulator: PlatformEmulator;
let url: string;
let redis: Redis;
const clients: HttpPlatformClient[] = [];

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL);
  emulator = createPlatformEmulator({ token: TOKEN });
  url = await emulator.start({ port: 0 });
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  emulator.reset();
  await deleteKeys(redis, prefix);
});

afterAll(async () => {
  await redis.quit();
  await emulator.close();
});

function setUp(maxRetries = 2) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const budget = new RedisRequestBudget({ redis, prefix, requestsPerSecond: 50 });
  const client = new HttpPlatformClient({
    baseUrl: url,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 5_000,
    maxRetries,
    backoff: { baseMs: 10, capMs: 50 },
    retryAfterCapMs: CAP_MS,
    budget,
    logger: pino({ level: "warn" }, sink),
  });
  clients.push(client);
  return { client, budget, lines };
}

function capWarnings(lines: Array<Record<string, unknown>>) {
  return lines.filter((l) => l.level === 40 && String(l.msg).includes("retryAfterCapMs"));
}

describe("platform.retryAfterCapMs", () => {
  it("a 429 with Retry-After: 86400 waits only the cap, pauses the shared budget only the cap, then succeeds", async () => {
    const { client, budget, lines } = setUp();
    emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: DAY_SECONDS,
      count: 1,
      match: { operation: "listUserAttributes" },
    });

    const started = Date.now();
    await expect(client.listUserAttributes()).resolves.toEqual([]);
    const elapsed = Date.now() - started;

    // About the cap: no earlier than it, and nowhere near a day (slack for a busy 2-core machine).
    expect(elapsed).toBeGreaterThanOrEqual(CAP_MS - 50);
    expect(elapsed).toBeLessThan(CAP_MS + 4_000);
    const log = emulator.requests().filter((r) => r.operation === "listUserAttributes");
    expect(log.map((r) => [r.status, r.retryAfter])).toEqual([
      [429, String(DAY_SECONDS)],
      [200, undefined],
    ]);
    // The pause every worker of every process honours ends a cap after the 429, not a day later.
    const pausedUntil = await budget.pausedUntil();
    const limitedAt = Date.parse(log[0]!.time);
    expect(pausedUntil).toBeGreaterThan(limitedAt);
    expect(pausedUntil).toBeLessThanOrEqual(limitedAt + CAP_MS + 1_000);

    const warnings = capWarnings(lines);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      operation: "listUserAttributes",
      status: 429,
      retryAfterSeconds: DAY_SECONDS,
      capSeconds: CAP_MS / 1000,
    });
    expect(JSON.stringify(warnings[0])).not.toContain(TOKEN);
    expect(emulator.violations()).toEqual([]);
  });

  it("caps a Retry-After HTTP-date a year ahead the same way", async () => {
    const { client, budget, lines } = setUp();
    emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 365 * DAY_SECONDS,
      retryAfterDate: true,
      count: 1,
      match: { operation: "listUserAttributes" },
    });

    const started = Date.now();
    await expect(client.listUserAttributes()).resolves.toEqual([]);
    expect(Date.now() - started).toBeLessThan(CAP_MS + 4_000);
    const limited = emulator.requests().find((r) => r.status === 429);
    expect(limited?.retryAfter).toMatch(/ GMT$/);
    expect(await budget.pausedUntil()).toBeLessThanOrEqual(Date.parse(limited!.time) + CAP_MS + 1_000);
    expect(capWarnings(lines)).toHaveLength(1);
  });

  it("hands the capped pause, not the asked one, to the caller that gives up (the job's delay)", async () => {
    const { client } = setUp(0);
    emulator.addFault({ type: "error", status: 429, retryAfterSeconds: DAY_SECONDS, count: 1 });

    const err = (await client.listUserAttributes().catch((e: unknown) => e)) as PlatformError;
    expect(err).toMatchObject({ failure: "rate_limited", transient: true, retryAfterMs: CAP_MS });
  });
});
