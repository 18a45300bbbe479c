import { AppError } from "../../src/errors.js";
import { type PlatformError, isPlatformError } from "../../src/platform/platform-error.js";

/**
 * What a log line about a failed run, resync or job says of its error. A platform failure is named
 * by its code, operation and HTTP status only: its message carries the platform's own words (a
 * refusal may name the user it refuses for), which stay in the run's or resync's report (admin
 * API), never in a log line (docs/operations.md, "What the logs hold"). So is an error that carries
 * one (a sync's refusal quotes the platform's words in its own message, with the platform's failure
 * as its cause), by its own code. Any other error (Redis, a bug) is named by its message.
 */
export function failureLogFields(err: unknown): Record<string, unknown> {
  const platform = carriedPlatformError(err);
  if (platform) {
    return {
      err: err instanceof AppError ? err.code : platform.code,
      operation: platform.operation,
      ...(platform.httpStatus !== undefined ? { status: platform.httpStatus } : {}),
    };
  }
  return { err: err instanceof Error ? err.message : String(err) };
}

/** How deep the cause chain is searched (a cycle of causes ends the search too). */
const MAX_CAUSES = 5;

/** The platform failure `err` is, or carries as its cause (or its cause's cause, ...). */
function carriedPlatformError(err: unknown): PlatformError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth <= MAX_CAUSES && current instanceof Error; depth += 1) {
    if (isPlatformError(current)) return current;
    current = current.cause;
  }
  return undefined;
}
