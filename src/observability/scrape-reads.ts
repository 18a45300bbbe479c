import { Gauge, type Registry } from "prom-client";

/**
 * Reads from Redis made at scrape time (queue depths, dead-letter counts), bounded so that a Redis
 * outage never holds GET /metrics: every metric that does not come from Redis is still served.
 *
 * A scrape runs one round: every registered read at once, each given at most `SCRAPE_READ_TIMEOUT_MS`.
 * A read that fails or times out leaves its metric at its last value, and the round sets
 * `metrics_redis_read_ok` to 0 (1 when every read succeeded), so dashboards can tell stale values.
 * A read still pending (a client that queues commands while Redis is away) is joined by the next
 * scrape rather than started again, so an outage does not pile up commands; one pending for longer
 * than `STUCK_AFTER_MS` is given up and started afresh.
 */
export const SCRAPE_READ_TIMEOUT_MS = 1_500;
const STUCK_AFTER_MS = 30_000;

type Outcome = { ok: true; value: unknown } | { ok: false };

interface Read {
  read: () => Promise<unknown>;
  pending?: { promise: Promise<unknown>; since: number };
}

interface ScrapeReads {
  reads: Map<string, Read>;
  round?: Promise<Map<string, Outcome>>;
  timeoutMs: number;
}

const byRegistry = new WeakMap<Registry, ScrapeReads>();

function stateOf(registry: Registry): ScrapeReads {
  let state = byRegistry.get(registry);
  if (!state) {
    state = { reads: new Map(), timeoutMs: SCRAPE_READ_TIMEOUT_MS };
    byRegistry.set(registry, state);
  }
  return state;
}

/**
 * Registers (or replaces) the scrape-time Redis read `name` of `registry`, and the
 * `metrics_redis_read_ok` gauge with it. `timeoutMs` (tests) bounds every read of the registry.
 */
export function setScrapeRead(
  registry: Registry,
  name: string,
  read: () => Promise<unknown>,
  options: { timeoutMs?: number } = {},
): void {
  const state = stateOf(registry);
  if (options.timeoutMs !== undefined) state.timeoutMs = options.timeoutMs;
  state.reads.set(name, { read });
  if (!registry.getSingleMetric("metrics_redis_read_ok")) {
    new Gauge({
      name: "metrics_redis_read_ok",
      help: "1 when every metric read from Redis at the last scrape (queue_jobs, queue_depth, dead_letters, late_writes) was read in time; 0 when a read failed or timed out and those metrics keep their last values.",
      registers: [registry],
      // With server.processes > 1: 0 when any process could not read.
      aggregator: "min",
      async collect() {
        const outcomes = await scrapeRound(registry);
        this.set([...outcomes.values()].every((o) => o.ok) ? 1 : 0);
      },
    });
  }
}

/**
 * The value of the read `name` in this scrape's round (started by the first caller); undefined when
 * no such read is registered, or when it failed or did not answer in time (the caller keeps its
 * metric's last values; metrics_redis_read_ok reports the failure).
 */
export async function scrapeRead<T>(registry: Registry, name: string): Promise<T | undefined> {
  if (!byRegistry.get(registry)?.reads.has(name)) return undefined;
  const outcome = (await scrapeRound(registry)).get(name);
  return outcome?.ok ? (outcome.value as T) : undefined;
}

function scrapeRound(registry: Registry): Promise<Map<string, Outcome>> {
  const state = stateOf(registry);
  state.round ??= runRound(state).finally(() => {
    state.round = undefined;
  });
  return state.round;
}

async function runRound(state: ScrapeReads): Promise<Map<string, Outcome>> {
  const entries = [...state.reads.entries()];
  const outcomes = await Promise.all(entries.map(([, read]) => bounded(read, state.timeoutMs)));
  return new Map(entries.map(([name], i) => [name, outcomes[i] as Outcome]));
}

async function bounded(entry: Read, timeoutMs: number): Promise<Outcome> {
  const now = Date.now();
  if (!entry.pending || now - entry.pending.since > STUCK_AFTER_MS) {
    const promise = Promise.resolve().then(entry.read);
    const pending = { promise, since: now };
    entry.pending = pending;
    const settle = () => {
      if (entry.pending === pending) entry.pending = undefined;
    };
    promise.then(settle, settle);
  }
  const { promise } = entry.pending;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false }), timeoutMs);
  });
  const result = promise.then(
    (value): Outcome => ({ ok: true, value }),
    (): Outcome => ({ ok: false }),
  );
  try {
    return await Promise.race([result, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
