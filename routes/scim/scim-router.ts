import type { NextFunction, Request, RequestHandler, Response } from "express";
import { ForbiddenError, MethodNotAllowedError, NotFoundError } from "../../src/errors.js";
import { resourceTypes, schemas, serviceProviderConfig } from "../../src/scim/discovery.js";
import type { JsonObject } from "../../src/scim/scim-types.js";
import { setRouteTemplate } from "../middleware/route-template.js";
import { series } from "../middleware/series.js";
import { createGroupHandlers } from "./group-handlers.js";
import { type ResourceHandlers, type ScimRouterDeps, sendScim } from "./scim-http.js";
import { scimAuthentication } from "./scim-auth.js";
import { scimJsonBody } from "./scim-body.js";
import { listParam } from "./list-params.js";
import { scimErrorHandler, sendScimError } from "./scim-errors.js";
import { scimBaseUrl } from "./scim-render.js";
import { createRootHandlers } from "./root-handlers.js";
import { type ScimRoute, matchScimRoute, scimTargetOf, templateOf } from "./scim-routes.js";
import { createUserHandlers } from "./user-handlers.js";

export type { ResourceHandlers, ScimRouterDeps };

/**
 * `/scim/v2` and everything under `/scim/v2/`: a path here that names no service provider (no
 * source, an empty one as in `/scim/v2//okta`, or one that is not valid percent-encoding) is still
 * answered with a SCIM error body (RFC 7644 §3.12), not the app's generic 404.
 */
const SCIM_PREFIX = /^\/scim\/v2(?:[/?]|$)/i;

/** The scim_operations_total operation of each resource route action. */
const ACTION_OPERATION: Record<keyof ResourceHandlers, string> = {
  list: "list",
  search: "list",
  create: "create",
  get: "get",
  replace: "replace",
  patch: "patch",
  remove: "delete",
};

/**
 * Names a SCIM request for metrics: resource and operation, never ids, from the matched route
 * (`route`, matched from `method` and `path` when not given). A resource route's are its resource
 * and action (ACTION_OPERATION: a search is a `list` whatever the case of `.search` or a trailing
 * slash). A discovery route's resource is its endpoint; a path no route names a resource of (405,
 * 501, 400, 404) keeps its first segment, which recordScimOperation bounds (scimResourceLabel: a
 * name it does not know is `other`); for these the operation comes from the method.
 */
export function operationOf(
  method: string,
  path: string,
  route: ScimRoute = matchScimRoute(method, path),
): { resource: string; operation: string } {
  // The server root's queries (GET /, POST /.search) span every resource type.
  if (path === "/" || /^\/\.search\/?$/i.test(path)) return { resource: "root", operation: "list" };
  if (route.kind === "resource") {
    return { resource: route.resource, operation: ACTION_OPERATION[route.action] };
  }
  const [, segment = "unknown", rest] = /^\/([^/]+)(\/.*)?$/.exec(path) ?? [];
  const resource = route.kind === "discovery" ? route.endpoint : segment;
  if (rest === "/.search") return { resource, operation: "list" };
  const withId = rest !== undefined && rest !== "/";
  const operation =
    { GET: withId ? "get" : "list", POST: "create", PUT: "replace", PATCH: "patch", DELETE: "delete" }[
      method
    ] ?? method.toLowerCase();
  return { resource, operation };
}

/**
 * The SCIM 2.0 service providers (RFC 7644): every request under `/scim/v2/<source>/`, routed by
 * the table in scim-routes.ts; other paths pass on to `next`. Works mounted anywhere (it reads
 * `req.originalUrl`). In order: the source must exist; the operation is counted when answered;
 * discovery answers without a token (write methods 405 before any body is read); everything else
 * needs the source's bearer token, then `beforeHandlers` (rate limit), then the body (when the
 * route reads one) and the handler. Errors become SCIM error bodies (scim-errors.ts).
 *
 * Not an express Router: its per-layer matching, parameter and URL bookkeeping was about a tenth
 * of a SCIM create's CPU, for a table that one function decides.
 */
