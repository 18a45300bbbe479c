import express, { type ErrorRequestHandler, type Router } from "express";
import { ZodError } from "zod";
import { type AdminPrincipals, allows } from "../../src/admin/admin-principals.js";
import type { AdminService } from "../../src/admin/admin-service.js";
import type { AuditLog } from "../../src/admin/audit-log.js";
import { isRedisUnavailable } from "../../src/directory/redis-failure.js";
import { isAppError } from "../../src/errors.js";
import type { Logger } from "../../src/observability/logger.js";
import { setFallbackRouteTemplate } from "../middleware/route-template.js";
import { adminAuthentication, principalOf } from "./admin-auth.js";
import { ADMIN_ROUTES } from "./admin-routes.js";
import { buildOpenApi } from "./openapi.js";

export interface AdminRouterDeps {
  service: AdminService;
  principals: AdminPrincipals;
  audit: AuditLog;
  logger: Logger;
  /** express.json limit, e.g. config.server.bodyLimit. */
  bodyLimit?: string;
  version?: string;
}

function sendError(
  res: express.Response,
  status: number,
  code: string,
  message: string,
  details?: unknown,
): void {
  res.status(status).json({ error: { code, message, ...(details === undefined ? {} : { details }) } });
}

/**
 * The admin API, mounted by the app at /admin/v1. Every route needs an admin bearer token; the
 * route table says which role. Errors are JSON `{"error": {"code", "message"}}`, mapped here only.
 */
export function createAdminRouter(deps: AdminRouterDeps): Router {
  const router = express.Router();
  const openapi = buildOpenApi(ADMIN_ROUTES, deps.version ?? "1");
  // A request answered before a route matched it (401, a body that is not JSON, no such admin
  // route) is counted in the HTTP metrics as `/admin/v1`, not as an `unmatched` scan.
  router.use((req, _res, next) => {
    setFallbackRouteTemplate(req, req.baseUrl);
    next();
  });
  // Every body is read as JSON, whatever its Content-Type: `curl -d '{"dryRun":true}'` sends a form
  // type, and a body skipped for its type would read as `{}`, whose defaults (a real run, every
  // dead letter, a whole source) do more than asked. A body that is not JSON is a 400.
  router.use(express.json({ limit: deps.bodyLimit ?? "1mb", type: () => true }));
  // The description holds no data: served without a token, so tools can fetch it.
  router.get("/openapi.json", (_req, res) => {
    res.json(openapi);
  });
  router.use(adminAuthentication(deps.principals));
  for (const route of ADMIN_ROUTES) {
    router[route.method](route.path, async (req, res, next) => {
      try {
        const principal = principalOf(res);
        if (!allows(principal.role, route.role)) {
          await deps.audit.record({
            actor: principal.name,
            role: principal.role,
            action: route.operationId,
            target: req.path,
            outcome: "refused",
          });
          return sendError(res, 403, "forbidden", `This action needs the ${route.role} role`);
        }
        // A write's parameters go in the body. One in the query string (`?dryRun=true`,
        // `?users=<id>`) would be ignored and the body's defaults (a real run, a whole source,
        // every dead letter) would do more than asked: refused, as a body that is not JSON is.
        const queryNames = Object.keys(req.query as object);
        if (route.method !== "get" && !route.query && queryNames.length > 0) {
          return sendError(
            res,
            400,
            "invalid_request",
            `This route takes no query parameters (got ${queryNames.join(", ")}); send them in the JSON body`,
          );
        }
        const body = route.body ? route.body.parse(req.body ?? {}) : undefined;
        const query = route.query ? route.query.parse(req.query) : undefined;
        const result = await route.handle({ req, res, body, query, service: deps.service });
        res.status(route.status ?? 200).json(result);
      } catch (err) {
        next(err);
      }
    });
  }
  // A known path asked with a method it does not serve: 405 with the methods it does (RFC 9110 §15.5.6).
  const methodsByPath = new Map<string, string[]>([["/openapi.json", ["GET", "HEAD"]]]);
  for (const route of ADMIN_ROUTES) {
    const methods = methodsByPath.get(route.path) ?? [];
    methods.push(route.method.toUpperCase());
    if (route.method === "get") methods.push("HEAD");
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    router.all(path, (_req, res) => {
      res.setHeader("Allow", methods.join(", "));
      sendError(res, 405, "method_not_allowed", `This admin route serves ${methods.join(", ")} only`);
    });
  }
  router.use((_req, res) => sendError(res, 404, "not_found", "No such admin route"));
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    // The request's id (echoed in x-request-id) leads an operator from a 500 to its line.
    const reqId = (req as { id?: unknown }).id;
    if (err instanceof ZodError) {
      return sendError(
        res,
        400,
        "invalid_request",
        "The request does not match the schema",
        err.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
      );
    }
    if (isAppError(err)) {
      if (err.status >= 500) deps.logger.error({ err, reqId }, "admin request failed");
      return sendError(res, err.status, err.code, err.message);
    }
    if (isRedisUnavailable(err)) {
      res.setHeader("Retry-After", "1");
      return sendError(res, 503, "unavailable", "Redis is unavailable; retry when /readyz answers 200");
    }
    if (err?.type === "entity.too.large") {
      // As the SCIM and webhook routes answer it: the code says what is wrong, the message the limit.
      return sendError(
        res,
        413,
        "payload_too_large",
        `Request body larger than ${err.limit} bytes (server.bodyLimit)`,
      );
    }
    const status =
      typeof err?.status === "number" && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) {
      deps.logger.error({ err, reqId }, "admin request failed");
      return sendError(res, 500, "internal", "Internal error");
    }
    return sendError(
      res,
      status,
      err.type === "entity.parse.failed" ? "invalid_json" : "bad_request",
      String(err.message),
    );
  };
  router.use(onError);
  return router;
}
