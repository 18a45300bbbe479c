/**
 * The platform client's Prometheus metrics. The names are a contract for dashboards.
 * Several clients may share one registry: a metric already registered is reused.
 */
import { Counter, Histogram, type Registry } from "prom-client";

export interface PlatformMetrics {
  requests: Counter<"operation" | "status">;
  duration: Histogram<"operation">;
  retries: Counter<"operation" | "reason">;
  rateLimited: Counter<"operation">;
  failures: Counter<"operation" | "class">;
}

export function createPlatformMetrics(registry?: Registry): PlatformMetrics {
  const registers = registry === undefined ? [] : [registry];
  const reuse = <T>(name: string, make: () => T): T =>
    (registry?.getSingleMetric(name) as T | undefined) ?? make();
  return {
    requests: reuse(
      "platform_requests_total",
      () =>
        new Counter({
          name: "platform_requests_total",
          help: "Platform API calls made, by operation and HTTP status (timeout/network when none came)",
          labelNames: ["operation", "status"] as const,
          registers,
        }),
    ),
    duration: reuse(
      "platform_request_duration_seconds",
      () =>
        new Histogram({
          name: "platform_request_duration_seconds",
          help: "Duration of one platform API call (one attempt), in seconds",
          labelNames: ["operation"] as const,
          buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        }),
    ),
    retries: reuse(
      "platform_retries_total",
      () =>
        new Counter({
          name: "platform_retries_total",
          help: "Platform API calls retried, by operation and failure that caused the retry",
          labelNames: ["operation", "reason"] as const,
          registers,
        }),
    ),
    rateLimited: reuse(
      "platform_rate_limited_total",
      () =>
        new Counter({
          name: "platform_rate_limited_total",
          help: "Platform answers 429 (rate limited), by operation",
          labelNames: ["operation"] as const,
          registers,
        }),
    ),
    failures: reuse(
      "platform_failures_total",
      () =>
        new Counter({
          name: "platform_failures_total",
          help: "Platform operations that failed for good, by operation and class (transient|permanent)",
          labelNames: ["operation", "class"] as const,
          registers,
        }),
    ),
  };
}
