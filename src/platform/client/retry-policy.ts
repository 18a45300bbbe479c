/**
 * The platform client's retry decisions, as small pure functions: how a failure is classified,
 * how long to back off, and what a `Retry-After` header asks for.
 */
import type { PlatformFailureCode } from "../platform-types.js";

/** A call that got no HTTP answer: it timed out, or the connection was refused, reset or dropped. */
export type NetworkFailure = "timeout" | "network";

export interface FailureClass {
  failure: PlatformFailureCode;
  /** Retry later (true) or give up and dead-letter (false). */
  transient: boolean;
}

/**
 * Classifies a non-2xx answer (by status) or a call without an answer.
 * 5xx, 429, 408, timeouts and dropped connections are transient; every other 4xx is permanent
 * (409 included: the caller looks the object up and adopts it). A 408 (RFC 9110 §15.5.9: the
 * server, or a load balancer before it, did not receive the whole request in time; the client may
 * repeat it) is a timeout on the server's side: the request was not processed.
 */
export function classifyFailure(input: number | NetworkFailure): FailureClass {
  if (input === "timeout") return { failure: "timeout", transient: true };
  if (input === "network") return { failure: "network", transient: true };
  const status = input;
  if (status === 429) return { failure: "rate_limited", transient: true };
  if (status === 408) return { failure: "timeout", transient: true };
  if (status >= 500 && status <= 599) return { failure: "server", transient: true };
  if (status === 401) return { failure: "unauthorized", transient: false };
  if (status === 403) return { failure: "forbidden", transient: false };
  if (status === 404) return { failure: "not_found", transient: false };
  if (status === 409) return { failure: "conflict", transient: false };
  if (status >= 400 && status <= 499) return { failure: "bad_request", transient: false };
  // 1xx/3xx (redirects are not followed) or nonsense: the answer breaks the contract.
  return { failure: "invalid_response", transient: false };
}

export interface BackoffOptions {
  /** Delay scale of the first retry, in ms. */
  baseMs: number;
  /** Upper bound of any one delay, in ms. */
  capMs: number;
}

/**
 * Full-jitter exponential backoff: `random() * min(cap, base * 2^attempt)`, attempt counting
 * from 0 for the first retry. `random` returns a number in [0, 1).
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}

/**
 * Parses `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns the wait in
 * ms from `nowMs` (never negative: a past date means now), or undefined when the header is
 * missing or unreadable (the caller then backs off as usual).
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = parseHttpDate(value, nowMs);
  return date === undefined ? undefined : Math.max(0, date - nowMs);
}

export interface RetryAfterWait {
  /** What the header asked for, in ms. */
  askedMs: number;
  /** What is waited: `askedMs`, held to at most the cap. */
  waitMs: number;
  /** Whether the cap cut the wait short (the header asked for more than `capMs`). */
  capped: boolean;
}

/**
 * Holds the wait a `Retry-After` asks for (`parseRetryAfter`'s result) to at most `capMs`, so that
 * one broken or far-future header (`Retry-After: 86400`, a date next year) cannot stop every worker
 * that long: the client waits the cap, then asks the platform again, and a platform still limiting
 * answers 429 with a fresh `Retry-After`. Undefined when the header asked for nothing.
 */
export function capRetryAfter(askedMs: number | undefined, capMs: number): RetryAfterWait | undefined {
  if (askedMs === undefined) return undefined;
  const waitMs = Math.min(askedMs, capMs);
  return { askedMs, waitMs, capped: waitMs < askedMs };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete) */
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** `Sun Nov  6 08:49:37 1994` (obsolete, ANSI C asctime; UTC) */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) in any of its three formats, always as UTC, to epoch ms;
 * undefined for anything else. Not Date.parse: that reads a year out of any text ("foo 2099" is
 * 2099-01-01), impossible dates ("31 Feb") roll over, and asctime is taken as local time.
 * An RFC 850 two-digit year is the one no more than 50 years ahead of `nowMs` (one more than
 * 50 years ahead is the previous century's).
 */
export function parseHttpDate(value: string, nowMs = Date.now()): number | undefined {
  const parts = httpDateParts(value, nowMs);
  if (!parts) return undefined;
  const month = MONTHS.indexOf(parts.month);
  const [day, h, m, s] = [parts.day, parts.h, parts.m, parts.s].map(Number) as [
    number,
    number,
    number,
    number,
  ];
  if (h > 23 || m > 59 || s > 60) return undefined; // 60: a leap second
  const date = new Date(Date.UTC(parts.year, month, day, h, m, Math.min(s, 59)));
  // Date.UTC rolls an impossible day over (31 Feb is 3 Mar): refuse it instead.
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return date.getTime();
}

interface HttpDateParts {
  day: string;
  month: string;
  year: number;
  h: string;
  m: string;
  s: string;
}

function httpDateParts(value: string, nowMs: number): HttpDateParts | undefined {
  const fixdate = IMF_FIXDATE.exec(value);
  if (fixdate) {
    const [, day = "", month = "", year = "", h = "", m = "", s = ""] = fixdate;
    return { day, month, year: Number(year), h, m, s };
  }
  const rfc850 = RFC_850.exec(value);
  if (rfc850) {
    const [, day = "", month = "", yy = "", h = "", m = "", s = ""] = rfc850;
    const thisYear = new Date(nowMs).getUTCFullYear();
    // The year within 50 years ahead of now whose last two digits these are.
    let year = Math.floor(thisYear / 100) * 100 + Number(yy);
    if (year > thisYear + 50) year -= 100;
    else if (year <= thisYear - 50) year += 100;
    return { day, month, year, h, m, s };
  }
  const asctime = ASCTIME.exec(value);
  if (asctime) {
    const [, month = "", day = "", h = "", m = "", s = "", year = ""] = asctime;
    return { day: day.trim(), month, year: Number(year), h, m, s };
  }
  return undefined;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; reason: "permanent" | "exhausted" | "retry_after_too_long" };

/**
 * Decides whether the attempt that just failed (0 = the first call) is retried, and after how
 * long: the jittered backoff, but never earlier than the platform's `Retry-After`. A `Retry-After`
 * longer than `maxRetryAfterMs` is not waited out in-process: the caller gives up with a
 * transient error that carries the pause (the queue layer delays the job instead).
 */
export function decideRetry(input: {
  failure: FailureClass;
  attempt: number;
  maxRetries: number;
  retryAfterMs?: number;
  maxRetryAfterMs: number;
  backoff: BackoffOptions;
  random: () => number;
}): RetryDecision {
  if (!input.failure.transient) return { retry: false, reason: "permanent" };
  if (input.attempt >= input.maxRetries) return { retry: false, reason: "exhausted" };
  const jittered = backoffDelay(input.attempt, input.backoff, input.random);
  if (input.retryAfterMs === undefined) return { retry: true, delayMs: jittered };
  if (input.retryAfterMs > input.maxRetryAfterMs) return { retry: false, reason: "retry_after_too_long" };
  return { retry: true, delayMs: Math.max(jittered, input.retryAfterMs) };
}

/** A 429 always pauses everyone; a 503 does when it names a Retry-After. */
export function isSharedPause(status: number | undefined, retryAfterMs: number | undefined): boolean {
  if (retryAfterMs === undefined) return false;
  return status === 429 || status === 503;
}
