import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createMetricsRouter } from "../../../routes/middleware/metrics-router.js";
import { bridgeMetrics } from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";

function app(options?: Parameters<typeof createMetricsRouter>[1]) {
  const registry = createMetricsRegistry({ defaultMetrics: false });
  bridgeMetrics(registry).jobs.inc({ queue: "sync", outcome: "completed" });
  return express().use(createMetricsRouter(registry, options));
}

describe("GET /metrics and where its text comes from", () => {
  it("answers the process's own registry by default", async () => {
    const res = await request(app()).get("/metrics").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.text).toContain('jobs_total{queue="sync",outcome="completed"} 1');
  });

  it("answers the text of the source it is given (a cluster worker: the primary's aggregate)", async () => {
    const text = async () => '# HELP jobs_total x\n# TYPE jobs_total counter\njobs_total{queue="sync"} 5\n';
    const res = await request(app({ text })).get("/metrics").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.text).toBe(await text());
  });

  it("answers 503 in plain text when the source fails or times out", async () => {
    const text = async () => {
      throw new Error("the cluster primary did not answer within 6000 ms");
    };
    const res = await request(app({ text })).get("/metrics").expect(503);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.text).toBe("metrics unavailable: the cluster primary did not answer within 6000 ms\n");
  });
});
