import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  type HttpTransport,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from "../../../src/platform/client/http-transport.js";
import { PlatformRequester } from "../../../src/platform/client/platform-requester.js";
import { createPlatformMetrics } from "../../../src/platform/client/platform-metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import {
  type WriteWatch,
  mayLandLate,
  noteUnansweredWrite,
  watchWrites,
} from "../../../src/platform/client/unanswered-writes.js";

function requesterOver(transport: HttpTransport): PlatformRequester {
  return new PlatformRequester({
    transport,
    token: "t",
    timeoutMs: 1_000,
    maxRetries: 2,
    backoff: { baseMs: 1, capMs: 1 },
    maxRetryAfterMs: 60_000,
    retryAfterCapMs: 300_000,
    budget: new NoopRequestBudget(),
    metrics: createPlatformMetrics(new Registry()),
    logger: pino({ level: "silent" }),
    random: () => 0,
    sleep: async () => {},
    now: () => 1_000,
  });
}

/** A requester whose transport fails the first `failures` sends with `error`, then answers 200 {}. */
function requesterFailing(error: TransportError, failures: number) {
  let sent = 0;
  return requesterOver({
    async send(_request: TransportRequest): Promise<TransportResponse> {
      sent++;
      if (sent <= failures) throw error;
      return { status: 200, body: "{}", headers: { "content-type": "application/json" } };
    },
  } as unknown as HttpTransport);
}

const refused = new TransportError(
  "network",
  "ECONNREFUSED: connect",
  Object.assign(new Error("x"), { code: "ECONNREFUSED" }),
);
const reset = new TransportError(
  "network",
  "ECONNRESET: socket hang up",
  Object.assign(new Error("x"), { code: "ECONNRESET" }),
);
const timedOut = new TransportError("timeout", "no complete answer within 1000 ms");

describe("unanswered platform writes", () => {
  it("a write that timed out is noted on the watch even when its retry is answered", async () => {
    const watch: WriteWatch = {};
    const requester = requesterFailing(timedOut, 1);
    await watchWrites(watch, () =>
      requester.call({ operation: "bulkUsers", method: "POST", path: "/api/v1/users/bulk", body: {} }),
    );
    expect(watch.unansweredAt).toBe(1_000);
  });

  it("a read, or a write whose connection broke or was refused, is not noted", async () => {
    const watch: WriteWatch = {};
    await watchWrites(watch, () =>
      requesterFailing(timedOut, 1).call({
        operation: "getUser",
        method: "GET",
        path: "/api/scim/v2/Users/x",
      }),
    );
    for (const error of [refused, reset]) {
      await watchWrites(watch, () =>
        requesterFailing(error, 1).call({
          operation: "createUser",
          method: "POST",
          path: "/api/scim/v2/Users",
          body: {},
        }),
      );
    }
    expect(watch.unansweredAt).toBeUndefined();
  });

  it("a gateway's 504 to a write is noted (the platform behind it may still be on it)", async () => {
    let sent = 0;
    const transport = {
      async send(): Promise<TransportResponse> {
        sent++;
        return sent === 1
          ? { status: 504, body: "", headers: {} }
          : { status: 200, body: "{}", headers: { "content-type": "application/json" } };
      },
    } as unknown as HttpTransport;
    const requester = requesterOver(transport);
    const watch: WriteWatch = {};
    await watchWrites(watch, () =>
      requester.call({ operation: "patchUser", method: "PATCH", path: "/api/scim/v2/Users/x", body: {} }),
    );
    expect(watch.unansweredAt).toBe(1_000);
  });

  it("classifies what may land late", () => {
    expect(mayLandLate("timeout")).toBe(true);
    expect(mayLandLate(undefined, 504)).toBe(true);
    expect(mayLandLate("network")).toBe(false);
    expect(mayLandLate(undefined, 503)).toBe(false);
    expect(mayLandLate("too_large")).toBe(false);
  });

  it("notes only inside a watch, the latest time, across awaits", async () => {
    noteUnansweredWrite(5); // no watch: nothing to note, no error
    const watch: WriteWatch = {};
    await watchWrites(watch, async () => {
      await new Promise((r) => setTimeout(r, 1));
      noteUnansweredWrite(7);
      noteUnansweredWrite(3);
    });
    expect(watch.unansweredAt).toBe(7);
  });
});
