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

  // Built once: passport's failWithError passes a failure on to `next` as an AuthenticationError
  // (status 401 or 400) instead of answering, so the answer below is a SCIM error body.
  const authenticate = authenticator.authenticate("scim-bearer", { session: false, failWithError: true });

  return (req: Request, res: Response, next: NextFunction) => {
    normalizeBearerHeader(req);
    authenticate(req, res, (err?: unknown) => {
      if (err === undefined) {
        res.locals.principal = req.user as SourcePrincipal;
        return next();
      }
      if ((err as Error)?.name !== "AuthenticationError") return next(err);
      res.setHeader("WWW-Authenticate", 'Bearer realm="scim-bridge"');
      sendScimError(res, 401, "A valid bearer token for this source is required");
    });
  };
}
