import express, { type Express, type RequestHandler, type Router } from "express";
import type { Logger } from "../src/observability/logger.js";
import { series } from "./middleware/series.js";
import { type ScimRouterDeps, createScimRouter } from "./scim/scim-router.js";

/**
 * Everything the HTTP side is made of. The composition root (src/bridge.ts) builds the parts and
 * passes them in; this factory only orders them. It never listens: tests use supertest on it.
 */
export interface AppParts {
  logger: Logger;
  scim?: ScimRouterDeps;
  /** Runs first on every request: security headers, request ids and logging, HTTP metrics. */
  middleware?: RequestHandler[];
  /** Mounted at the root: /healthz, /readyz. */
  health?: Router;
  /** Mounted at the root: /metrics. */
  metrics?: Router;
  /** Mounted at /hooks. */
  hooks?: Router;
  /** Mounted at /admin/v1. */
  admin?: Router;
  /** Mounted at /admin/queues (Bull Board). */
  queues?: Router;
  /** express's "trust proxy" (config server.trustProxy); default false. */
  trustProxy?: boolean | number | string;
}

export function createApp(parts: AppParts): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.set("trust proxy", parts.trustProxy ?? false);
  if (parts.middleware?.length) app.use(series(parts.middleware));
  // The SCIM intake first: it carries the traffic, and no other router's paths overlap it.
  if (parts.scim) app.use(createScimRouter(parts.scim));
  if (parts.health) app.use(parts.health);
  if (parts.metrics) app.use(parts.metrics);
  if (parts.hooks) app.use("/hooks", parts.hooks);
  if (parts.admin) app.use("/admin/v1", parts.admin);
  if (parts.queues) app.use("/admin/queues", parts.queues);
  app.use((_req, res) => {
    res.status(404).json({ error: { code: "not_found", message: "No such route" } });
  });
  app.use(((err, req, res, _next) => {
    const status =
      typeof err?.status === "number" && err.status >= 400 && err.status < 600 ? err.status : 500;
    // The request's id (echoed in x-request-id) leads an operator from a 5xx to its line.
    if (status >= 500) parts.logger.error({ err, reqId: (req as { id?: unknown }).id }, "unhandled error");
    res.status(status).json({
      error: {
        code: err?.code ?? "internal",
        message: status >= 500 ? "Internal error" : String(err?.message),
      },
    });
  }) as express.ErrorRequestHandler);
  return app;
}
