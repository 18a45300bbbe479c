import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type {
  HttpTransport,
  TransportRequest,
  TransportResponse,
} from "../../../src/platform/client/http-transport.js";
import { PlatformRequester } from "../../../src/platform/client/platform-requester.js";
import { createPlatformMetrics } from "../../../src/platform/client/platform-metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

const created = z.looseObject({ id: z.string() });

/** A requester over a scripted transport: answer i goes to call i (the last one repeats). */
function requesterAnswering(answers: Array<Pick<TransportResponse, "status" | "body">>) {
  const sent: TransportRequest[] = [];
  const transport = {
    async send(request: TransportRequest): Promise<TransportResponse> {
      const answer = answers[Math.min(sent.length, answers.length - 1)];
      sent.push(request);
      if (!answer) throw new Error("no scripted answer");
      return { ...answer, headers: { "content-type": "application/json" } };
    },
  } as unknown as HttpTransport;
  const requester = new PlatformRequester({
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
    now: Date.now,
  });
  return { requester, sent };
}

async function failureOf(promise: Promise<unknown>): Promise<PlatformError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PlatformError);
  return err as PlatformError;
}

const createCall = {
  operation: "createEmbedGroup",
  method: "POST",
  path: "/api/v1/x",
  body: {},
  schema: created,
} as const;
const cutOff = { status: 201, body: '{"id":"g1","na' };

describe("a 2xx answer whose body is not JSON", () => {
  it("is retried for a write (it probably landed): the retry's answer is the call's", async () => {
    const { requester, sent } = requesterAnswering([cutOff, { status: 201, body: '{"id":"g1"}' }]);
    await expect(requester.call(createCall)).resolves.toMatchObject({ id: "g1" });
    expect(sent).toHaveLength(2);
  });

  it("lets a repeated create end in a 409 the caller adopts, with the lost-answer hint", async () => {
    const { requester } = requesterAnswering([
      cutOff,
      { status: 409, body: '{"error":{"code":"CONFLICT","message":"exists"}}' },
    ]);
    const err = await failureOf(requester.call(createCall));
    expect(err.failure).toBe("conflict");
    expect(err.message).toMatch(/may have applied it/);
  });

  it("is a transient invalid_response for a write once the retries are used up", async () => {
    const { requester, sent } = requesterAnswering([cutOff]);
    const err = await failureOf(requester.call(createCall));
    expect(err).toMatchObject({ failure: "invalid_response", transient: true, httpStatus: 201 });
    expect(err.message).toBe("createEmbedGroup: 201 answer is not JSON; gave up after 3 tries of this call");
    expect(sent).toHaveLength(3);
  });

  // Changed on purpose: a read's unreadable 2xx was permanent (one try, then a dead letter). A
  // cut-off read is a transport fault like a dropped connection, and a GET is safe to repeat.
  it("is retried for a read too (safe to repeat), and is transient once the retries are used up", async () => {
    const read = { operation: "getEmbedGroup", method: "GET", path: "/api/v1/x", schema: created } as const;
    const cut = requesterAnswering([
      { status: 200, body: '{"id":"g' },
      { status: 200, body: '{"id":"g1"}' },
    ]);
    await expect(cut.requester.call(read)).resolves.toMatchObject({ id: "g1" });
    expect(cut.sent).toHaveLength(2);

    const { requester, sent } = requesterAnswering([{ status: 200, body: "<html>" }]);
    const err = await failureOf(requester.call(read));
    expect(err).toMatchObject({ failure: "invalid_response", transient: true });
    expect(err.message).toBe("getEmbedGroup: 200 answer is not JSON; gave up after 3 tries of this call");
    expect(sent).toHaveLength(3);
  });

  it("leaves a write's JSON answer of the wrong shape permanent (a contract break, not a lost answer)", async () => {
    const { requester, sent } = requesterAnswering([{ status: 201, body: '{"id":5}' }]);
    const err = await failureOf(requester.call(createCall));
    expect(err).toMatchObject({ failure: "invalid_response", transient: false });
    expect(err.message).toMatch(/breaks the contract/);
    expect(sent).toHaveLength(1);
  });
});
