import { describe, expect, it } from "vitest";
import {
  DEFAULT_RACE_RETRY,
  mayRetry,
  RACED,
  type RetryClock,
  raceBackoffMs,
  retryWhileRaced,
} from "../../../src/directory/write-retry.js";

describe("raceBackoffMs (full jitter)", () => {
  it("spans 0..2^races ms, inclusive", () => {
    expect(raceBackoffMs(1, 0, 50)).toBe(0);
    expect(raceBackoffMs(1, 0.999, 50)).toBe(2);
    expect(raceBackoffMs(3, 0.5, 50)).toBe(4);
    expect(raceBackoffMs(3, 0.999, 50)).toBe(8);
    expect(raceBackoffMs(5, 0.999, 50)).toBe(32);
  });

  it("is capped at maxDelayMs, however many races", () => {
    expect(raceBackoffMs(6, 0.999, 50)).toBe(50);
    expect(raceBackoffMs(1000, 0.999, 50)).toBe(50);
    expect(raceBackoffMs(1000, 0.5, 50)).toBe(25);
  });

  it("stays in range for out-of-range inputs", () => {
    expect(raceBackoffMs(0, 0.999, 50)).toBe(1);
    expect(raceBackoffMs(-3, 0.999, 50)).toBe(1);
    expect(raceBackoffMs(4, 1, 50)).toBe(16);
    expect(raceBackoffMs(4, -1, 50)).toBe(0);
  });
});

describe("mayRetry", () => {
  const policy = { maxAttempts: 3, budgetMs: 100, maxDelayMs: 50 };
  it("allows another attempt within the attempt and time budgets", () => {
    expect(mayRetry(policy, 1, 0, 10)).toBe(true);
    expect(mayRetry(policy, 2, 90, 10)).toBe(true);
  });
  it("refuses once the attempts are spent", () => {
    expect(mayRetry(policy, 3, 0, 0)).toBe(false);
  });
  it("refuses an attempt that would start after the time budget", () => {
    expect(mayRetry(policy, 1, 95, 10)).toBe(false);
    expect(mayRetry(policy, 1, 101, 0)).toBe(false);
  });
  it("defaults to 30 attempts within 2 s, pauses of at most 50 ms", () => {
    expect(DEFAULT_RACE_RETRY).toEqual({ maxAttempts: 30, budgetMs: 2000, maxDelayMs: 50 });
  });
});

/** A fake clock: sleeping advances time; random returns `r`. */
function fakeClock(r = 0.999): RetryClock & { slept: number[]; t: number } {
  const clock = {
    t: 0,
    slept: [] as number[],
    now: () => clock.t,
    random: () => r,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

describe("retryWhileRaced", () => {
  const exhausted = (attempts: number, elapsed: number) => new Error(`gave up ${attempts} ${elapsed}`);

  it("returns the first result that did not race, pausing with a growing backoff", async () => {
    const clock = fakeClock();
    let calls = 0;
    const out = await retryWhileRaced(
      DEFAULT_RACE_RETRY,
      async () => (++calls < 4 ? RACED : "done"),
      exhausted,
      clock,
    );
    expect(out).toBe("done");
    expect(calls).toBe(4);
    expect(clock.slept).toEqual([2, 4, 8]);
  });

  it("gives up after maxAttempts attempts", async () => {
    const clock = fakeClock(0);
    let calls = 0;
    const policy = { maxAttempts: 5, budgetMs: 10_000, maxDelayMs: 50 };
    const err = await retryWhileRaced(
      policy,
      async () => {
        calls += 1;
        return RACED;
      },
      exhausted,
      clock,
    ).catch((e: Error) => e);
    expect((err as Error).message).toBe("gave up 5 0");
    expect(calls).toBe(5);
  });

  it("gives up when the next attempt would start after the time budget", async () => {
    const clock = fakeClock();
    let calls = 0;
    const policy = { maxAttempts: 100, budgetMs: 100, maxDelayMs: 50 };
    const err = await retryWhileRaced(
      policy,
      async () => {
        calls += 1;
        return RACED;
      },
      exhausted,
      clock,
    ).catch((e: Error) => e);
    // Pauses 2 + 4 + 8 + 16 + 32 = 62 ms; the next (50) would end at 112 ms, past the budget.
    expect(clock.slept).toEqual([2, 4, 8, 16, 32]);
    expect(calls).toBe(6);
    expect((err as Error).message).toBe("gave up 6 62");
  });

  it("lets an error of an attempt through at once, without retrying", async () => {
    const clock = fakeClock();
    let calls = 0;
    const err = await retryWhileRaced(
      DEFAULT_RACE_RETRY,
      async () => {
        calls += 1;
        throw new Error("412");
      },
      exhausted,
      clock,
    ).catch((e: Error) => e);
    expect((err as Error).message).toBe("412");
    expect(calls).toBe(1);
    expect(clock.slept).toEqual([]);
  });
});