export function createScimRouter(deps: ScimRouterDeps): RequestHandler {
  const { config, logger } = deps;
  const body = scimJsonBody(config.server.bodyLimit);
  const onError = scimErrorHandler(logger);
  const handlers: Record<"Users" | "Groups", ResourceHandlers> = {
    Users: createUserHandlers(deps),
    Groups: createGroupHandlers(deps),
  };
  // Each route's chain, built once: [auth, ...beforeHandlers, (body), handler].
  const guard = [scimAuthentication(config), ...(deps.beforeHandlers ?? [])];
  const chains = new Map<string, RequestHandler>();
  const chainOf = (route: Extract<ScimRoute, { kind: "resource" }>): RequestHandler => {
    const key = `${route.resource} ${route.action}`;
    let chain = chains.get(key);
    if (chain === undefined) {
      const handler = handlers[route.resource][route.action];
      chain = series(route.body ? [...guard, body, handler] : [...guard, handler]);
      chains.set(key, chain);
    }
    return chain;
  };
  const root = createRootHandlers(deps);
  const rootChains = {
    list: series([...guard, root.list]),
    search: series([...guard, body, root.search]),
  };
  const guarded = (answer: RequestHandler) => series([...guard, answer]);
  const notImplemented = guarded((_req, res) =>
    sendScimError(res, 501, "Not implemented by this service provider"),
  );
  const notFound = guarded((_req, res) => sendScimError(res, 404, "No such SCIM endpoint"));
  const badPath = guarded((_req, res) => sendScimError(res, 400, "The path is not valid percent-encoding"));

  return (req: Request, res: Response, next: NextFunction) => {
    const target = scimTargetOf(req.originalUrl);
    if (target === undefined) {
      // A SCIM path that names no service provider: a SCIM 404 all the same.
      if (SCIM_PREFIX.test(req.originalUrl)) return sendScimError(res, 404, "No such SCIM endpoint");
      return next();
    }
    const { source, rest } = target;
    if (!Object.hasOwn(config.sources, source)) return sendScimError(res, 404, "No such SCIM endpoint");
    const route = matchScimRoute(req.method, rest);
    req.params = route.kind === "resource" && route.id !== undefined ? { source, id: route.id } : { source };
    const template = templateOf(route, rest);
    if (template !== undefined) setRouteTemplate(req, template);
    if (deps.onOperation) {
      const operation = operationOf(req.method, rest, route);
      res.once("finish", () => {
        deps.onOperation?.({ source, ...operation, status: res.statusCode });
      });
    }
    const done = (err?: unknown) => {
      if (err !== undefined && err !== null) return onError(err, req, res, next);
      // A handler that passed the request on: nothing here answers it.
      sendScimError(res, 404, "No such SCIM endpoint");
    };
    const run = (chain: RequestHandler) => {
      try {
        chain(req, res, done);
      } catch (err) {
        done(err);
      }
    };
    switch (route.kind) {
      case "resource":
        return run(chainOf(route));
      case "root":
        return run(rootChains[route.action]);
      case "discovery":
        return run((rq, rs) => discovery(rq, rs, source, route));
      case "notAllowed": {
        const refuse: RequestHandler = (rq, rs) => refuseMethod(rq, rs, route);
        return run(route.open ? refuse : guarded(refuse));
      }
      case "notImplemented":
        return run(notImplemented);
      case "badPath":
        return run(badPath);
      default:
        return run(notFound);
    }
  };
}

function refuseMethod(req: Request, res: Response, route: Extract<ScimRoute, { kind: "notAllowed" }>): void {
  res.setHeader("Allow", route.allow);
  throw new MethodNotAllowedError(
    route.open ? "Discovery endpoints are read-only" : `${req.method} is not supported here`,
  );
}

/**
 * Discovery (RFC 7644 §4): ServiceProviderConfig, ResourceTypes, Schemas; GET only. Query
 * parameters are ignored, but a filter is refused with 403, as §4 asks ("SHOULD respond with HTTP
 * status 403"), so that a client does not take the answer for the filter's matches.
 */
function discovery(
  req: Request,
  res: Response,
  source: string,
  route: Extract<ScimRoute, { kind: "discovery" }>,
): void {
  const filter = listParam(req.query as Record<string, unknown>, "filter");
  if (filter !== undefined && filter !== "") {
    throw new ForbiddenError("Discovery endpoints take no filter (RFC 7644 §4)");
  }
  const base = scimBaseUrl(req, source);
  if (route.endpoint === "ServiceProviderConfig") {
    sendScim(res, 200, serviceProviderConfig(base));
    return;
  }
  const list = (route.endpoint === "Schemas" ? schemas(base) : resourceTypes(base)) as {
    Resources?: JsonObject[];
  };
  if (route.id === undefined) {
    sendScim(res, 200, list as JsonObject);
    return;
  }
  const found =
    route.endpoint === "Schemas"
      ? list.Resources?.find((r) => r.id === route.id)
      : list.Resources?.find((r) => r.id === route.id || r.name === route.id);
  if (!found) {
    throw new NotFoundError(
      route.endpoint === "Schemas" ? `No schema ${route.id}` : `No resource type ${route.id}`,
    );
  }
  sendScim(res, 200, found);
}
