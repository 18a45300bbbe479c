/**
 * The one loop every platform call goes through: draw from the shared budget, send, classify,
 * retry transient failures with full-jitter backoff (never before Retry-After), validate 2xx
 * answers against the contract, count and log. Every platform failure is thrown as a
 * PlatformError; an error of the request budget itself (Redis unreachable) is thrown as it is.
 */
import type { z } from "zod";
import type { Logger } from "../../observability/logger.js";
import { PlatformError } from "../platform-error.js";
import type { PlatformMetrics } from "./platform-metrics.js";
import { PauseTooLong, type RequestBudget } from "./request-budget.js";
import {
  type BackoffOptions,
  type FailureClass,
  capRetryAfter,
  classifyFailure,
  decideRetry,
  isSharedPause,
  parseRetryAfter,
} from "./retry-policy.js";
import {
  beforeWrite,
  inOwnPause,
  markWrite,
  mayLandLate,
  noteOwnPause,
  noteUnansweredWrite,
  putsBackOnLongPause,
} from "./unanswered-writes.js";
import {
  type HttpTransport,
  TransportError,
  type TransportFailure,
  type TransportResponse,
} from "./http-transport.js";
import { errorBodySchema } from "./platform-schemas.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface PlatformCall<T> {
  /** Names the operation in metrics, logs and errors (the client method's name). */
  operation: string;
  method: HttpMethod;
  /** Path with parameters already encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Schema of a 2xx answer's body; absent when the body is ignored. */
  schema?: z.ZodType<T>;
  /** Answer null on 404 instead of throwing. */
  notFoundIsNull?: boolean;
}

export interface RequesterOptions {
  transport: HttpTransport;
  token: string;
  timeoutMs: number;
  maxRetries: number;
  backoff: BackoffOptions;
  maxRetryAfterMs: number;
  /**
   * The longest `Retry-After` honoured, in ms: a header asking for more is waited (and pauses the
   * shared budget) only this long, with a warning (config `platform.retryAfterCapMs`).
   */
  retryAfterCapMs: number;
  budget: RequestBudget;
  metrics: PlatformMetrics;
  logger: Logger;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

const SCIM_PREFIX = "/api/scim/v2";

export class PlatformRequester {
  readonly #o: RequesterOptions;

  constructor(options: RequesterOptions) {
    this.#o = options;
  }

  /** Resolves with the validated body (undefined without a schema), or null for an allowed 404. */
  async call<T>(call: PlatformCall<T>): Promise<T | null> {
    const o = this.#o;
    const contentType = call.path.startsWith(SCIM_PREFIX) ? "application/scim+json" : "application/json";
    // identity: the client reads bodies as they come; a gzip answer would read as "not JSON".
    const headers: Record<string, string> = {
      authorization: `Bearer ${o.token}`,
      accept: contentType,
      "accept-encoding": "identity",
    };
    if (call.body !== undefined) headers["content-type"] = contentType;
    const pathAndQuery = call.path + encodeQuery(call.query);
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    let answerMayBeLost = false;

    for (let attempt = 0; ; attempt++) {
      await this.#acquire(call.operation);
      // After the budget's wait (a pause may be long), right before the write goes out.
      if (call.method !== "GET") await beforeWrite();
      const settle = call.method !== "GET" ? await markWrite() : undefined;
      const started = o.now();
      let response: TransportResponse | undefined;
      let failedKind: TransportFailure | undefined;
      let cause: unknown;
      try {
        response = await o.transport.send({
          method: call.method,
          pathAndQuery,
          headers,
          body,
          timeoutMs: o.timeoutMs,
        });
      } catch (err) {
        failedKind = err instanceof TransportError ? err.kind : "network";
        cause = err;
      }
      const late = call.method !== "GET" && mayLandLate(failedKind, response?.status);
      if (late) noteUnansweredWrite(started);
      await settle?.({ mayLandLate: late, sentAt: started });
      const seconds = (o.now() - started) / 1000;
      const statusLabel = response ? String(response.status) : (failedKind ?? "network");
      o.metrics.requests.inc({ operation: call.operation, status: statusLabel });
      o.metrics.duration.observe({ operation: call.operation }, seconds);
      o.logger.debug(
        {
          operation: call.operation,
          method: call.method,
          status: statusLabel,
          durationMs: seconds * 1000,
          attempt,
        },
        "platform call",
      );

      if (failedKind === "too_large") {
        throw this.#fail(call.operation, `${call.operation}: ${errorMessage(cause)}`, {
          failure: "invalid_response",
          transient: false,
          cause,
        });
      }
      // A 2xx whose body is not JSON was most likely cut off on the way. A write most likely
      // landed, but what it answered is unknown: retry it like a lost answer (a repeated create
      // gets 409 and the caller adopts). A read is safe to repeat. JSON of the wrong shape is a
      // contract break, not a transport fault: permanent (#accept).
      const unreadable =
        response !== undefined && isSuccess(response.status) && !isJsonAnswer(call, response);
      if (response && isSuccess(response.status) && !unreadable) {
        return this.#accept(call, response);
      }
      if (response?.status === 404 && call.notFoundIsNull) return null;

