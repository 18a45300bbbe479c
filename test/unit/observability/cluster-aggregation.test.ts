import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { bridgeMetrics, setQueueDepthReader } from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { syncMetrics } from "../../../jobs/sync-metrics.js";

/** One bridge process's registry, as a cluster worker sends it to the primary. */
async function processMetrics(requests: number, waiting: number) {
  const registry = createMetricsRegistry();
  const metrics = bridgeMetrics(registry);
  metrics.httpRequests.inc({ method: "POST", route: "/scim/v2/:source/Users", status: "201" }, requests);
  metrics.deadLettersCurrent.set({ source: "okta" }, 2);
  setQueueDepthReader(registry, async () => ({ sync: { waiting } }));
  return registry.getMetricsAsJSON();
}

describe("metrics aggregated across the processes of a cluster", () => {
  it("sums counters but takes one value of the gauges read from Redis", async () => {
    // Two processes read the same queue at nearly the same time; a scrape may see one a job ahead.
    const aggregated = AggregatorRegistry.aggregate([
      await processMetrics(30, 7),
      await processMetrics(12, 8),
    ]);
    const text = await aggregated.metrics();
    expect(text).toContain(
      'http_requests_total{method="POST",route="/scim/v2/:source/Users",status="201"} 42',
    );
    expect(text).toContain('queue_jobs{queue="sync",state="waiting"} 8');
    expect(text).toContain('dead_letters{source="okta"} 2');
    // Node's default metrics keep prom-client's own aggregators (summed, averaged, or first).
    expect(text).toContain("nodejs_version_info");
  });

  it("takes one value of the workers' queue_depth gauge, which is read from Redis too", async () => {
    const worker = async (waiting: number) => {
      const registry = createMetricsRegistry();
      syncMetrics(registry, async () => ({ sync: { waiting } }));
      return registry.getMetricsAsJSON();
    };
    const text = await AggregatorRegistry.aggregate([await worker(5), await worker(5)]).metrics();
    expect(text).toContain('queue_depth{queue="sync",state="waiting"} 5');
  });
});
