import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { scrapeRead, setScrapeRead } from "./scrape-reads.js";

/**
 * Every metric the bridge exports, registered once per registry. Modules call
 * `bridgeMetrics(registry)` and share the same instances; nothing registers on prom-client's global
 * registry. Label values are bounded: route templates (never raw ids), configured source ids,
 * queue names, operation names and failure classes. Platform calls are counted by the platform
 * client itself (src/platform/client/platform-metrics.ts: platform_requests_total, ...), and webhook
 * events by src/hooks/hook-metrics.ts. A metric of the same name already on the registry is reused.
 */
export interface BridgeMetrics {
  /** `http_requests_total{method,route,status}`: route is the template, e.g. /scim/v2/:source/Users/:id. */
  httpRequests: Counter<"method" | "route" | "status">;
  /** `http_request_duration_seconds{method,route}`. */
  httpRequestDuration: Histogram<"method" | "route">;
  /** `scim_operations_total{source,resource,operation,status}`: one per SCIM request answered. */
  scimOperations: Counter<"source" | "resource" | "operation" | "status">;
  /** `intake_rate_limited_total{source}`: requests answered 429 by the intake rate limit. */
  intakeRateLimited: Counter<"source">;
  /** `queue_jobs{queue,state}`: queue depth by state (waiting, active, delayed, failed, ...). */
  queueJobs: Gauge<"queue" | "state">;
  /** `job_duration_seconds{queue,outcome}`: outcome is completed | retried | dead_lettered. */
  jobDuration: Histogram<"queue" | "outcome">;
  /** `jobs_total{queue,outcome}`. */
  jobs: Counter<"queue" | "outcome">;
  /** `dead_letters_total{source,code}`: entities moved to the dead-letter list, by failure code. */
  deadLetters: Counter<"source" | "code">;
  /** `dead_letters{source}`: current size of the dead-letter list, read at scrape time (setDeadLetterReader). */
  deadLettersCurrent: Gauge<"source">;
  /** `late_writes`: platform writes that may still land late, read at scrape time (setLateWriteReader). */
  lateWrites: Gauge;
  /** `drift_found_total{source,kind}`: kind is a reconcile count name (missing, changed, orphans, ...). */
  driftFound: Counter<"source" | "kind">;
  /** `drift_repaired_total{source,kind}`. */
  driftRepaired: Counter<"source" | "kind">;
  /** `reconcile_runs_total{source,outcome}`: outcome is succeeded | failed | awaiting_confirmation | discarded. */
  reconcileRuns: Counter<"source" | "outcome">;
}

const cache = new WeakMap<Registry, BridgeMetrics>();

/** Reads the current job counts of every queue: `{queue: {state: count}}`. */
export type QueueDepthReader = () => Promise<Record<string, Record<string, number>>>;

/**
 * Makes every scrape of `registry` read the queue depths (e.g. BullMQ `queue.getJobCounts()` per
 * queue) into `queue_jobs{queue,state}`. The read is bounded (scrape-reads.ts): a failing or slow
 * read leaves the last values in place and sets `metrics_redis_read_ok` to 0.
 */
export function setQueueDepthReader(registry: Registry, reader: QueueDepthReader): void {
  bridgeMetrics(registry);
  setScrapeRead(registry, "queue_jobs", reader);
}

/** Reads the current number of dead letters of every source: `{source: count}`. */
export type DeadLetterReader = () => Promise<Record<string, number>>;

/**
 * Makes every scrape of `registry` read the size of each source's dead-letter list into
 * `dead_letters{source}`. Bounded like the queue depths: a failing or slow read leaves the last
 * values in place and sets `metrics_redis_read_ok` to 0.
 */
export function setDeadLetterReader(registry: Registry, reader: DeadLetterReader): void {
  bridgeMetrics(registry);
  setScrapeRead(registry, "dead_letters", reader);
}

/** Reads the number of platform writes that may still land late (late-write checks and marks to come). */
export type LateWriteReader = () => Promise<number>;

/**
 * Makes every scrape of `registry` read the late writes to come into `late_writes` (what holds
 * GET /status `idle` false with every queue empty: src/sync/late-writes.ts). Bounded like the
 * queue depths.
 */
