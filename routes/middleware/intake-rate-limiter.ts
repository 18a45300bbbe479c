import { createHash } from "node:crypto";
import type { NextFunction, Request, RequestHandler } from "express";
import type { Registry } from "prom-client";
import { TooManyRequestsError } from "../../src/errors.js";
import type { Logger } from "../../src/observability/logger.js";
import { bridgeMetrics } from "../../src/observability/bridge-metrics.js";
import { TokenLease } from "./token-lease.js";

/**
 * Token bucket per source, kept in Redis so that every api process shares it. Redis's own clock
 * (TIME) is used, so processes with skewed clocks agree. ARGV: rate, burst, and optionally how
 * many tokens the caller wants (default 1). Returns {allowed (1|0), retryAfterMs, granted}: when
 * at least one token is there, up to `want` whole tokens are taken. The bucket starts full
 * (`burst` tokens) and refills at `rate` tokens a second.
 */
export const TOKEN_BUCKET_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000) end
local want = math.max(1, math.floor(tonumber(ARGV[3]) or 1))
local allowed = 0
local retry = 0
local granted = 0
if tokens >= 1 then
  granted = math.min(want, math.floor(tokens))
  tokens = tokens - granted
  allowed = 1
else
  retry = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(math.max(now, ts)))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, retry, granted}
