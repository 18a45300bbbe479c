import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import {
  bridgeMetrics,
  setDeadLetterReader,
  setQueueDepthReader,
} from "../../../src/observability/bridge-metrics.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { setScrapeRead } from "../../../src/observability/scrape-reads.js";

const never = () => new Promise<never>(() => {});

describe("scrape-time Redis reads are bounded", () => {
  it("a read that never answers does not hold the scrape: the other metrics are served, the flag is 0", async () => {
    const registry = createMetricsRegistry();
    bridgeMetrics(registry).jobs.inc({ queue: "sync", outcome: "completed" });
    let depth: () => Promise<Record<string, Record<string, number>>> = async () => ({ sync: { waiting: 3 } });
    let depthCalls = 0;
    const reader = () => {
      depthCalls++;
      return depth();
    };
    setQueueDepthReader(registry, reader);
    setDeadLetterReader(registry, async () => ({ okta: 1 }));
    // The same read again, with a shorter bound than the default for the test.
    setScrapeRead(registry, "queue_jobs", reader, { timeoutMs: 200 });

    let text = await registry.metrics();
    expect(text).toMatch(/^metrics_redis_read_ok 1$/m);
    expect(text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 3$/m);

    depth = never;
    depthCalls = 0;
    const started = Date.now();
    text = await registry.metrics();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(text).toMatch(/^metrics_redis_read_ok 0$/m);
    expect(text).toMatch(/^jobs_total\{queue="sync",outcome="completed"\} 1$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
    // The last values stay; the dead-letter read, which answered, is fresh.
    expect(text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 3$/m);
    expect(text).toMatch(/^dead_letters\{source="okta"\} 1$/m);

    // The next scrape joins the pending read instead of queueing another command.
    await registry.metrics();
    expect(depthCalls).toBe(1);
  });

  it("a failing read sets the flag to 0 and the next successful one back to 1", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    let fail = true;
    syncMetrics(registry, async () => {
      if (fail) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      return { sync: { waiting: 2 } };
    });
    expect(await registry.metrics()).toMatch(/^metrics_redis_read_ok 0$/m);
    fail = false;
    const text = await registry.metrics();
    expect(text).toMatch(/^metrics_redis_read_ok 1$/m);
    expect(text).toMatch(/^queue_depth\{queue="sync",state="waiting"\} 2$/m);
  });

  it("a cluster reports 0 when any process could not read (aggregator min)", async () => {
    const process = async (ok: boolean) => {
      const registry = createMetricsRegistry({ defaultMetrics: false });
      setQueueDepthReader(registry, async () => {
        if (!ok) throw new Error("down");
        return { sync: { waiting: 1 } };
      });
      return registry.getMetricsAsJSON();
    };
    const text = await AggregatorRegistry.aggregate([await process(true), await process(false)]).metrics();
    expect(text).toMatch(/^metrics_redis_read_ok 0$/m);
    const fine = await AggregatorRegistry.aggregate([await process(true), await process(true)]).metrics();
    expect(fine).toMatch(/^metrics_redis_read_ok 1$/m);
  });
});
