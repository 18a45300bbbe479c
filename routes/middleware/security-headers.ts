import type { RequestHandler } from "express";
import helmet from "helmet";

/**
 * Security headers for a JSON API (helmet): a CSP that forbids everything (`default-src 'none'`,
 * `frame-ancestors 'none'`), HSTS, nosniff, no referrer, no X-Powered-By. A router that serves HTML
 * (an admin UI) must set its own, looser CSP.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: "same-origin" },
    crossOriginOpenerPolicy: { policy: "same-origin" },
    referrerPolicy: { policy: "no-referrer" },
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
    xFrameOptions: { action: "deny" },
  }) as RequestHandler;
}
