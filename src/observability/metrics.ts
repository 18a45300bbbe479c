import { Registry, collectDefaultMetrics } from "prom-client";

/**
 * The process's own Prometheus registry (never prom-client's global one, so that tests can build
 * several apps in one process). Modules receive it and register their metrics on it.
 */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

export type { Registry };
