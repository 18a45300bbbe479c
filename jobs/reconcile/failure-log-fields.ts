import { isPlatformError } from "../../src/platform/platform-error.js";

/**
 * What a log line about a failed run, resync or job says of its error. A platform failure is named
 * by its code, operation and HTTP status only: its message carries the platform's own words (a
 * refusal may name the user it refuses for), which stay in the run's or resync's report (admin
 * API), never in a log line (docs/operations.md, "What the logs hold"). Any other error (Redis, a
 * bug) is named by its message.
 */
export function failureLogFields(err: unknown): Record<string, unknown> {
  if (isPlatformError(err)) {
    return {
      err: err.code,
      operation: err.operation,
      ...(err.httpStatus !== undefined ? { status: err.httpStatus } : {}),
    };
  }
  return { err: err instanceof Error ? err.message : String(err) };
}
