import type { ScimType } from "../../errors.js";

/**
 * An answer the emulator gives instead of a success. Mapped once, in the dispatcher, to a SCIM
 * error body under /api/scim/v2 (RFC 7644 §3.12) or `{"error": {code, message}}` elsewhere.
 * `violation` marks a request that breaks the contract (recorded for tests).
 */
export class EmulatorError extends Error {
  readonly status: number;
  readonly code: string;
  readonly scimType?: ScimType;
  readonly violation: boolean;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { scimType?: ScimType; violation?: boolean; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "EmulatorError";
    this.status = status;
    this.code = code;
    this.scimType = options.scimType;
    this.violation = options.violation ?? false;
    this.headers = options.headers ?? {};
  }
}

export function violation(message: string, scimType?: ScimType): EmulatorError {
  return new EmulatorError(400, "CONTRACT_VIOLATION", message, { violation: true, scimType });
}

export function notFound(message: string): EmulatorError {
  return new EmulatorError(404, "NOT_FOUND", message);
}

export function conflict(message: string): EmulatorError {
  return new EmulatorError(409, "CONFLICT", message, { scimType: "uniqueness" });
}

export function badRequest(message: string, scimType?: ScimType): EmulatorError {
  return new EmulatorError(400, "BAD_REQUEST", message, { scimType });
}