      const failure: FailureClass = unreadable
        ? { failure: "invalid_response", transient: true }
        : classifyFailure(response ? response.status : failedKind === "timeout" ? "timeout" : "network");
      // Capped here, once: the retry's wait, the shared pause and the error's retryAfterMs (which
      // the job processors turn into the job's delay) all see the capped wait.
      const retryAfter = response
        ? capRetryAfter(parseRetryAfter(headerValue(response, "retry-after"), o.now()), o.retryAfterCapMs)
        : undefined;
      const retryAfterMs = retryAfter?.waitMs;
      if (retryAfter?.capped) {
        o.logger.warn(
          {
            operation: call.operation,
            status: response?.status,
            retryAfterSeconds: Math.ceil(retryAfter.askedMs / 1000),
            capSeconds: o.retryAfterCapMs / 1000,
          },
          "platform Retry-After is longer than platform.retryAfterCapMs: pausing only for the cap, then asking again",
        );
      }
      if (response?.status === 429) o.metrics.rateLimited.inc({ operation: call.operation });
      if (response && isSharedPause(response.status, retryAfterMs) && retryAfterMs !== undefined) {
        const until = o.now() + retryAfterMs;
        noteOwnPause(until);
        await o.budget.pauseUntil(until);
      }
      const decision = decideRetry({
        failure,
        attempt,
        maxRetries: o.maxRetries,
        retryAfterMs,
        maxRetryAfterMs: o.maxRetryAfterMs,
        backoff: o.backoff,
        random: o.random,
      });
      if (decision.retry) {
        // A write whose answer never came (or came as 5xx) may have been applied anyway.
        if (call.method !== "GET") answerMayBeLost = true;
        o.metrics.retries.inc({ operation: call.operation, reason: failure.failure });
        o.logger.warn(
          {
            operation: call.operation,
            reason: failure.failure,
            status: response?.status,
            attempt,
            delayMs: decision.delayMs,
          },
          "platform call failed, retrying",
        );
        await o.sleep(decision.delayMs);
        continue;
      }

      const why = unreadable
        ? `${response?.status} answer is not JSON`
        : response
          ? `platform answered ${response.status}${describeErrorBody(response)}`
          : `${failedKind === "timeout" ? "timed out" : "connection failed"} (${errorMessage(cause)})`;
      let message = `${call.operation}: ${why}`;
      if (decision.reason === "exhausted") message += `; gave up after ${attempt + 1} tries of this call`;
      if (decision.reason === "retry_after_too_long") {
        message += `; Retry-After ${Math.ceil((retryAfterMs ?? 0) / 1000)} s is longer than this client waits`;
      }
      if (failure.failure === "conflict" && answerMayBeLost) {
        message += "; an earlier attempt whose answer was lost may have applied it (look it up and adopt it)";
      }
      throw this.#fail(call.operation, message, {
        failure: failure.failure,
        transient: failure.transient,
        httpStatus: response?.status,
        retryAfterMs,
        cause,
      });
    }
  }

  #accept<T>(call: PlatformCall<T>, response: TransportResponse): T {
    if (call.schema === undefined) return undefined as T;
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body);
    } catch (err) {
      throw this.#fail(call.operation, `${call.operation}: ${response.status} answer is not JSON`, {
        failure: "invalid_response",
        transient: false,
        httpStatus: response.status,
        cause: err,
      });
    }
    const result = call.schema.safeParse(parsed);
    if (!result.success) {
      const issues = result.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`)
        .join("; ");
      throw this.#fail(
        call.operation,
        `${call.operation}: ${response.status} answer breaks the contract (${issues})`,
        {
          failure: "invalid_response",
          transient: false,
          httpStatus: response.status,
        },
      );
    }
    return result.data;
  }

  /**
   * Draws from the shared budget. A queue job's call (putsBackOnLongPause) does not sit out a
   * pause longer than the client waits for a Retry-After of its own (maxRetryAfterMs): it fails as
   * rate limited with the pause left, as if the platform had answered it so, and the job processor
   * puts the job back with its queue paused (no attempt spent), so no job stays active meanwhile.
   */
  async #acquire(operation: string): Promise<void> {
    const o = this.#o;
    try {
      await o.budget.acquire(putsBackOnLongPause() ? { maxWaitMs: o.maxRetryAfterMs } : {});
    } catch (err) {
      if (!(err instanceof PauseTooLong)) throw err;
      throw this.#fail(
        operation,
        `${operation}: not sent, the platform asked every call to pause (Retry-After); ${Math.ceil(err.waitMs / 1000)} s left`,
        // Held back by another call's pause, unless the platform asked this job's own calls for it.
        {
          failure: "rate_limited",
          transient: true,
          retryAfterMs: err.waitMs,
          heldBack: !inOwnPause(o.now()),
          unsent: true,
        },
      );
    }
  }

  #fail(
    operation: string,
    message: string,
    details: Omit<ConstructorParameters<typeof PlatformError>[1], "operation">,
  ): PlatformError {
    const err = new PlatformError(message, { operation, ...details });
    this.countFailure(err);
    return err;
  }

  /** Counts a failed platform call (platform_failures_total): its own, or a list walk's (paging). */
  countFailure(err: PlatformError): void {
    this.#o.metrics.failures.inc({
      operation: err.operation,
      class: err.transient ? "transient" : "permanent",
    });
  }
}

export function encodeQuery(query: Record<string, string | number | undefined> | undefined): string {
  if (query === undefined) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** Whether a 2xx answer's body can be read as JSON (always, when the call ignores the body). */
function isJsonAnswer(call: PlatformCall<unknown>, response: TransportResponse): boolean {
  if (call.schema === undefined) return true;
  try {
    JSON.parse(response.body);
    return true;
  } catch {
    return false;
  }
}

function headerValue(response: TransportResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** ` (scimType: detail)` or ` (code: message)` from an error body, trimmed; empty when unreadable. */
function describeErrorBody(response: TransportResponse): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    return "";
  }
  const result = errorBodySchema.safeParse(parsed);
  if (!result.success) return "";
  const data = result.data;
  const code = data.error?.code ?? data.scimType;
  const text = data.error?.message ?? data.detail;
  const joined = [code, text].filter((part) => part !== undefined && part !== "").join(": ");
  return joined === "" ? "" : ` (${joined.slice(0, 300)})`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
