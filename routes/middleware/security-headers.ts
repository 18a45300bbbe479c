import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import helmet from "helmet";

type HeaderValue = string | number | readonly string[];

/** The headers a middleware sets and removes when it runs, recorded once on a stand-in response. */
interface RecordedHeaders {
  set: Array<[string, HeaderValue]>;
  removed: string[];
}

/**
 * Runs `middleware` once against a stand-in request and response. Returns undefined when it does
 * not finish synchronously or touches anything but setHeader/removeHeader (its answer could then
 * depend on the request, and it must run per request).
 */
export function recordHeaders(middleware: RequestHandler): RecordedHeaders | undefined {
  const set = new Map<string, [string, HeaderValue]>();
  const removed: string[] = [];
  const res = {
    setHeader(name: string, value: HeaderValue) {
      set.set(name.toLowerCase(), [name, value]);
      return res;
    },
    removeHeader(name: string) {
      set.delete(name.toLowerCase());
      removed.push(name);
    },
  };
  let finished = false;
  try {
    middleware({ headers: {} } as never, res as never, (err?: unknown) => {
      finished = err === undefined;
    });
  } catch {
    return undefined;
  }
  return finished ? { set: [...set.values()], removed } : undefined;
}

/**
 * Security headers for a JSON API (helmet): a CSP that forbids everything (`default-src 'none'`,
 * `frame-ancestors 'none'`), HSTS, nosniff, no referrer, no X-Powered-By. A router that serves HTML
 * (an admin UI) must set its own, looser CSP.
 *
 * helmet's answer here is the same for every request (no nonces), so it is recorded once at start
 * and replayed: one middleware setting a dozen headers instead of a dozen chained middlewares on
 * every request. Should helmet ever need the request, it runs per request as before.
 */
export function securityHeaders(): RequestHandler {
  const middleware = helmet({
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
  const recorded = recordHeaders(middleware);
  if (!recorded) return middleware;
  const { set, removed } = recorded;
  return (_req: IncomingMessage, res: ServerResponse, next: () => void) => {
    for (const name of removed) res.removeHeader(name);
    for (const [name, value] of set) res.setHeader(name, value);
    next();
  };
}
