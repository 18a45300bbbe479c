import type { ErrorRequestHandler, Response } from "express";
import { isRedisUnavailable } from "../../src/directory/redis-failure.js";
import { AppError, ServiceUnavailableError } from "../../src/errors.js";
import type { Logger } from "../../src/observability/logger.js";
import { SCHEMA_ERROR } from "../../src/scim/scim-types.js";
import { routeTemplate } from "../middleware/route-template.js";

export const SCIM_CONTENT_TYPE = "application/scim+json; charset=utf-8";

/**
 * Writes a SCIM JSON answer: status, `Content-Type: application/scim+json`, `Content-Length`, body.
 * Straight onto the response, without express's res.send (content-type lookup and freshness check
 * on every answer); a conditional request (If-None-Match, If-Modified-Since) still goes through
 * res.send, which answers 304 when the ETag set on the response matches (RFC 7644 §3.14).
 */
export function writeScimJson(res: Response, status: number, text: string): void {
  const headers = res.req.headers;
  if (headers["if-none-match"] !== undefined || headers["if-modified-since"] !== undefined) {
    res.status(status).type(SCIM_CONTENT_TYPE).send(text);
    return;
  }
  res.statusCode = status;
  res.setHeader("Content-Type", SCIM_CONTENT_TYPE);
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}

/** RFC 7644 §3.12 error body. */
export function sendScimError(
  res: Response,
  status: number,
  detail: string,
  scimType?: string,
  retryAfter?: number,
): void {
  if (retryAfter !== undefined) res.setHeader("Retry-After", String(retryAfter));
  writeScimJson(
    res,
    status,
    JSON.stringify({
      schemas: [SCHEMA_ERROR],
      status: String(status),
      ...(scimType ? { scimType } : {}),
      detail,
    }),
  );
}

/** A request body that is not JSON (body-parser's, or the SCIM body reader's): 400 invalidSyntax. */
export function bodyNotJson(): AppError {
  return new AppError("The request body is not valid JSON", {
    status: 400,
    code: "invalidSyntax",
    scimType: "invalidSyntax",
  });
}

/**
 * A request body that is not UTF-8 (RFC 7644 §3.8, RFC 8259 §8.1: JSON is exchanged as UTF-8):
 * 400 invalidSyntax. Decoded anyway, each bad byte would be stored as U+FFFD (a Latin-1 "Zoë"
 * from a script became "Zo\uFFFD"), a change nobody asked for.
 */
export function bodyNotUtf8(): AppError {
  return new AppError(
    "The request body is not valid UTF-8 (send JSON as UTF-8, e.g. Content-Type: application/scim+json; charset=utf-8)",
    { status: 400, code: "invalidSyntax", scimType: "invalidSyntax" },
  );
}

/** The media types a SCIM request body may have (RFC 7644 §3.1, §8.1), as a 415 names them. */
export const ACCEPTED_BODY_TYPES = "application/scim+json, application/json";

/**
 * A request body of a media type the SCIM routes do not read (text/plain, application/xml, a form):
 * 415 Unsupported Media Type (RFC 9110 §15.5.16: the content is in a format the target resource
 * does not support for this method). The answer names the accepted types in `Accept` (and, for a
 * PATCH, `Accept-Patch`, RFC 5789 §2.2): scimErrorHandler.
 */
export function unsupportedMediaType(contentType: string): AppError {
  const shown = contentType.length > 100 ? `${contentType.slice(0, 100)}...` : contentType;
  return new AppError(
    `The request body's media type "${shown}" is not supported; send JSON as ${ACCEPTED_BODY_TYPES}`,
    { status: 415, code: "unsupported_media_type" },
  );
}

/**
 * A request body over the configured limit: 413, naming the limit and the key that sets it (an
 * Okta app pushes a large group as one PUT of all its members: about 13,000 fit in 1mb).
 */
export function bodyTooLarge(limit?: string | number): AppError {
  const shown = typeof limit === "number" ? `${limit} bytes` : limit;
  return new AppError(
    shown === undefined
      ? "The request body is too large"
      : `The request body is larger than this service's limit of ${shown} (its operator can raise server.bodyLimit)`,
    { status: 413, code: "payload_too_large" },
  );
}

/** Errors of the store that are not AppErrors yet (a Redis client error): 503, never a 500. */
export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; name?: string; message?: string; code?: string };
  if (e?.type === "entity.parse.failed") return bodyNotJson();
  if (e?.type === "entity.too.large") return bodyTooLarge((e as { limit?: number }).limit);
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return new AppError(e.message ?? "Unsupported encoding", { status: 415, code: "unsupported_media_type" });
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return new AppError(e.message ?? "Bad request", { status: e.status, code: "bad_request" });
  }
  if (isRedisUnavailable(err)) {
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
    // The request's id (echoed in x-request-id) leads an operator from a 5xx to its line.
    const reqId = (req as { id?: unknown }).id;
    if (appError) {
      if (appError.status === 415) {
        // RFC 9110 §15.5.16 and RFC 5789 §2.2: say which media types would have been read.
        res.setHeader("Accept", ACCEPTED_BODY_TYPES);
        if (req.method === "PATCH") res.setHeader("Accept-Patch", ACCEPTED_BODY_TYPES);
      }
      if (appError.status >= 500)
        logger.warn({ err: appError, route: routeTemplate(req), reqId }, "scim request failed");
      sendScimError(res, appError.status, appError.message, appError.scimType, appError.retryAfter);
      return;
    }
    logger.error({ err, reqId }, "unexpected error on a SCIM route");
    sendScimError(res, 500, "Internal error");
  };
}
