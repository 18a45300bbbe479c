import { setTimeout as sleep } from "node:timers/promises";

/**
 * The retry of the directory's optimistic read-modify-writes (redis-directory-store.ts, updateUser
 * and updateGroup). An attempt reads the entity, computes the next state and writes it only if the
 * generation is still the one read; when another writer got there first (RACED), the attempt runs
 * again on the latest state after a random pause (full jitter: a uniform delay in 0..min(cap, 2^n)
 * ms after the n-th race), so writers that collided spread out instead of colliding again. It
 * gives up (the caller's error, a 503) only after `maxAttempts` attempts or once `budgetMs` has
 * passed since the first: contention that never lets up, not a burst of parallel writes.
 */

/** What an attempt returns when its write lost the generation race (nothing was written). */
export const RACED: unique symbol = Symbol("raced");
export type Raced = typeof RACED;

export interface RaceRetryPolicy {
  /** Attempts in all (the first included) before giving up. */
  maxAttempts: number;
  /** No attempt starts later than this many ms after the first one. */
  budgetMs: number;
  /** Upper bound of one pause between attempts, in ms. */
  maxDelayMs: number;
}

export const DEFAULT_RACE_RETRY: Readonly<RaceRetryPolicy> = Object.freeze({
  maxAttempts: 30,
  budgetMs: 2000,
  maxDelayMs: 50,
});

/**
 * The pause (whole ms) before the next attempt after the `races`-th lost race (1 after the first):
 * full jitter, `random` (in [0, 1)) scaled to 0..min(maxDelayMs, 2^races) inclusive.
 */
export function raceBackoffMs(races: number, random: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, 2 ** Math.max(0, Math.min(races, 30)));
  const jitter = Math.min(Math.max(random, 0), 1 - Number.EPSILON);
  return Math.floor(jitter * (ceiling + 1));
}

/**
 * Whether another attempt may start after `attempts` attempts, `elapsedMs` after the first, with
 * a pause of `delayMs` before it.
 */
export function mayRetry(
  policy: RaceRetryPolicy,
  attempts: number,
  elapsedMs: number,
  delayMs: number,
): boolean {
  return attempts < policy.maxAttempts && elapsedMs + delayMs <= policy.budgetMs;
}

export interface RetryClock {
  now(): number;
  random(): number;
  sleep(ms: number): Promise<unknown>;
}

const systemClock: RetryClock = { now: Date.now, random: Math.random, sleep: (ms) => sleep(ms) };

/**
 * Runs `attempt` until it returns something other than RACED, pausing between attempts
 * (raceBackoffMs); throws `exhausted(attempts)` when the policy allows no further attempt. Errors
 * thrown by `attempt` end the loop as they are (a write with If-Match throws 412 on a race itself).
 */
export async function retryWhileRaced<T>(
  policy: RaceRetryPolicy,
  attempt: () => Promise<T | Raced>,
  exhausted: (attempts: number, elapsedMs: number) => Error,
  clock: RetryClock = systemClock,
): Promise<T> {
  const started = clock.now();
  for (let attempts = 1; ; attempts += 1) {
    const result = await attempt();
    if (result !== RACED) return result;
    const delay = raceBackoffMs(attempts, clock.random(), policy.maxDelayMs);
    const elapsed = clock.now() - started;
    if (!mayRetry(policy, attempts, elapsed, delay)) throw exhausted(attempts, elapsed);
    if (delay > 0) await clock.sleep(delay);
  }
}
