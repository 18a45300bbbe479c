import { AppError } from "../errors.js";
import type { PlatformFailureCode } from "./platform-types.js";

/**
 * A platform call that did not succeed. `transient` decides the job's fate: retry later, or
 * dead-letter with this error's message as the reason.
 */
export class PlatformError extends AppError {
  readonly operation: string;
  readonly failure: PlatformFailureCode;
  readonly transient: boolean;
  readonly httpStatus?: number;
  /** When the platform asked for a pause (Retry-After), in ms. */
  readonly retryAfterMs?: number;
  /**
   * The call was never sent: a shared pause other calls were answered with held it back (a queue
   * job's call that does not sit out a long pause). Not the platform's answer to this call.
   */
  readonly heldBack: boolean;
  /**
   * The call was never sent: a shared pause held it back (heldBack, or a pause one of the same
   * job's own calls was answered with). The platform answered nothing to this call.
   */
  readonly unsent: boolean;

  constructor(
    message: string,
    options: {
      operation: string;
      failure: PlatformFailureCode;
      transient: boolean;
      httpStatus?: number;
      retryAfterMs?: number;
      heldBack?: boolean;
      unsent?: boolean;
      cause?: unknown;
    },
  ) {
    super(message, { status: 502, code: `platform_${options.failure}`, cause: options.cause });
    this.operation = options.operation;
    this.failure = options.failure;
    this.transient = options.transient;
    this.httpStatus = options.httpStatus;
    this.retryAfterMs = options.retryAfterMs;
    this.heldBack = options.heldBack ?? false;
    this.unsent = options.unsent ?? this.heldBack;
  }
}

export function isPlatformError(err: unknown): err is PlatformError {
  return err instanceof PlatformError;
}
