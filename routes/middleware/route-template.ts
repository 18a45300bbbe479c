import type { Request } from "express";

/** The label used for requests that matched no route (bounded cardinality for 404 scans). */
export const UNMATCHED_ROUTE = "unmatched";

const TEMPLATE = Symbol("routeTemplate");
const FALLBACK = Symbol("routeTemplateFallback");

/**
 * The label of a request that ends before any route matched it, under a router that knows its own
 * prefix (the admin API's 401 and 400 answers: `/admin/v1`), instead of `unmatched`, which is for
 * scans of paths nobody serves.
 */
export function setFallbackRouteTemplate(req: Request, template: string): void {
  (req as unknown as Record<symbol, string>)[FALLBACK] = template;
}

/** Sets the route template of a request routed outside express's router (the SCIM routes). */
export function setRouteTemplate(req: Request, template: string): void {
  (req as unknown as Record<symbol, string>)[TEMPLATE] = template;
}

/**
 * The route template of a handled request, e.g. `/scim/v2/:source/Users/:id`, never raw ids.
 * `req.route.path` is already a template; the mount path (`req.baseUrl`) holds raw values, so each of
 * its segments that equals a known parameter value is put back as `:name`. Routers mounted on a
 * parameterised path should use `Router({ mergeParams: true })` so that those values are known.
 */
export function routeTemplate(req: Pick<Request, "baseUrl" | "route" | "params">): string {
  const set = (req as unknown as Record<symbol, string | undefined>)[TEMPLATE];
  if (set !== undefined) return set;
  const route = req.route as { path?: unknown } | undefined;
  if (!route || route.path === undefined) {
    return (req as unknown as Record<symbol, string | undefined>)[FALLBACK] ?? UNMATCHED_ROUTE;
  }
  const path = typeof route.path === "string" ? route.path : String(route.path);
  const byValue = new Map<string, string>();
  for (const [name, value] of Object.entries((req.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === "string" && value !== "" && !byValue.has(value)) byValue.set(value, name);
  }
  const base = (req.baseUrl ?? "")
    .split("/")
    .map((segment) => {
      const name = byValue.get(safeDecode(segment));
      return name === undefined ? segment : `:${name}`;
    })
    .join("/");
  const joined = `${base}${path === "/" && base !== "" ? "" : path}`;
  return joined === "" ? "/" : joined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
