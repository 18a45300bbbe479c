/** Options of HttpPlatformClient, and the base URL check (platform-api.yaml: HTTPS only). */
import type { Registry } from "prom-client";
import type { Logger } from "../../observability/logger.js";
import type { RequestBudget } from "./request-budget.js";

export interface HttpPlatformClientOptions {
  /** https:// base URL of the platform (http:// only with allowInsecureHttp). */
  baseUrl: string;
  token: string;
  /** Allow http:// and, with https, `rejectUnauthorized: false`: for a local emulator only. Default false. */
  allowInsecureHttp?: boolean;
  /** Deadline of one attempt, in ms. */
  timeoutMs: number;
  /** Retries after the first attempt of a transient failure. */
  maxRetries: number;
  /** The shared request budget (RedisRequestBudget in production). */
  budget: RequestBudget;
  registry?: Registry;
  logger?: Logger;
  /** [0, 1) random source of the backoff jitter (default Math.random). */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Backoff scale and cap in ms (default 200 and 30 000). */
  backoff?: { baseMs: number; capMs: number };
  /** A Retry-After longer than this is not waited out in-process (default 60 000 ms). */
  maxRetryAfterMs?: number;
  /**
   * The longest Retry-After honoured (default 300 000 ms, config `platform.retryAfterCapMs`): a
   * header asking for more pauses the calls (this one's retry and the shared budget) only this
   * long, and is logged as a warning.
   */
  retryAfterCapMs?: number;
  /** Extra trusted CA (PEM) for https. */
  ca?: string | Buffer;
  /** false accepts any certificate; only allowed with allowInsecureHttp. Default true. */
  rejectUnauthorized?: boolean;
  /** Parallel keep-alive sockets (default 32). */
  maxSockets?: number;
  /**
   * The largest answer body read, in bytes (default 16 MiB): a larger one fails the call, and a
   * list page that large is asked again smaller (scimPages).
   */
  maxAnswerBytes?: number;
}

/** Parses the base URL and refuses http:// unless allowInsecureHttp (platform-api.yaml: HTTPS only). */
export function checkedBaseUrl(options: HttpPlatformClientOptions): URL {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new Error(`platform baseUrl is not a URL: ${options.baseUrl}`);
  }
  const insecure = options.allowInsecureHttp === true;
  if (url.protocol === "http:" && !insecure) {
    throw new Error(
      `platform baseUrl ${url.origin} uses http://; the platform is reached over https:// only ` +
        "(set platform.allowInsecureHttp: true for a local emulator)",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`platform baseUrl must be https:// (got ${url.protocol})`);
  }
  if (options.rejectUnauthorized === false && !insecure) {
    throw new Error("rejectUnauthorized: false is allowed only with allowInsecureHttp (a local emulator)");
  }
  if (url.username !== "" || url.password !== "") {
    throw new Error("platform baseUrl must not carry credentials; use the token");
  }
  return url;
}
