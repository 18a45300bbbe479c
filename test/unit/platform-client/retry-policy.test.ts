import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  capRetryAfter,
  classifyFailure,
  decideRetry,
  isSharedPause,
  parseRetryAfter,
} from "../../../src/platform/client/retry-policy.js";

describe("classifyFailure", () => {
  it.each([
    [429, "rate_limited", true],
    [500, "server", true],
    [502, "server", true],
    [503, "server", true],
    [599, "server", true],
    [400, "bad_request", false],
    [422, "bad_request", false],
    [408, "timeout", true],
    [401, "unauthorized", false],
    [403, "forbidden", false],
    [404, "not_found", false],
    [409, "conflict", false],
    [302, "invalid_response", false],
  ] as const)("status %i is %s (transient %s)", (status, failure, transient) => {
    expect(classifyFailure(status)).toEqual({ failure, transient });
  });

  it("treats timeouts and dropped connections as transient", () => {
    expect(classifyFailure("timeout")).toEqual({ failure: "timeout", transient: true });
    expect(classifyFailure("network")).toEqual({ failure: "network", transient: true });
  });
});

describe("backoffDelay", () => {
  const options = { baseMs: 100, capMs: 1000 };

  it("is random() * min(cap, base * 2^attempt)", () => {
    expect(backoffDelay(0, options, () => 0.5)).toBe(50);
    expect(backoffDelay(1, options, () => 0.5)).toBe(100);
    expect(backoffDelay(3, options, () => 0.5)).toBe(400);
    expect(backoffDelay(4, options, () => 0.5)).toBe(500); // capped at 1000
    expect(backoffDelay(30, options, () => 0.999)).toBe(999);
  });

  it("is full jitter: from 0 up to the ceiling", () => {
    expect(backoffDelay(2, options, () => 0)).toBe(0);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(i % 8, options, Math.random);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(Math.min(1000, 100 * 2 ** (i % 8)));
    }
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");

  it("reads delay-seconds", () => {
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("1.5", now)).toBe(1500);
  });

  it("reads an HTTP-date (RFC 9110 §10.2.3), never negative", () => {
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
  });

  it("ignores a missing or unreadable header", () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-5", now)).toBeUndefined();
  });
});

describe("capRetryAfter", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const cap = 300_000;

  it("waits the cap when the header asks for more, and says so", () => {
    expect(capRetryAfter(parseRetryAfter("86400", now), cap)).toEqual({
      askedMs: 86_400_000,
      waitMs: 300_000,
      capped: true,
    });
    expect(capRetryAfter(parseRetryAfter("300.5", now), cap)).toEqual({
      askedMs: 300_500,
      waitMs: 300_000,
      capped: true,
    });
  });

  it("leaves a wait at or below the cap as asked", () => {
    expect(capRetryAfter(parseRetryAfter("3", now), cap)).toEqual({
      askedMs: 3000,
      waitMs: 3000,
      capped: false,
    });
    expect(capRetryAfter(parseRetryAfter("300", now), cap)).toEqual({
      askedMs: 300_000,
      waitMs: 300_000,
      capped: false,
    });
    expect(capRetryAfter(parseRetryAfter("0", now), cap)).toEqual({ askedMs: 0, waitMs: 0, capped: false });
  });

  it("caps an HTTP-date far in the future (next year) like delay-seconds", () => {
    const nextYear = parseRetryAfter("Fri, 01 Jan 2027 00:00:00 GMT", now);
    expect(nextYear).toBe(365 * 86_400_000);
    expect(capRetryAfter(nextYear, cap)).toEqual({ askedMs: nextYear, waitMs: 300_000, capped: true });
    // A date within the cap is waited until, to the second.
    expect(capRetryAfter(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now), cap)?.waitMs).toBe(60_000);
  });

  it("asks for nothing when the header asked for nothing", () => {
    expect(capRetryAfter(parseRetryAfter(undefined, now), cap)).toBeUndefined();
    expect(capRetryAfter(parseRetryAfter("soon", now), cap)).toBeUndefined();
  });
});

describe("decideRetry", () => {
  const base = {
    attempt: 0,
    maxRetries: 3,
    maxRetryAfterMs: 60_000,
    backoff: { baseMs: 100, capMs: 1000 },
    random: () => 0.5,
  };

  it("never retries a permanent failure", () => {
    expect(decideRetry({ ...base, failure: classifyFailure(409) })).toEqual({
      retry: false,
      reason: "permanent",
    });
    expect(decideRetry({ ...base, failure: classifyFailure(400) })).toEqual({
      retry: false,
      reason: "permanent",
    });
  });

  it("retries transient failures up to maxRetries", () => {
    expect(decideRetry({ ...base, failure: classifyFailure(503), attempt: 2 })).toEqual({
      retry: true,
      delayMs: 200,
    });
    expect(decideRetry({ ...base, failure: classifyFailure(503), attempt: 3 })).toEqual({
      retry: false,
      reason: "exhausted",
    });
    expect(decideRetry({ ...base, failure: classifyFailure("network"), maxRetries: 0 })).toEqual({
      retry: false,
      reason: "exhausted",
    });
  });

  it("never retries earlier than Retry-After", () => {
    expect(decideRetry({ ...base, failure: classifyFailure(429), retryAfterMs: 2000 })).toEqual({
      retry: true,
      delayMs: 2000,
    });
    // the backoff wins when it is longer
    expect(decideRetry({ ...base, failure: classifyFailure(429), retryAfterMs: 10, attempt: 2 })).toEqual({
      retry: true,
      delayMs: 200,
    });
  });

  it("gives a too long Retry-After back to the caller instead of sleeping", () => {
    expect(decideRetry({ ...base, failure: classifyFailure(429), retryAfterMs: 120_000 })).toEqual({
      retry: false,
      reason: "retry_after_too_long",
    });
  });
});

describe("isSharedPause", () => {
  it("is a 429 or 503 with Retry-After", () => {
    expect(isSharedPause(429, 1000)).toBe(true);
    expect(isSharedPause(503, 1000)).toBe(true);
    expect(isSharedPause(503, undefined)).toBe(false);
    expect(isSharedPause(500, 1000)).toBe(false);
  });
});
