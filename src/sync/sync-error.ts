import { AppError } from "../errors.js";
import { isPlatformError } from "../platform/platform-error.js";

/**
 * A sync that cannot succeed until its input changes (permanent) or that should be retried
 * later (transient). Codes: "ownership_conflict", "attribute_type_clash", "no_embed_tenant",
 * "platform_inconsistent", ...
 */
export class SyncError extends AppError {
  readonly permanent: boolean;
  /** The sync waits for something else to finish: the entity stays dirty, no attempt is burned. */
  readonly blocked: boolean;
  readonly operation?: string;

  constructor(
    message: string,
    options: { code: string; permanent: boolean; blocked?: boolean; operation?: string; cause?: unknown },
  ) {
    super(message, { status: 500, code: options.code, cause: options.cause });
    this.permanent = options.permanent;
    this.blocked = options.blocked ?? false;
    this.operation = options.operation;
  }
}

export interface FailureFate {
  permanent: boolean;
  code: string;
  message: string;
  operation?: string;
  /** Waiting for another entity (see SyncError.blocked). */
  blocked?: boolean;
  /** The platform asked for a pause (429 after the client's own retries). */
  rateLimitedForMs?: number;
}

/** Decides a failure's fate once: permanent (dead letter) or transient (retry). */
export function classifyFailure(err: unknown): FailureFate {
  if (err instanceof SyncError) {
    return {
      permanent: err.permanent,
      blocked: err.blocked,
      code: err.code,
      message: err.message,
      operation: err.operation,
    };
  }
  if (isPlatformError(err)) {
    return {
      permanent: !err.transient,
      code: err.code,
      message: err.message,
      operation: err.operation,
      rateLimitedForMs: err.failure === "rate_limited" ? (err.retryAfterMs ?? 1_000) : undefined,
    };
  }
  // Redis hiccups and other unexpected errors: retry (bounded by the job's attempts).
  return { permanent: false, code: "internal", message: err instanceof Error ? err.message : String(err) };
}

export function isPlatformFailure(err: unknown, failure: string): boolean {
  return isPlatformError(err) && err.failure === failure;
}