export function setLateWriteReader(registry: Registry, reader: LateWriteReader): void {
  bridgeMetrics(registry);
  setScrapeRead(registry, "late_writes", reader);
}

/** A reconcile run's counts by kind (DriftCounts: missing, changed, ..., orphans). */
export type DriftKindCounts = Readonly<Record<string, number>>;

/**
 * Counts a run's differences in `drift_found_total{source,kind}` (when the run has counted them) or
 * `drift_repaired_total{source,kind}` (when its repairs are applied). Kinds counted 0 are skipped.
 */
export function recordDrift(
  registry: Registry,
  what: "found" | "repaired",
  source: string,
  counts: DriftKindCounts,
): void {
  const metrics = bridgeMetrics(registry);
  const counter = what === "found" ? metrics.driftFound : metrics.driftRepaired;
  for (const [kind, n] of Object.entries(counts)) if (n > 0) counter.inc({ source, kind }, n);
}

const RUN_OUTCOMES: Readonly<Record<string, string>> = {
  succeeded: "succeeded",
  failed: "failed",
  "awaiting-confirmation": "awaiting_confirmation",
  discarded: "discarded",
};

/**
 * Counts a reconciliation run that reached `state` in `reconcile_runs_total{source,outcome}`:
 * succeeded, failed, awaiting-confirmation (held by the guard; counted again once settled) or
 * discarded. Any other state (queued, running) is no outcome and is not counted.
 */