`;

const TOKEN_BUCKET_SHA = createHash("sha1").update(TOKEN_BUCKET_SCRIPT).digest("hex");

/** The part of an ioredis client (Redis or Cluster) the limiter uses. */
export interface ScriptingRedis {
  readonly status: string;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/** Runs the bucket script by its hash, loading it with EVAL when Redis does not know it yet. */
async function takeTokens(
  redis: ScriptingRedis,
  key: string,
  rate: number,
  burst: number,
  want: number,
): Promise<unknown> {
  try {
    return await redis.evalsha(TOKEN_BUCKET_SHA, 1, key, rate, burst, want);
  } catch (err) {
    if (!String((err as Error).message).startsWith("NOSCRIPT")) throw err;
    return redis.eval(TOKEN_BUCKET_SCRIPT, 1, key, rate, burst, want);
  }
}

export interface IntakeRateLimiterOptions {
  redis: ScriptingRedis;
  /** Key prefix, e.g. config.redis.prefix ("{scim-bridge}"): the bucket is `<prefix>:ratelimit:<source>`. */
  prefix: string;
  /** Sustained rate of a source; undefined for an unknown source (the request passes; auth refuses it). */
  requestsPerSecond: (source: string) => number | undefined;
  /** Bucket size: a number, or per source (default: twice the source's rate). */
  burst?: number | ((source: string) => number);
  /** Where the source id comes from (default: the `:source` route parameter). */
  sourceOf?: (req: Request) => string | undefined;
  /** How long to wait for Redis before letting the request through (default 250 ms). */
  timeoutMs?: number;
  /**
   * How long tokens taken ahead of use stay valid in this process (default 20 ms; 0 = one Redis
   * call per request). A lease holds at most a leaseMs share of the source's rate, so a process is
   * never ahead of the shared bucket by more than that.
   */
  leaseMs?: number;
  registry?: Registry;
  logger?: Logger;
}

export interface BucketDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/** Reads the script's answer; pure. */
export function decisionFrom(answer: unknown): BucketDecision {
  const [allowed, retryMs] = Array.isArray(answer) ? answer : [1, 0];
  return {
    allowed: Number(allowed) === 1,
    retryAfterSeconds: Math.max(1, Math.ceil(Number(retryMs ?? 0) / 1000)),
  };
}

/** How many tokens the script granted (1 from a script that predates leases); pure. */
export function grantedFrom(answer: unknown): number {
  if (!Array.isArray(answer) || Number(answer[0]) !== 1) return 0;
  const granted = Number(answer[2] ?? 1);
  return Number.isFinite(granted) && granted >= 1 ? granted : 1;
}

/** What a refused request is told (the router's error handler renders it, with `Retry-After`). */
function tooManyRequests(source: string, retryAfterSeconds: number): TooManyRequestsError {
  return new TooManyRequestsError(
    `Too many requests for source ${source}; retry after ${retryAfterSeconds} s`,
    retryAfterSeconds,
  );
}

/**
 * `promise`'s answer, or `onLate` after `ms` if it has not come by then (whichever is first; the
 * other is dropped). One timer and no extra promises: it runs on every intake request.
 */
function settleWithin<T>(
  promise: Promise<T>,
  ms: number,
  onAnswer: (value: T) => void,
  onFailure: (err: unknown) => void,
): void {
  let settled = false;
  const timer = setTimeout(() => {
    settled = true;
    onFailure(new Error(`rate limiter: no answer from Redis within ${ms} ms`));
  }, ms);
  promise.then(
    (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onAnswer(value);
    },
    (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onFailure(err);
    },
  );
}

/**
 * Per-source intake rate limit, so that a runaway identity provider cannot starve the others or
 * fill Redis. Over the limit: `next(TooManyRequestsError)` (429, `retryAfter` in seconds), which the
 * router's own error handler renders: a SCIM error body with `Retry-After` on the SCIM routes, the
 * hooks' JSON error on theirs; one limiter serves both (same buckets, same leases). Redis not ready or slow:
 * the request passes (the store then answers 503 at once), so the limiter never hangs a request.
 * Mount it after authentication, so that only a source's own callers spend its bucket (an
 * unauthenticated flood must not stall a source's provisioning); `sourceOf` defaults to the
 * `:source` route parameter (a token belongs to exactly one source).
 *
 * A busy process takes a few tokens at a time (TokenLease, `leaseMs`): at 1,000 requests a second
 * it calls Redis about once per 20 requests instead of once per request; a quiet one still takes
 * them one at a time.
 */
export function intakeRateLimiter(options: IntakeRateLimiterOptions): RequestHandler {
  const timeoutMs = options.timeoutMs ?? 250;
  const sourceOf = options.sourceOf ?? ((req: Request) => req.params.source as string | undefined);
  const limited = options.registry ? bridgeMetrics(options.registry).intakeRateLimited : undefined;
  const leaseMs = options.leaseMs ?? 20;
  const leases = new Map<string, { rate: number; lease: TokenLease }>();
  const leaseOf = (source: string, rate: number): TokenLease => {
    let entry = leases.get(source);
    if (entry === undefined || entry.rate !== rate) {
      const maxLease = Math.max(1, Math.floor((rate * leaseMs) / 1000));
      entry = { rate, lease: new TokenLease(leaseMs, maxLease) };
      leases.set(source, entry);
    }
    return entry.lease;
  };
  const ask = (source: string, rate: number, lease: TokenLease, next: NextFunction) => {
    const burst =
      typeof options.burst === "function" ? options.burst(source) : (options.burst ?? Math.max(1, rate * 2));
    const call = lease.begin();
    const release = (failed: boolean) => {
      if (!call.refill) return;
      for (const waiter of lease.waiters.splice(0)) waiter(failed);
    };
    settleWithin(
      takeTokens(options.redis, `${options.prefix}:ratelimit:${source}`, rate, burst, call.want),
      timeoutMs,
      (answer) => {
        const decision = decisionFrom(answer);
        lease.end(call, grantedFrom(answer), performance.now());
        if (decision.allowed) next();
        else {
          limited?.inc({ source });
          next(tooManyRequests(source, decision.retryAfterSeconds));
        }
        release(false);
      },
      (err) => {
        lease.end(call, 0, performance.now());
        options.logger?.warn({ err, source }, "intake rate limit skipped: Redis unavailable");
        next();
        release(true);
      },
    );
  };
  return (req, _res, next) => {
    const source = sourceOf(req);
    const rate = source === undefined ? undefined : options.requestsPerSecond(source);
    if (source === undefined || rate === undefined || !(rate > 0)) return next();
    if (options.redis.status !== "ready") return next();
    const lease = leaseOf(source, rate);
    if (lease.take(performance.now())) return next();
    if (!lease.refilling) return ask(source, rate, lease, next);
    lease.waiters.push((refillFailed) => {
      // Redis failed the refill: let the request through, as the limiter does for its own call.
      if (refillFailed || lease.takeLeased(performance.now())) return next();
      ask(source, rate, lease, next);
    });
  };
}
