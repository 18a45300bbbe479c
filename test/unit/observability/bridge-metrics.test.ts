import { Counter } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  bridgeMetrics,
  recordScimOperation,
  scimResourceLabel,
  setQueueDepthReader,
} from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";

describe("bridgeMetrics", () => {
  it("registers each metric once per registry and shares the instances", () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    expect(bridgeMetrics(registry)).toBe(bridgeMetrics(registry));
    const names = registry.getMetricsAsArray().map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "http_requests_total",
        "http_request_duration_seconds",
        "scim_operations_total",
        "queue_jobs",
        "job_duration_seconds",
        "jobs_total",
        "dead_letters_total",
        "dead_letters",
        "drift_found_total",
        "drift_repaired_total",
      ]),
    );
  });

  it("reuses a metric another module registered first instead of throwing", () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const first = new Counter({
      name: "jobs_total",
      help: "x",
      labelNames: ["queue", "outcome"],
      registers: [registry],
    });
    expect(bridgeMetrics(registry).jobs).toBe(first);
  });

  it("counts SCIM operations by source, resource, operation and status", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    recordScimOperation(registry, { source: "okta", resource: "Users", operation: "create", status: 201 });
    recordScimOperation(registry, { source: "okta", resource: "Users", operation: "create", status: 201 });
    const text = await registry.getSingleMetricAsString("scim_operations_total");
    expect(text).toContain(
      'scim_operations_total{source="okta",resource="Users",operation="create",status="201"} 2',
    );
  });

  it("labels a SCIM request's resource by its RFC 7644 name, and anything else a client asked for as other", () => {
    expect(scimResourceLabel("Users")).toBe("Users");
    expect(scimResourceLabel("users")).toBe("Users");
    expect(scimResourceLabel("serviceproviderconfig")).toBe("ServiceProviderConfig");
    expect(scimResourceLabel("root")).toBe("root");
    expect(scimResourceLabel("ada.lovelace@example.com")).toBe("other");
    expect(scimResourceLabel("unknown")).toBe("other");
  });

  it("reads queue depths at scrape time and keeps the last values when the read fails", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    let fail = false;
    let waiting = 3;
    setQueueDepthReader(registry, async () => {
      if (fail) throw new Error("redis down");
      return { sync: { waiting, active: 1 } };
    });
    expect(await registry.getSingleMetricAsString("queue_jobs")).toContain(
      'queue_jobs{queue="sync",state="waiting"} 3',
    );
    waiting = 7;
    expect(await registry.getSingleMetricAsString("queue_jobs")).toContain(
      'queue_jobs{queue="sync",state="waiting"} 7',
    );
    fail = true;
    waiting = 9;
    expect(await registry.getSingleMetricAsString("queue_jobs")).toContain(
      'queue_jobs{queue="sync",state="waiting"} 7',
    );
  });
});
