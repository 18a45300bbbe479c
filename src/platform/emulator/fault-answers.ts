/** Answers for requests outside the contract and for injected error faults. */
import { matchRoute } from "./contract-operations.js";
import { EmulatorError } from "./emulator-error.js";
import type { FaultKind, FaultStatus } from "./fault-injector.js";

export function unknownRoute(method: string, path: string, knownPath: boolean): EmulatorError {
  if (knownPath) {
    return new EmulatorError(405, "METHOD_NOT_ALLOWED", `${method} ${path} is not in the contract`, {
      violation: true,
    });
  }
  let hint = "";
  if (path.endsWith("/") && matchRoute(method, path.slice(0, -1)).kind === "operation") {
    hint = " (trailing slash: the contract writes this path without one; see v0.3.0)";
  } else if (matchRoute(method, `${path}/`).kind === "operation") {
    hint = " (the contract writes this path with a trailing slash)";
  }
  return new EmulatorError(404, "NOT_FOUND", `${method} ${path} is not in the contract${hint}`, {
    violation: true,
  });
}

const FAULT_CODES: Record<FaultStatus, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  409: "CONFLICT",
  429: "RATE_LIMITED",
  500: "INTERNAL",
  502: "BAD_GATEWAY",
  503: "UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

/**
 * A Retry-After value (RFC 9110 §10.2.3): delay-seconds, or with `asDate` the HTTP-date (IMF-fixdate)
 * of that moment, rounded up to the next whole second (the date has no finer unit), so a client
 * that waits until the date waits at least `seconds`.
 */
export function retryAfterValue(seconds: number, asDate: boolean | undefined, nowMs = Date.now()): string {
  if (!asDate) return String(seconds);
  return new Date(Math.ceil((nowMs + seconds * 1000) / 1000) * 1000).toUTCString();
}

export function faultError(kind: FaultKind, nowMs = Date.now()): EmulatorError {
  if (kind.type === "rateLimit") {
    return new EmulatorError(429, "RATE_LIMITED", "rate limit exceeded", {
      headers: { "Retry-After": retryAfterValue(kind.retryAfterSeconds ?? 1, kind.retryAfterDate, nowMs) },
    });
  }
  if (kind.type !== "error") return new EmulatorError(500, "INTERNAL", "injected fault");
  const retry = kind.retryAfterSeconds ?? (kind.status === 429 ? 1 : undefined);
  const code = FAULT_CODES[kind.status];
  return new EmulatorError(kind.status, code, `injected ${kind.status}`, {
    ...(kind.status === 409 ? { scimType: "uniqueness" as const } : {}),
    headers: retry !== undefined ? { "Retry-After": retryAfterValue(retry, kind.retryAfterDate, nowMs) } : {},
  });
}
