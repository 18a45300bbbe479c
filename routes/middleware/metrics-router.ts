import { Router } from "express";
import type { Registry } from "prom-client";

/**
 * `GET /metrics`: the process's own registry in the Prometheus text format. Mount it at the root;
 * protect it at the network level (NetworkPolicy, or the admin port) rather than with a token, as
 * scrapers expect.
 */
export function createMetricsRouter(registry: Registry): Router {
  const router = Router();
  router.get("/metrics", async (_req, res, next) => {
    try {
      const body = await registry.metrics();
      res.setHeader("Content-Type", registry.contentType);
      res.setHeader("Cache-Control", "no-store");
      res.send(body);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
