import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { httpMetricsMiddleware } from "../../../routes/middleware/http-metrics.js";
import { createMetricsRouter } from "../../../routes/middleware/metrics-router.js";
import { bridgeMetrics, recordScimOperation } from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";

function buildApp() {
  const registry = createMetricsRegistry();
  const app = express();
  app.use(httpMetricsMiddleware(registry));
  app.use(createMetricsRouter(registry));
  const scim = express.Router({ mergeParams: true });
  scim.get("/Users/:id", (req, res) => {
    recordScimOperation(registry, {
      source: String((req.params as Record<string, string>).source),
      resource: "Users",
      operation: "get",
      status: 200,
    });
    res.json({ id: req.params.id });
  });
  scim.delete("/Users/:id", (_req, res) => {
    res.status(404).json({ status: "404" });
  });
  app.use("/scim/v2/:source", scim);
  // A router mounted without mergeParams: the mount path keeps its literal value.
  const admin = express.Router();
  admin.get("/status", (_req, res) => {
    res.json({ idle: true });
  });
  app.use("/admin/v1", admin);
  return { app, registry };
}

describe("HTTP metrics", () => {
  it("labels requests by route template, never by raw ids", async () => {
    const { app } = buildApp();
    await request(app).get("/scim/v2/okta/Users/8f7a1c").expect(200);
    await request(app).get("/scim/v2/okta/Users/b2e9d0").expect(200);
    await request(app).delete("/scim/v2/entra/Users/b2e9d0").expect(404);
    await request(app).get("/admin/v1/status").expect(200);
    await request(app).get("/no/such/path/42").expect(404);
    const text = (await request(app).get("/metrics").expect(200)).text;
    expect(text).toContain(
      'http_requests_total{method="GET",route="/scim/v2/:source/Users/:id",status="200"} 2',
    );
    expect(text).toContain(
      'http_requests_total{method="DELETE",route="/scim/v2/:source/Users/:id",status="404"} 1',
    );
    expect(text).toContain('http_requests_total{method="GET",route="/admin/v1/status",status="200"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/scim\/v2\/:source\/Users\/:id"\} 2/,
    );
    expect(text).not.toMatch(/8f7a1c|b2e9d0|\/no\/such/);
  });

  it("serves the process's own registry in Prometheus format, with SCIM operations by source", async () => {
    const { app } = buildApp();
    await request(app).get("/scim/v2/okta/Users/1").expect(200);
    const res = await request(app).get("/metrics").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain(
      'scim_operations_total{source="okta",resource="Users",operation="get",status="200"} 1',
    );
    expect(res.text).toContain("process_cpu_user_seconds_total");
    expect(res.text).toContain("# TYPE queue_jobs gauge");
    expect(res.text).toContain("# TYPE dead_letters_total counter");
  });

  it("two apps in one process keep separate registries", async () => {
    const a = buildApp();
    const b = buildApp();
    await request(a.app).get("/scim/v2/okta/Users/1").expect(200);
    const text = (await request(b.app).get("/metrics").expect(200)).text;
    expect(text).not.toContain('route="/scim/v2/:source/Users/:id"');
    expect(bridgeMetrics(a.registry)).toBe(bridgeMetrics(a.registry));
  });
});
