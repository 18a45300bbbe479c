import type { ErrorRequestHandler, Response } from "express";
import { AppError, ServiceUnavailableError } from "../../src/errors.js";
import type { Logger } from "../../src/observability/logger.js";
import { SCHEMA_ERROR } from "../../src/scim/scim-types.js";

export const SCIM_CONTENT_TYPE = "application/scim+json; charset=utf-8";

/** RFC 7644 §3.12 error body. */
export function sendScimError(
  res: Response,
  status: number,
  detail: string,
  scimType?: string,
  retryAfter?: number,
): void {
  if (retryAfter !== undefined) res.setHeader("Retry-After", String(retryAfter));
  res
    .status(status)
    .type(SCIM_CONTENT_TYPE)
    .send(
      JSON.stringify({
        schemas: [SCHEMA_ERROR],
        status: String(status),
        ...(scimType ? { scimType } : {}),
        detail,
      }),
    );
}

const REDIS_DOWN =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection is closed|Stream isn't writeable|enableOfflineQueue|MaxRetriesPerRequest|CLUSTERDOWN|LOADING|READONLY|OOM/i;

/** Errors of the store that are not AppErrors yet (a Redis client error): 503, never a 500. */
export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; name?: string; message?: string; code?: string };
  if (e?.type === "entity.parse.failed") {
    return new AppError("The request body is not valid JSON", {
      status: 400,
      code: "invalidSyntax",
      scimType: "invalidSyntax",
    });
  }
  if (e?.type === "entity.too.large") {
    return new AppError("The request body is too large", { status: 413, code: "payload_too_large" });
  }
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return new AppError(e.message ?? "Unsupported encoding", { status: 415, code: "unsupported_media_type" });
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return new AppError(e.message ?? "Bad request", { status: e.status, code: "bad_request" });
  }
  if (REDIS_DOWN.test(`${e?.name ?? ""} ${e?.code ?? ""} ${e?.message ?? ""}`)) {
    return new ServiceUnavailableError("The directory store is unavailable; retry later", err);
  }
  return undefined;
}

/** The one place where errors on SCIM routes become SCIM error bodies. */
export function scimErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appError = toAppError(err);
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (appError) {
      if (appError.status >= 500)
        logger.warn({ err: appError, path: req.route?.path }, "scim request failed");
      sendScimError(res, appError.status, appError.message, appError.scimType, appError.retryAfter);
      return;
    }
    logger.error({ err }, "unexpected error on a SCIM route");
    sendScimError(res, 500, "Internal error");
  };
}
