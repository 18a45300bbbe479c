import express, { type Request, type RequestHandler, type Router } from "express";
import { MethodNotAllowedError, NotFoundError } from "../../src/errors.js";
import { resourceTypes, schemas, serviceProviderConfig } from "../../src/scim/discovery.js";
import type { JsonObject } from "../../src/scim/scim-types.js";
import { createGroupHandlers } from "./group-handlers.js";
import { type ResourceHandlers, type ScimRouterDeps, sendScim } from "./scim-http.js";
import { series } from "../middleware/series.js";
import { scimAuthentication } from "./scim-auth.js";
import { scimJsonBody } from "./scim-body.js";
import { scimErrorHandler, sendScimError } from "./scim-errors.js";
import { scimBaseUrl } from "./scim-render.js";
import { createUserHandlers } from "./user-handlers.js";

export type { ResourceHandlers, ScimRouterDeps };

/** Names a SCIM request for metrics: resource and operation, never ids. */
export function operationOf(method: string, path: string): { resource: string; operation: string } {
  const [, resource = "unknown", rest] = /^\/([^/]+)(\/.*)?$/.exec(path) ?? [];
  if (rest === "/.search") return { resource, operation: "list" };
  const withId = rest !== undefined && rest !== "/";
  const operation =
    { GET: withId ? "get" : "list", POST: "create", PUT: "replace", PATCH: "patch", DELETE: "delete" }[
      method
    ] ?? method.toLowerCase();
  return { resource, operation };
}

/** The discovery endpoints' paths (routing is case-insensitive, as express's is). */
const DISCOVERY_PATH = /^\/(?:ServiceProviderConfig|ResourceTypes|Schemas)(?:\/|$)/i;

const methodNotAllowed: RequestHandler = (_req, res) => {
  res.setHeader("Allow", "GET");
  throw new MethodNotAllowedError("Discovery endpoints are read-only");
};

/**
 * The SCIM 2.0 service provider of one source, mounted at `/scim/v2/:source` (RFC 7644).
 * Discovery answers without a body being read; every other route needs the source's bearer token.
 */
export function createScimRouter(deps: ScimRouterDeps): Router {
  const { config, logger } = deps;
  const router = express.Router({ mergeParams: true });
  const body = scimJsonBody(config.server.bodyLimit);
  const source = (req: Request): string => String(req.params.source);

  // Discovery (RFC 7644 §4): readable without a token; write methods answer 405 before any body is
  // read. Its own router, entered only for its paths (below): every other request passes one test
  // instead of six route layers.
  const discovery = express.Router({ mergeParams: true });
  discovery.get("/ServiceProviderConfig", (req, res) =>
    sendScim(res, 200, serviceProviderConfig(scimBaseUrl(req, source(req)))),
  );
  discovery.get("/ResourceTypes", (req, res) =>
    sendScim(res, 200, resourceTypes(scimBaseUrl(req, source(req)))),
  );
  discovery.get("/ResourceTypes/:name", (req, res) => {
    const list = resourceTypes(scimBaseUrl(req, source(req))) as { Resources?: JsonObject[] };
    const found = list.Resources?.find((r) => r.id === req.params.name || r.name === req.params.name);
    if (!found) throw new NotFoundError(`No resource type ${req.params.name}`);
    sendScim(res, 200, found);
  });
  discovery.get("/Schemas", (req, res) => sendScim(res, 200, schemas(scimBaseUrl(req, source(req)))));
  discovery.get("/Schemas/:id", (req, res) => {
    const list = schemas(scimBaseUrl(req, source(req))) as { Resources?: JsonObject[] };
    const found = list.Resources?.find((r) => r.id === req.params.id);
    if (!found) throw new NotFoundError(`No schema ${req.params.id}`);
    sendScim(res, 200, found);
  });
  discovery.all(
    ["/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/:name", "/Schemas", "/Schemas/:id"],
    methodNotAllowed,
  );
  // One layer for what every request needs first: the source must exist, the operation is counted
  // when answered, and discovery requests go to their router.
  router.use((req, res, next) => {
    if (!Object.hasOwn(config.sources, source(req))) return sendScimError(res, 404, "No such SCIM endpoint");
    if (deps.onOperation) {
      // Named now: handlers and routers may rewrite req.url before the answer is finished.
      const operation = operationOf(req.method, req.path);
      res.once("finish", () => {
        deps.onOperation?.({ source: source(req), ...operation, status: res.statusCode });
      });
    }
    if (DISCOVERY_PATH.test(req.path)) return discovery(req, res, next);
    next();
  });

  router.use(series([scimAuthentication(config), ...(deps.beforeHandlers ?? [])]));

  const users = createUserHandlers(deps);
  router.post("/Users/.search", body, users.search);
  router.route("/Users").get(users.list).post(body, users.create);
  router
    .route("/Users/:id")
    .get(users.get)
    .put(body, users.replace)
    .patch(body, users.patch)
    .delete(users.remove);

  const groups = createGroupHandlers(deps);
  router.post("/Groups/.search", body, groups.search);
  router.route("/Groups").get(groups.list).post(body, groups.create);
  router
    .route("/Groups/:id")
    .get(groups.get)
    .put(body, groups.replace)
    .patch(body, groups.patch)
    .delete(groups.remove);

  router.all(["/Bulk", "/Me"], (_req, res) =>
    sendScimError(res, 501, "Not implemented by this service provider"),
  );
  router.all(["/Users/.search", "/Groups/.search"], (req, res) => {
    res.setHeader("Allow", "POST");
    throw new MethodNotAllowedError(`${req.method} is not supported here`);
  });
  router.all(["/Users", "/Groups"], (req, res) => {
    res.setHeader("Allow", "GET, POST");
    throw new MethodNotAllowedError(`${req.method} is not supported here`);
  });
  router.all(["/Users/:id", "/Groups/:id"], (req, res) => {
    res.setHeader("Allow", "GET, PUT, PATCH, DELETE");
    throw new MethodNotAllowedError(`${req.method} is not supported here`);
  });
  router.use((_req, res) => sendScimError(res, 404, "No such SCIM endpoint"));
  router.use(scimErrorHandler(logger));
  return router;
}