export function recordReconcileRun(registry: Registry, source: string, state: string): void {
  const outcome = RUN_OUTCOMES[state];
  if (outcome) bridgeMetrics(registry).reconcileRuns.inc({ source, outcome });
}

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The bridge's metrics on `registry`, created on first call and shared afterwards. */
export function bridgeMetrics(registry: Registry): BridgeMetrics {
  const existing = cache.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const reuse = <T>(name: string, make: () => T): T =>
    (registry.getSingleMetric(name) as T | undefined) ?? make();
  const metrics: BridgeMetrics = {
    httpRequests: reuse(
      "http_requests_total",
      () =>
        new Counter({
          name: "http_requests_total",
          help: "HTTP requests answered, by method, route template and status code.",
          labelNames: ["method", "route", "status"],
          registers,
        }),
    ),
    httpRequestDuration: reuse(
      "http_request_duration_seconds",
      () =>
        new Histogram({
          name: "http_request_duration_seconds",
          help: "HTTP request duration in seconds, by method and route template.",
          labelNames: ["method", "route"],
          buckets: HTTP_BUCKETS,
          registers,
        }),
    ),
    scimOperations: reuse(
      "scim_operations_total",
      () =>
        new Counter({
          name: "scim_operations_total",
          help: "SCIM operations answered, by source, resource type, operation and status code.",
          labelNames: ["source", "resource", "operation", "status"],
          registers,
        }),
    ),
    intakeRateLimited: reuse(
      "intake_rate_limited_total",
      () =>
        new Counter({
          name: "intake_rate_limited_total",
          help: "Intake requests refused with 429 by the per-source rate limit.",
          labelNames: ["source"],
          registers,
        }),
    ),
    queueJobs: reuse(
      "queue_jobs",
      () =>
        new Gauge({
          name: "queue_jobs",
          help: "Jobs in each queue by state.",
          labelNames: ["queue", "state"],
          registers,
          // Read from Redis: every process of a cluster reports the same depths, so the cluster's
          // aggregate (GET /metrics with server.processes > 1) takes one of them, not their sum.
          aggregator: "max",
          async collect() {
            // Redis unavailable or slow: no counts, the last known depths stay (metrics_redis_read_ok).
            const counts = await scrapeRead<Record<string, Record<string, number>>>(registry, "queue_jobs");
            if (!counts) return;
            for (const [queue, states] of Object.entries(counts))
              for (const [state, count] of Object.entries(states)) this.set({ queue, state }, count);
          },
        }),
    ),
    jobDuration: reuse(
      "job_duration_seconds",
      () =>
        new Histogram({
          name: "job_duration_seconds",
          help: "Job processing time in seconds, by queue and outcome.",
          labelNames: ["queue", "outcome"],
          buckets: JOB_BUCKETS,
          registers,
        }),
    ),
    jobs: reuse(
      "jobs_total",
      () =>
        new Counter({
          name: "jobs_total",
          help: "Jobs processed, by queue and outcome.",
          labelNames: ["queue", "outcome"],
          registers,
        }),
    ),
    deadLetters: reuse(
      "dead_letters_total",
      () =>
        new Counter({
          name: "dead_letters_total",
          help: "Entities moved to the dead-letter list, by source and failure code.",
          labelNames: ["source", "code"],
          registers,
        }),
    ),
    deadLettersCurrent: reuse(
      "dead_letters",
      () =>
        new Gauge({
          name: "dead_letters",
          help: "Entities currently in the dead-letter list, by source.",
          labelNames: ["source"],
          registers,
          // The size of a list in Redis, the same whichever process reads it: never summed.
          aggregator: "max",
          async collect() {
            // Redis unavailable or slow: no counts, the last known sizes stay (metrics_redis_read_ok).
            const counts = await scrapeRead<Record<string, number>>(registry, "dead_letters");
            if (!counts) return;
            // A source no longer read (a removed source whose last letter went) is dropped, not
            // left at its last size.
            this.reset();
            for (const [source, count] of Object.entries(counts)) this.set({ source }, count);
          },
        }),
    ),
    lateWrites: reuse(
      "late_writes",
      () =>
        new Gauge({
          name: "late_writes",
          help: "Platform writes that may still land late (marked on the wire, or waiting for their check): the bridge is not idle while any.",
          registers,
          // One set in Redis, the same whichever process reads it: never summed.
          aggregator: "max",
          async collect() {
            // Redis unavailable or slow: the last value stays (metrics_redis_read_ok).
            const count = await scrapeRead<number>(registry, "late_writes");
            if (count !== undefined) this.set(count);
          },
        }),
    ),
    driftFound: reuse(
      "drift_found_total",
      () =>
        new Counter({
          name: "drift_found_total",
          help: "Differences found by reconciliation, by source and kind.",
          labelNames: ["source", "kind"],
          registers,
        }),
    ),
    driftRepaired: reuse(
      "drift_repaired_total",
      () =>
        new Counter({
          name: "drift_repaired_total",
          help: "Differences repaired by reconciliation or resync, by source and kind.",
          labelNames: ["source", "kind"],
          registers,
        }),
    ),
    reconcileRuns: reuse(
      "reconcile_runs_total",
      () =>
        new Counter({
          name: "reconcile_runs_total",
          help: "Reconciliation runs that reached an outcome, by source and outcome.",
          labelNames: ["source", "outcome"],
          registers,
        }),
    ),
  };
  cache.set(registry, metrics);
  return metrics;
}

export interface ScimOperation {
  source: string;
  /** Users | Groups | Bulk | ServiceProviderConfig | Schemas | ResourceTypes | root; any other is counted as `other` */
  resource: string;
  /** list | get | create | replace | patch | delete | bulk */
  operation: string;
  /** The HTTP status code answered. */
  status: number;
}

/** The values of `scim_operations_total`'s `resource` label; anything else a client asks for is `other`. */
const SCIM_RESOURCES = [
  "Users",
  "Groups",
  "Bulk",
  "ServiceProviderConfig",
  "Schemas",
  "ResourceTypes",
  "root",
];

/**
 * The `resource` label of a SCIM request: its resource type in its RFC 7644 spelling, or `other`.
 * The path segment is the client's: `/scim/v2/okta/ada@example.com` must not become a series named
 * after a person, nor every scanned path a series of its own.
 */
export function scimResourceLabel(resource: string): string {
  const lower = resource.toLowerCase();
  return SCIM_RESOURCES.find((known) => known.toLowerCase() === lower) ?? "other";
}

/** Counts one SCIM operation in `scim_operations_total`. Called by the SCIM routes once per answer. */
export function recordScimOperation(registry: Registry, op: ScimOperation): void {
  bridgeMetrics(registry).scimOperations.inc({
    source: op.source,
    resource: scimResourceLabel(op.resource),
    operation: op.operation,
    status: String(op.status),
  });
}
