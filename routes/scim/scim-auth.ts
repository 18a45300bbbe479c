import type { NextFunction, Request, RequestHandler, Response } from "express";
import passport from "passport";
import { Strategy as BearerStrategy } from "passport-http-bearer";
import type { Config } from "../../src/config/config-schema.js";
import { TokenSet } from "../../src/config/tokens.js";
import { sendScimError } from "./scim-errors.js";
import { normalizeBearerHeader } from "../bearer-header.js";

/** What a SCIM request is authenticated as: exactly one source. */
export interface SourcePrincipal {
  kind: "source";
  source: string;
}

/**
 * Bearer authentication for /scim/v2/<source> (passport, no sessions, no cookies). A token belongs
 * to exactly one source; a token of another source, an admin token, or none at all gets a 401 that
 * says nothing about the source's resources.
 */
export function scimAuthentication(config: Config): RequestHandler {
  const tokens = new TokenSet<string>();
  for (const [id, source] of Object.entries(config.sources)) for (const t of source.tokens) tokens.add(t, id);

  const authenticator = new passport.Authenticator();
  authenticator.use(
    "scim-bearer",
    new BearerStrategy(
      { passReqToCallback: true },
      (req: Request, token: string, done: (err: unknown, user?: SourcePrincipal | false) => void) => {
        const source = tokens.match(token);
        if (source !== undefined && source === req.params.source)
          return done(null, { kind: "source", source });
        return done(null, false);
      },
    ),
  );

  return (req: Request, res: Response, next: NextFunction) => {
    normalizeBearerHeader(req);
    authenticator.authenticate(
      "scim-bearer",
      { session: false },
      (err: unknown, principal: SourcePrincipal | false) => {
        if (err) return next(err);
        if (!principal) {
          res.setHeader("WWW-Authenticate", 'Bearer realm="scim-bridge"');
          return sendScimError(res, 401, "A valid bearer token for this source is required");
        }
        res.locals.principal = principal;
        next();
      },
    )(req, res, next);
  };
}
