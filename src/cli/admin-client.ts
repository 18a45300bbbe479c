import { RequestError, UsageError } from "./admin-errors.js";
import type { Values } from "./admin-forms.js";
import { describeFetchFailure } from "./fetch-failure.js";

/** What an admin command reads and writes through: its output, its environment and fetch. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** Poll interval for --wait (ms). */
  pollMs?: number;
  /** How long one request may go unanswered (ms; default 60 s): a black-holed connection is no answer. */
  requestTimeoutMs?: number;
}

/** How long a `--wait`'s look at (or just before) its deadline may take to be answered. */
const LAST_LOOK_MS = 1_000;

/** Answers that say "not now" rather than "no": a `--wait` asks again until its deadline. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/**
 * The bridge's base URL from --url: an http:// or https:// URL, or a usage error (exit 2) before
 * any request. `bridge:8080` or `localhost:8080` without a scheme would otherwise be "cannot reach"
 * (exit 1, as if the bridge were down). The admin API's own path, pasted from the docs
 * (`…/admin/v1`), is taken off: requests add it.
 */
function baseUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = new URL("invalid:");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(
      `--url must be the bridge's http:// or https:// URL, e.g. http://127.0.0.1:8080 (got ${raw})`,
    );
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new UsageError(`--url takes no query or fragment (got ${raw})`);
  }
  return raw.replace(/\/+$/, "").replace(/\/admin\/v1$/, "");
}

export interface Client {
  /** `deadline` (epoch ms, a `--wait`'s): the request is given up by then too (LAST_LOOK_MS at least). */
  call(method: string, path: string, body?: unknown, deadline?: number): Promise<Record<string, unknown>>;
}

/** The admin API at --url (or PORT on this host), asked with --token (or SCIM_BRIDGE_ADMIN_TOKEN). */
export function adminClient(values: Values, io: CliIo): Client {
  const url = baseUrl(values.url ?? `http://127.0.0.1:${io.env.PORT ?? "8080"}`);
  const token = values.token ?? io.env.SCIM_BRIDGE_ADMIN_TOKEN;
  if (!token) throw new UsageError("an admin token is needed: --token or SCIM_BRIDGE_ADMIN_TOKEN");
  return {
    async call(method, path, body, deadline) {
      let res: Response;
      let text: string;
      // One deadline for the answer and its body: during a failover a connection may hang, and a
      // reset mid-body is the same "no answer" (transient: --wait asks again). Not much past the
      // caller's deadline: a `--wait` ends by its --timeout-ms (its look at the deadline has a
      // second to be answered), not a whole request timeout later.
      const timeoutMs = Math.min(
        io.requestTimeoutMs ?? 60_000,
        deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(LAST_LOOK_MS, deadline - Date.now()),
      );
      try {
        res = await io.fetch(`${url}/admin/v1${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        const reason =
          (err as Error).name === "TimeoutError"
            ? `no answer within ${timeoutMs} ms`
            : describeFetchFailure(err);
        throw new RequestError(`cannot reach ${url}: ${reason}`, true);
      }
      let parsed: Record<string, unknown> = {};
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { raw: text };
      }
      if (!res.ok) {
        const error = parsed.error as { code?: string; message?: string } | undefined;
        throw new RequestError(
          `${res.status} ${error?.code ?? ""}: ${error?.message ?? text}`.trim(),
          TRANSIENT_STATUSES.has(res.status),
        );
      }
      return parsed;
    },
  };
}

export type Shape = Record<string, "string" | "number" | "boolean" | "array">;

/**
 * The answer, when it has the fields the command reads: anything else (another route's answer, a
 * proxy's page) is an error (exit 1), never printed as `undefined`.
 */
export function expectShape(
  answer: Record<string, unknown>,
  path: string,
  shape: Shape,
): Record<string, unknown> {
  for (const [field, type] of Object.entries(shape)) {
    const value = answer[field];
    const ok =
      type === "array"
        ? Array.isArray(value)
        : type === "string"
          ? typeof value === "string" && value !== ""
          : typeof value === type;
    if (!ok) throw new RequestError(`unexpected answer from ${path}: no ${type} ${field}`);
  }
  return answer;
}

export const RUN: Shape = { runId: "string", state: "string" };
export const RESYNC: Shape = { id: "string", state: "string" };
export const PAGE: Shape = { items: "array" };

/** One path segment: an id never reaches another route (`../status`, `x/retry#`). */
export const seg = encodeURIComponent;
