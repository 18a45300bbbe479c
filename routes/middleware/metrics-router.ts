import { Router } from "express";
import type { Registry } from "prom-client";

export interface MetricsRouterOptions {
  /**
   * Where the answer's text comes from instead of `registry` (same Prometheus text format): a
   * cluster worker asks its primary for every process's metrics, aggregated. When it fails (or
   * times out), the scrape is answered 503 with a plain-text reason and the next scrape tries again.
   */
  text?: () => Promise<string>;
}

/**
 * `GET /metrics`: the process's own registry in the Prometheus text format (or, with
 * `options.text`, the text it gives). Mount it at the root; protect it at the network level
 * (NetworkPolicy, or the admin port) rather than with a token, as scrapers expect.
 */
export function createMetricsRouter(registry: Registry, options: MetricsRouterOptions = {}): Router {
  const router = Router();
  const { text } = options;
  router.get("/metrics", async (_req, res, next) => {
    if (text) {
      let body: string;
      try {
        body = await text();
      } catch (err) {
        res.status(503).setHeader("Cache-Control", "no-store");
        res.type("text/plain").send(`metrics unavailable: ${(err as Error).message}\n`);
        return;
      }
      res.setHeader("Content-Type", registry.contentType);
      res.setHeader("Cache-Control", "no-store");
      res.send(body);
      return;
    }
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
