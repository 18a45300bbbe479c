/**
 * The one error family of scim-bridge. Every edge maps these in exactly one place:
 * SCIM routes -> RFC 7644 §3.12 error bodies, admin routes -> JSON errors, job processors -> job fate.
 */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

export interface AppErrorOptions {
  status: number;
  /** A stable machine-readable code, e.g. "not_found", "uniqueness". */
  code: string;
  scimType?: ScimType;
  /** Seconds, for 429/503 answers. */
  retryAfter?: number;
  details?: unknown;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly scimType?: ScimType;
  readonly retryAfter?: number;
  readonly details?: unknown;

  constructor(message: string, options: AppErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.code = options.code;
    this.scimType = options.scimType;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, scimType: ScimType = "invalidValue", details?: unknown) {
    super(message, { status: 400, code: scimType, scimType, details });
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "Authentication required") {
    super(message, { status: 401, code: "unauthorized" });
  }
}

export class ForbiddenError extends AppError {
  constructor(message = "Not allowed") {
    super(message, { status: 403, code: "forbidden" });
  }
}

export class NotFoundError extends AppError {
  constructor(message = "Resource not found") {
    super(message, { status: 404, code: "not_found" });
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(message = "Method not allowed") {
    super(message, { status: 405, code: "method_not_allowed" });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, scimType: ScimType = "uniqueness") {
    super(message, { status: 409, code: scimType, scimType });
  }
}

export class PreconditionFailedError extends AppError {
  constructor(message = "The resource changed since the version given in If-Match") {
    super(message, { status: 412, code: "precondition_failed" });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = "Request body too large") {
    super(message, { status: 413, code: "payload_too_large" });
  }
}

export class TooManyRequestsError extends AppError {
  constructor(message: string, retryAfter: number) {
    super(message, { status: 429, code: "rate_limited", retryAfter });
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message = "Service temporarily unavailable", cause?: unknown, retryAfter = 1) {
    super(message, { status: 503, code: "unavailable", retryAfter, cause });
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
