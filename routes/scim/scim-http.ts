import type { Request, RequestHandler, Response } from "express";
import type { Config } from "../../src/config/config-schema.js";
import type { DirectoryStore } from "../../src/directory/directory-types.js";
import { BadRequestError } from "../../src/errors.js";
import { MAX_BODY_NESTING, nestsDeeperThan } from "../../src/json-depth.js";
import type { Logger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/scim/scim-types.js";
import { readsAsJson } from "./scim-body.js";
import { unsupportedMediaType, writeScimJson } from "./scim-errors.js";

export interface ScimRouterDeps {
  config: Config;
  directory: DirectoryStore;
  logger: Logger;
  /** Runs after authentication, before any body is read (e.g. the per-source intake rate limiter). */
  beforeHandlers?: RequestHandler[];
  /** Called once per answered SCIM operation (metrics). */
  onOperation?: (event: { source: string; resource: string; operation: string; status: number }) => void;
}

/** The handlers of one resource type (Users, Groups). */
export interface ResourceHandlers {
  list: RequestHandler;
  search: RequestHandler;
  create: RequestHandler;
  get: RequestHandler;
  replace: RequestHandler;
  patch: RequestHandler;
  remove: RequestHandler;
}

export function sendScim(
  res: Response,
  status: number,
  body: JsonObject | undefined,
  headers: Record<string, string> = {},
): void {
  for (const name in headers) res.setHeader(name, headers[name] as string);
  if (body === undefined) {
    res.status(status).end();
    return;
  }
  writeScimJson(res, status, JSON.stringify(body));
}

/**
 * The JSON object a SCIM request carries: a body of a media type that is not JSON (text/plain,
 * application/xml, a form: left unread by scimJsonBody) is a 415 (RFC 9110 §15.5.16); a JSON value
 * that is not an object, or one nested deeper than MAX_BODY_NESTING, is a 400 invalidSyntax
 * (RFC 7644 §3.12: the body does not conform to the request's schema), before anything is read or
 * written.
 */
export function requireObjectBody(req: Request): JsonObject {
  const body: unknown = req.body;
  const type = req.headers["content-type"];
  if (body === undefined && type !== undefined && !readsAsJson(type)) throw unsupportedMediaType(type);
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequestError(
      "The request body must be a JSON object (application/scim+json)",
      "invalidSyntax",
    );
  }
  if (nestsDeeperThan(body, MAX_BODY_NESTING)) {
    throw new BadRequestError(
      `The request body nests objects or arrays deeper than ${MAX_BODY_NESTING} levels`,
      "invalidSyntax",
    );
  }
  return body as JsonObject;
}
