import type { RequestHandler } from "express";
import type { Registry } from "prom-client";
import { bridgeMetrics } from "../../src/observability/bridge-metrics.js";
import { routeTemplate } from "./route-template.js";

/**
 * Records `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route}`
 * when each response finishes, labelled by route template. Mount it first, before every router.
 */
export function httpMetricsMiddleware(registry: Registry): RequestHandler {
  const metrics = bridgeMetrics(registry);
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const route = routeTemplate(req);
      const method = req.method;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ method, route, status: String(res.statusCode) });
      metrics.httpRequestDuration.observe({ method, route }, seconds);
    };
    res.once("finish", record);
    // A client that hangs up before the answer is counted with the status set so far.
    res.once("close", record);
    next();
  };
}
