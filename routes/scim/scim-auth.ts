import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Config } from "../../src/config/config-schema.js";
import { TokenSet } from "../../src/config/tokens.js";
import { bearerTokenOf } from "../bearer-header.js";
import { sendScimError } from "./scim-errors.js";

/** What a SCIM request is authenticated as: exactly one source. */
export interface SourcePrincipal {
  kind: "source";
  source: string;
}

/**
 * Bearer authentication for /scim/v2/<source> (no sessions, no cookies, no token in the query
 * string or body). A token belongs to exactly one source, and is compared by hash in constant time
 * (TokenSet); a token of another source, an admin token, or none at all gets a 401 that says
 * nothing about the source's resources. The challenge names `invalid_token` when a bearer token
 * was presented (RFC 6750 §3.1), so a client tells a wrong or revoked token from a missing one.
 *
 * Not passport, unlike the admin API: on the intake's hot path its per-request bookkeeping (five
 * methods set on every request, a strategy object and its closures) was about 7% of a SCIM
 * create's CPU, for the one header check below (README, "Stack").
 */
export function scimAuthentication(config: Config): RequestHandler {
  const tokens = new TokenSet<string>();
  for (const [id, source] of Object.entries(config.sources)) for (const t of source.tokens) tokens.add(t, id);

  return (req: Request, res: Response, next: NextFunction) => {
    const token = bearerTokenOf(req.headers.authorization);
    const source = token === undefined ? undefined : tokens.match(token);
    if (source !== undefined && source === req.params.source) {
      res.locals.principal = { kind: "source", source } satisfies SourcePrincipal;
      next();
      return;
    }
    // RFC 6750 §3.1: a request that presented a bearer token which failed gets error="invalid_token";
    // one without a bearer token gets the bare challenge (no error code).
    res.setHeader(
      "WWW-Authenticate",
      token === undefined
        ? 'Bearer realm="scim-bridge"'
        : 'Bearer realm="scim-bridge", error="invalid_token"',
    );
    sendScimError(res, 401, "A valid bearer token for this source is required");
  };
}
