import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { HttpTransport, TransportResponse } from "../../../src/platform/client/http-transport.js";
import { PlatformRequester } from "../../../src/platform/client/platform-requester.js";
import { createPlatformMetrics } from "../../../src/platform/client/platform-metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { parseHttpDate, parseRetryAfter } from "../../../src/platform/client/retry-policy.js";

/** RFC 9110 §5.6.7's example moment, in its three formats. */
const EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37);

describe("parseHttpDate (RFC 9110 §5.6.7)", () => {
  const tz = process.env.TZ;
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it("reads IMF-fixdate, the obsolete RFC 850 form and asctime, all three as UTC", () => {
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")).toBe(EXAMPLE);
    expect(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", Date.UTC(2026, 0, 1))).toBe(EXAMPLE);
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994")).toBe(EXAMPLE);
  });

  it("reads asctime as UTC whatever the process's time zone (Date.parse takes it as local time)", () => {
    process.env.TZ = "America/New_York";
    expect(new Date(2026, 0, 1).getTimezoneOffset()).not.toBe(0); // the zone did change
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994")).toBe(EXAMPLE);
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")).toBe(EXAMPLE);
  });

  it("takes an RFC 850 two-digit year more than 50 years ahead as the past century", () => {
    const now = Date.UTC(2026, 10, 25);
    expect(parseHttpDate("Thursday, 26-Nov-26 10:00:00 GMT", now)).toBe(Date.UTC(2026, 10, 26, 10));
    expect(parseHttpDate("Wednesday, 01-Jan-76 00:00:00 GMT", now)).toBe(Date.UTC(2076, 0, 1));
    expect(parseHttpDate("Saturday, 01-Jan-77 00:00:00 GMT", now)).toBe(Date.UTC(1977, 0, 1));
    // Late in a century, a small year is early in the next one (within 50 years ahead).
    const late = Date.UTC(2090, 5, 1);
    expect(parseHttpDate("Wednesday, 01-Jan-10 00:00:00 GMT", late)).toBe(Date.UTC(2110, 0, 1));
    expect(parseHttpDate("Saturday, 01-Jan-89 00:00:00 GMT", late)).toBe(Date.UTC(2089, 0, 1));
  });

  it.each([
    ["foo 2099"],
    ["Retry 10"],
    ["Dec 25"],
    ["soon, in about 3 Dec"],
    ["2099-01-01T00:00:00Z"],
    ["Sun, 06 Nov 1994 08:49:37 PST"],
    ["Sun, 06 Nov 1994 08:49:37"],
    ["Sun, 6 Nov 1994 08:49:37 GMT"],
    ["Sun, 06 nov 1994 08:49:37 GMT"],
    ["Fri, 31 Feb 2026 10:00:00 GMT"],
    ["Sun, 06 Nov 1994 24:00:00 GMT"],
    ["Sun, 06 Nov 1994 08:60:00 GMT"],
    ["Sun, 06 Nov 1994 08:49:37 GMT trailing"],
  ])("refuses %j (not an HTTP-date)", (value) => {
    expect(parseHttpDate(value)).toBeUndefined();
  });
});

describe("parseRetryAfter with an HTTP-date", () => {
  const now = Date.UTC(2026, 10, 25, 10, 0, 0, 250);

  it("waits until the date; a past date means now (0), never a negative wait", () => {
    expect(parseRetryAfter("Wed, 25 Nov 2026 10:00:03 GMT", now)).toBe(2750);
    expect(parseRetryAfter("Wed, 25 Nov 2026 09:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", now)).toBe(0);
  });

  it("ignores a date-like value that is not an HTTP-date instead of reading a year out of it", () => {
    expect(parseRetryAfter("foo 2099", now)).toBeUndefined();
    expect(parseRetryAfter("Retry 10", now)).toBeUndefined();
    expect(parseRetryAfter("Fri, 31 Feb 2027 10:00:00 GMT", now)).toBeUndefined();
  });
});

describe("a 429 whose Retry-After is garbage", () => {
  it("is retried after the usual backoff, without pausing every worker until a year read out of it", async () => {
    const answers: Array<Pick<TransportResponse, "status" | "body" | "headers">> = [
      { status: 429, body: "{}", headers: { "retry-after": "maybe in 2099" } },
      { status: 200, body: '{"id":"u1"}', headers: {} },
    ];
    const slept: number[] = [];
    const budget = new NoopRequestBudget();
    let sent = 0;
    const transport = {
      async send(): Promise<TransportResponse> {
        const answer = answers[Math.min(sent++, answers.length - 1)];
        if (!answer) throw new Error("no scripted answer");
        return answer;
      },
    } as unknown as HttpTransport;
    const requester = new PlatformRequester({
      transport,
      token: "t",
      timeoutMs: 1_000,
      maxRetries: 2,
      backoff: { baseMs: 100, capMs: 1_000 },
      maxRetryAfterMs: 60_000,
      retryAfterCapMs: 300_000,
      budget,
      metrics: createPlatformMetrics(new Registry()),
      logger: pino({ level: "silent" }),
      random: () => 0.5,
      sleep: async (ms) => {
        slept.push(ms);
      },
      now: Date.now,
    });
    const call = {
      operation: "getUser",
      method: "GET",
      path: "/x",
      schema: z.looseObject({ id: z.string() }),
    };
    await expect(requester.call(call as never)).resolves.toMatchObject({ id: "u1" });
    expect(slept).toEqual([50]);
    expect(await budget.pausedUntil()).toBe(0);
  });
});
