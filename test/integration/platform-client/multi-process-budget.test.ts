/**
 * Two separate Node processes share one Redis request budget against one emulator: the combined
 * rate at the emulator stays within it, and a 429 answered to one pauses both.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPlatformEmulator,
  type PlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";

const run = promisify(execFile);
const TOKEN = "multi-process-token";
const prefix = `test-${randomUUID()}`;
const fixture = fileURLToPath(new URL("./fixtures/budget-worker.ts", import.meta.url));
const tsx = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));
let emulator: PlatformEmulator;
let url: string;
let redis: Redis;

beforeAll(async () => {
  redis = new Redis("redis://127.0.0.1:6379");
  emulator = createPlatformEmulator({ token: TOKEN });
  url = await emulator.start({ port: 0 });
  // Warm the emulator (it compiles the contract on its first call) so its answers are prompt.
  const warm = await fetch(`${url}/api/v1/user-attributes/`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(warm.status).toBe(200);
  emulator.reset();
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await emulator.close();
});

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

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("one request budget across processes", () => {
  it("holds two processes to 20 rps together, and a 429 pauses both", async () => {
    const calls = 30;
    const workerArgs = JSON.stringify({
      baseUrl: url,
      token: TOKEN,
      prefix,
      requestsPerSecond: 20,
      calls,
      workers: 2,
    });
    const workers = [run(tsx, [fixture, workerArgs]), run(tsx, [fixture, workerArgs])];

    // Once both are under way, the platform answers one call with 429 Retry-After: 1.
    await waitFor(() => emulator.counters().total >= 15, 15_000);
    emulator.addFault({ type: "error", status: 429, retryAfterSeconds: 1, count: 1 });

    const outputs = await Promise.all(workers);
    for (const { stdout } of outputs) expect(JSON.parse(stdout)).toEqual({ ok: calls, failures: [] });

    const log = emulator.requests().filter((r) => r.operation === "listUserAttributes");
    expect(log).toHaveLength(2 * calls + 1);
    expect(emulator.violations()).toEqual([]);
    // The log stamps a request when answered; its arrival is that minus its duration.
    const times = log.map((r) => Date.parse(r.time) - r.durationMs);
    // At most the rate in any second, with a little slack for timer jitter on a busy CI machine;
    // two unshared 20 rps budgets would show ~40.
    expect(peakInWindow(times, 1000)).toBeLessThanOrEqual(24);

    // Nobody, in either process, called during the second after the 429 (a request sent before
    // the pause reached Redis may land just after it).
    const limited = log.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    const limitedAt = Date.parse(limited!.time);
    const during = times.filter((t) => t > limitedAt + 200 && t < limitedAt + 1000);
    expect(during).toEqual([]);
    expect(times.filter((t) => t >= limitedAt + 1000).length).toBeGreaterThan(5);
  });
});
