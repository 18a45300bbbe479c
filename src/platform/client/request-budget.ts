/**
 * The one request budget every platform call of every worker in every process draws from.
 * `RedisRequestBudget` keeps it in Redis: a GCRA rate limit (one request per 1/rps seconds, with a
 * small burst) and a shared pause that a 429 (or a 503 with Retry-After) sets for everyone.
 */
import type { Redis } from "ioredis";

export interface RequestBudget {
  /**
   * Resolves when one request may go (waits out the shared pause and the rate limit). With
   * `maxWaitMs`, a pause the platform asked for that is longer than that is not waited out: it
   * rejects at once with PauseTooLong (a turn of the rate is waited, however slow the rate).
   */
  acquire(options?: { maxWaitMs?: number }): Promise<void>;
  /** Nobody sends before `epochMs` (ms since the epoch). Only ever moves the pause later. */
  pauseUntil(epochMs: number): Promise<void>;
  /** The epoch ms until which requests are paused; 0 or a past time when not paused. */
  pausedUntil(): Promise<number>;
}

/** What acquire rejects with when its wait is longer than the caller sits out (`waitMs` left). */
export class PauseTooLong extends Error {
  constructor(readonly waitMs: number) {
    super(`the platform's request budget is paused for ${Math.ceil(waitMs / 1000)} s more`);
    this.name = "PauseTooLong";
  }
}

/** No rate limit and no pause: for tests that want none. `pausedUntil` reports the last pause set. */
export class NoopRequestBudget implements RequestBudget {
  #pausedUntil = 0;

  async acquire(): Promise<void> {}

  async pauseUntil(epochMs: number): Promise<void> {
    this.#pausedUntil = Math.max(this.#pausedUntil, epochMs);
  }

  async pausedUntil(): Promise<number> {
    return this.#pausedUntil;
  }
}

/**
 * GCRA (generic cell rate algorithm) over Redis time, so every process shares one clock. The
 * clock has microsecond resolution (fractional ms): at a high rate many requests may go within one
 * millisecond, instead of one per millisecond with every other caller sleeping and asking again.
 * KEYS[1] = theoretical arrival time (ms), KEYS[2] = pause-until (epoch ms).
 * ARGV[1] = emission interval (ms per request), ARGV[2] = burst tolerance (ms).
 * Returns 0 when the request may go, else the ms to wait before asking again.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local pause = tonumber(redis.call('GET', KEYS[2]) or '0')
if pause > now then return math.ceil(pause - now) end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local allowAt = tat - tolerance
if allowAt > now then return math.max(1, math.ceil(allowAt - now)) end
local newTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.3f', newTat), 'PX', math.ceil(newTat - now + tolerance) + 1000)
return 0
`;

/** Moves the pause later, never earlier. KEYS[1] = pause-until; ARGV[1] = epoch ms. */
const PAUSE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted <= current or wanted <= now then return current end
redis.call('SET', KEYS[1], string.format('%d', wanted), 'PX', math.ceil(wanted - now) + 1000)
return wanted
`;

export interface RedisRequestBudgetOptions {
  redis: Redis;
  /** Key prefix (config `redis.prefix`); keys are `${prefix}:platform:budget` and `:pause-until`. */
  prefix: string;
  /** Config `platform.requestsPerSecond`. */
  requestsPerSecond: number;
  /** Requests that may go back to back after a quiet spell (default 1: none beyond the rate). */
  burst?: number;
  /** Longest single wait before asking Redis again, in ms (default 1000). */
  maxPollMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export class RedisRequestBudget implements RequestBudget {
  readonly budgetKey: string;
  readonly pauseKey: string;
  readonly #redis: Redis;
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxPollMs: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: RedisRequestBudgetOptions) {
    if (!(options.requestsPerSecond > 0)) throw new Error("requestsPerSecond must be positive");
    const burst = options.burst ?? 1;
    if (!Number.isInteger(burst) || burst < 1) throw new Error("burst must be an integer >= 1");
    this.#redis = options.redis;
    this.budgetKey = `${options.prefix}:platform:budget`;
    this.pauseKey = `${options.prefix}:platform:pause-until`;
    this.#intervalMs = 1000 / options.requestsPerSecond;
    this.#toleranceMs = this.#intervalMs * (burst - 1);
    this.#maxPollMs = options.maxPollMs ?? 1000;
    this.#sleep = options.sleep ?? defaultSleep;
    // EVALSHA through ioredis' script cache: the script's text is not sent with every call.
    if (typeof (this.#redis as Partial<BudgetCommands>).platformBudgetAcquire !== "function") {
      this.#redis.defineCommand("platformBudgetAcquire", { numberOfKeys: 2, lua: ACQUIRE_SCRIPT });
      this.#redis.defineCommand("platformBudgetPause", { numberOfKeys: 1, lua: PAUSE_SCRIPT });
    }
  }

  async acquire(options: { maxWaitMs?: number } = {}): Promise<void> {
    for (;;) {
      const waitMs = Number(
        await (this.#redis as unknown as BudgetCommands).platformBudgetAcquire(
          this.budgetKey,
          this.pauseKey,
          this.#intervalMs.toFixed(4),
          this.#toleranceMs.toFixed(4),
        ),
      );
      if (waitMs <= 0) return;
      // A turn of the rate is never more than one interval away (GCRA): a longer wait is a pause
      // the platform asked for. A turn is waited whatever maxWaitMs (a rate under one a minute).
      if (
        options.maxWaitMs !== undefined &&
        waitMs > Math.max(options.maxWaitMs, Math.ceil(this.#intervalMs))
      )
        throw new PauseTooLong(waitMs);
      await this.#sleep(Math.min(waitMs, this.#maxPollMs));
    }
  }

  async pauseUntil(epochMs: number): Promise<void> {
    await (this.#redis as unknown as BudgetCommands).platformBudgetPause(
      this.pauseKey,
      String(Math.ceil(epochMs)),
    );
  }

  async pausedUntil(): Promise<number> {
    const value = await this.#redis.get(this.pauseKey);
    return value === null ? 0 : Number(value);
  }
}

/** The scripts as ioredis commands (defineCommand), run by EVALSHA. */
interface BudgetCommands {
  platformBudgetAcquire(
    budgetKey: string,
    pauseKey: string,
    intervalMs: string,
    toleranceMs: string,
  ): Promise<number>;
  platformBudgetPause(pauseKey: string, epochMs: string): Promise<number>;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
