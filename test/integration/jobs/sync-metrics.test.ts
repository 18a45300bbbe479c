import { describe, expect, it } from "vitest";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import { bridgeMetrics } from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";

describe("sync metrics", () => {
  it("counts dead letters by source and code, and reads queue depth on scrape", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const m = syncMetrics(registry, async () => ({ sync: { waiting: 3, active: 1 } }));
    m.countDeadLetter({ source: "okta", code: "ownership_conflict", kind: "user" });
    m.jobs.inc({ kind: "user", outcome: "synced" });
    const text = await registry.metrics();
    expect(text).toContain('dead_letters_total{source="okta",code="ownership_conflict"} 1');
    expect(text).toContain('queue_depth{queue="sync",state="waiting"} 3');
    expect(text).toContain('sync_jobs_total{kind="user",outcome="synced"} 1');
    // Registering twice on one registry reuses the metrics.
    expect(() => syncMetrics(registry, async () => ({}))).not.toThrow();
  });

  it("still counts when dead_letters_total was registered first with other labels", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    bridgeMetrics(registry);
    const m = syncMetrics(registry, async () => ({}));
    expect(() => m.countDeadLetter({ source: "okta", code: "x", kind: "group" })).not.toThrow();
    expect(await registry.metrics()).toMatch(/dead_letters_total\{[^}]*source="okta"[^}]*\} 1/);
  });
});
