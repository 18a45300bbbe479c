import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { scrapeRead, setScrapeRead } from "../src/observability/scrape-reads.js";

export interface SyncMetrics {
  jobs: Counter<"kind" | "outcome">;
  duration: Histogram<"kind">;
  /** Counts one dead letter in `dead_letters_total{source,code}`. */
  countDeadLetter(labels: { source: string; code: string; kind: string }): void;
  queueDepth: Gauge<"queue" | "state">;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** The sync pipeline's metrics, registered once per registry. */
export function syncMetrics(
  registry: Registry,
  collectDepth: () => Promise<Record<string, Record<string, number>>>,
): SyncMetrics {
  const jobs = reuse(
    registry,
    "sync_jobs_total",
    () =>
      new Counter({
        name: "sync_jobs_total",
        help: "Sync jobs by entity kind and outcome (synced, lifecycle, purged, retry, rate_limited, dead); kind lifecycle, outcome retry: a bulk call of the lifecycle flush that failed",
        labelNames: ["kind", "outcome"] as const,
        registers: [registry],
      }),
  );
  const duration = reuse(
    registry,
    "sync_job_duration_seconds",
    () =>
      new Histogram({
        name: "sync_job_duration_seconds",
        help: "Time to sync one entity",
        labelNames: ["kind"] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
  );
  const deadLetters = reuse(
    registry,
    "dead_letters_total",
    () =>
      new Counter({
        name: "dead_letters_total",
        help: "Entities whose sync failed for good, by source and reason code",
        labelNames: ["source", "code"] as const,
        registers: [registry],
      }),
  );
  // Bounded (src/observability/scrape-reads.ts): the workers' connection queues commands while
  // Redis is away, and a scrape must not wait for it.
  setScrapeRead(registry, "queue_depth", collectDepth);
  const queueDepth = reuse(
    registry,
    "queue_depth",
    () =>
      new Gauge({
        name: "queue_depth",
        help: "Jobs per queue and state (collected on scrape)",
        labelNames: ["queue", "state"] as const,
        registers: [registry],
        // Read from Redis: every process of a cluster reports the same depths, so the cluster's
        // aggregate (GET /metrics with server.processes > 1) takes one of them, not their sum.
        aggregator: "max",
        async collect() {
          // Redis unavailable or slow: no counts, the last values stay (metrics_redis_read_ok).
          const counts = await scrapeRead<Record<string, Record<string, number>>>(registry, "queue_depth");
          if (!counts) return;
          this.reset();
          for (const [queue, states] of Object.entries(counts)) {
            for (const [state, n] of Object.entries(states)) this.set({ queue, state }, n);
          }
        },
      }),
  );
  const countDeadLetter = (labels: { source: string; code: string; kind: string }) => {
    // Another module may have registered dead_letters_total first with other labels
    // ({source,kind}): count it with the labels it has rather than fail the dead-lettering.
    const names = (deadLetters as unknown as { labelNames?: string[] }).labelNames ?? ["source", "code"];
    const wanted: Record<string, string> = {};
    for (const name of names) if (name in labels) wanted[name] = labels[name as keyof typeof labels];
    try {
      (deadLetters as unknown as Counter<string>).inc(wanted);
    } catch {
      // never let a metric break the dead-letter path
    }
  };
  return { jobs, duration, countDeadLetter, queueDepth };
}
