import type { NextFunction, Request, RequestHandler, Response } from "express";
import passport from "passport";
import { Strategy as BearerStrategy } from "passport-http-bearer";
import {
  type AdminPrincipal,
  type AdminPrincipals,
  type AdminRole,
  allows,
} from "../../src/admin/admin-principals.js";
import { ForbiddenError, UnauthorizedError } from "../../src/errors.js";
import { normalizeBearerHeader } from "../bearer-header.js";

/** Bearer authentication for the admin surface (passport, no sessions). 401 JSON without a valid admin token. */
export function adminAuthentication(principals: AdminPrincipals): RequestHandler {
  const authenticator = new passport.Authenticator();
  authenticator.use(
    "admin-bearer",
    new BearerStrategy((token: string, done: (err: unknown, user?: AdminPrincipal | false) => void) => {
      const principal = principals.resolve(token);
      done(null, principal ?? false);
    }),
  );
  return (req: Request, res: Response, next: NextFunction) => {
    // passport-http-bearer also takes `access_token` from the query string or the body (RFC 6750
    // §2.2-2.3). A token in a URL ends up in proxy logs and shell history: only the header counts.
    if (hasAccessTokenParameter(req)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="scim-bridge-admin", error="invalid_request"');
      return next(
        new UnauthorizedError("The admin token goes in the Authorization header, not in the URL or the body"),
      );
    }
    normalizeBearerHeader(req);
    authenticator.authenticate(
      "admin-bearer",
      { session: false },
      (err: unknown, principal: AdminPrincipal | false) => {
        if (err) return next(err);
        if (!principal) {
          res.setHeader("WWW-Authenticate", 'Bearer realm="scim-bridge-admin"');
          return next(new UnauthorizedError("A valid admin bearer token is required"));
        }
        res.locals.admin = principal;
        next();
      },
    )(req, res, next);
  };
}

function hasAccessTokenParameter(req: Request): boolean {
  const body = req.body as unknown;
  const inBody = typeof body === "object" && body !== null && Object.hasOwn(body, "access_token");
  return Object.hasOwn(req.query as object, "access_token") || inBody;
}

export function principalOf(res: Response): AdminPrincipal {
  const principal = res.locals.admin as AdminPrincipal | undefined;
  if (!principal) throw new UnauthorizedError();
  return principal;
}

/** 403 unless the authenticated principal has the role. */
export function requireRole(role: AdminRole): RequestHandler {
  return (_req, res, next) => {
    const principal = principalOf(res);
    if (!allows(principal.role, role)) return next(new ForbiddenError(`This action needs the ${role} role`));
    next();
  };
}
