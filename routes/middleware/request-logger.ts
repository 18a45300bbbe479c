import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { pinoHttp } from "pino-http";
import type { Logger } from "../../src/observability/logger.js";

/** Paths whose requests are never logged (probes and scrapes would drown everything else). */
export const UNLOGGED_PATHS: readonly string[] = ["/healthz", "/readyz", "/metrics"];

export const REQUEST_ID_HEADER = "x-request-id";

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sane token, else a fresh UUID (no log injection). */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && VALID_REQUEST_ID.test(value) ? value : randomUUID();
}

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

interface SerializedReq {
  id?: unknown;
  method?: string;
  url?: string;
  query?: unknown;
  headers?: Record<string, unknown>;
  remoteAddress?: string;
}

interface SerializedRes {
  statusCode?: number;
  headers?: Record<string, unknown>;
}

/**
 * pino-http with request ids (`x-request-id` taken or generated, echoed in the response header),
 * no log line for health, readiness and metrics requests, the shared redaction list of `logger`
 * (REDACT_PATHS), and no bodies. Above debug a line holds the method, the path without its query
 * string (SCIM filters carry userNames) and the status; at debug the query and headers are added,
 * still redacted. `req.log` is a child logger carrying `reqId` for handlers.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  const debug = () => logger.isLevelEnabled("debug");
  const middleware = pinoHttp<IncomingMessage, ServerResponse>({
    logger,
    quietReqLogger: true,
    genReqId(req, res) {
      const id = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    autoLogging: { ignore: (req) => UNLOGGED_PATHS.includes(pathOf(req.url)) },
    customLogLevel(_req, res, err) {
      if (err || res.statusCode >= 500) return "error";
      return "info";
    },
    serializers: {
      req(req: SerializedReq) {
        const line: SerializedReq = { id: req.id, method: req.method, url: pathOf(req.url) };
        if (debug()) {
          line.query = req.query;
          line.headers = req.headers;
          line.remoteAddress = req.remoteAddress;
        }
        return line;
      },
      res(res: SerializedRes) {
        return debug()
          ? { statusCode: res.statusCode, headers: res.headers }
          : { statusCode: res.statusCode };
      },
    },
  });
  return middleware as unknown as RequestHandler;
}
