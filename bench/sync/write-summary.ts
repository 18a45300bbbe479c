/**
 * Platform call accounting for the sync benchmarks, from the emulator's exact counters and the
 * emulator host's per-second write timeline. Pure.
 */

export interface Counters {
  total: number;
  writes: number;
  byOperation: Record<string, { calls: number; byStatus: Record<string, number> }>;
}

export interface Timeline {
  firstWriteAt: number;
  lastWriteAt: number;
  perSecond: Record<string, Record<string, number>>;
}

const isRead = (op: string) => op.startsWith("get") || op.startsWith("list");
const ATTRIBUTE_VALUE_OPS = new Set(["upsertUserAttributeValue"]);
const ATTRIBUTE_DEFINITION_OPS = new Set(["createUserAttribute", "updateUserAttribute"]);

function describe(entries: Array<[string, { calls: number; byStatus: Record<string, number> }]>): string {
  if (entries.length === 0) return "none";
  return entries
    .sort((a, b) => b[1].calls - a[1].calls)
    .map(([op, c]) => {
      const statuses = Object.entries(c.byStatus)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
      return `${op} ${c.calls} (${statuses})`;
    })
    .join(", ");
}

export function summariseWrites(counters: Counters, users: number, attributeValues = users) {
  const entries = Object.entries(counters.byOperation);
  const writes = entries.filter(([op]) => !isRead(op));
  const sum = (filter: (op: string) => boolean) =>
    writes.filter(([op]) => filter(op)).reduce((n, [, c]) => n + c.calls, 0);
  const attributeValueWrites = sum((op) => ATTRIBUTE_VALUE_OPS.has(op));
  const attributeDefinitions = sum((op) => ATTRIBUTE_DEFINITION_OPS.has(op));
  const nonAttribute = sum((op) => !ATTRIBUTE_VALUE_OPS.has(op) && !ATTRIBUTE_DEFINITION_OPS.has(op));
  return {
    total: sum(() => true),
    nonAttribute,
    perUser: nonAttribute / users,
    attributeValues: attributeValueWrites,
    attributeDefinitions,
    perValue: attributeValues === 0 ? 0 : attributeValueWrites / attributeValues,
    byOperation: describe(writes),
    reads: describe(entries.filter(([op]) => isRead(op))),
  };
}

/**
 * Platform writes over time since `t0` (epoch ms), by operation: one line per `bucketSeconds`
 * (default: 1 s, or 10 s when the writes span more than 90 s).
 */
export function timelineText(timeline: Timeline, t0: number, bucketSeconds?: number): string {
  const start = Math.floor(t0 / 1000);
  const seconds = Object.keys(timeline.perSecond)
    .map(Number)
    .filter((s) => s >= start)
    .sort((a, b) => a - b);
  if (seconds.length === 0) return "(no writes)";
  const last = seconds[seconds.length - 1]!;
  const step = bucketSeconds ?? (last - start > 90 ? 10 : 1);
  const lines: string[] = [];
  for (let b = start; b <= last; b += step) {
    const ops: Record<string, number> = {};
    for (let s = b; s < b + step; s++) {
      for (const [op, n] of Object.entries(timeline.perSecond[String(s)] ?? {})) ops[op] = (ops[op] ?? 0) + n;
    }
    const total = Object.values(ops).reduce((a, c) => a + c, 0);
    const parts = Object.entries(ops)
      .sort((x, y) => y[1] - x[1])
      .map(([op, n]) => `${op} ${n}`)
      .join(", ");
    const label =
      step === 1
        ? `t+${String(b - start).padStart(3)} s`
        : `t+${String(b - start).padStart(3)}..${String(b - start + step).padStart(3)} s`;
    lines.push(`${label}  ${String(total).padStart(5)}  ${parts}`);
  }
  return lines.join("\n");
}

/** A timeline of recorded writes relative to `t0` (writes before it are left out). */
export function timelineFromWrites(writes: Array<{ t: number; operation: string }>, t0: number): Timeline {
  const start = Math.floor(t0 / 1000);
  const perSecond: Timeline["perSecond"] = {};
  for (const w of writes) {
    if (w.t < t0) continue;
    const key = String(start + Math.floor((w.t - t0) / 1000));
    const bucket = perSecond[key] ?? {};
    bucket[w.operation] = (bucket[w.operation] ?? 0) + 1;
    perSecond[key] = bucket;
  }
  const times = writes.map((w) => w.t).filter((t) => t >= t0);
  return { firstWriteAt: Math.min(...times), lastWriteAt: Math.max(...times), perSecond };
}

/** Redis commands one process sent between two snapshots, in total and per `unit`, with the top ones. */
export function redisDeltaText(
  before: Record<string, number>,
  after: Record<string, number>,
  units: number,
  unit: string,
): string {
  const delta: Record<string, number> = {};
  for (const [name, n] of Object.entries(after)) delta[name] = n - (before[name] ?? 0);
  const total = Object.values(delta).reduce((x, y) => x + y, 0);
  const top = Object.entries(delta)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 8)
    .map(([name, n]) => `${name} ${(n / units).toFixed(1)}`)
    .join(", ");
  return `${total} = ${(total / units).toFixed(1)} per ${unit} (${top})`;
}

/** `name{labels}` -> value of every `_sum` and `_count` sample of a Prometheus text. */
export function metricSums(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^(\w+_(?:sum|count))(\{[^}]*\})?\s+([\d.eE+-]+)$/.exec(line);
    if (m) out.set(`${m[1]}${m[2] ?? ""}`, Number(m[3]));
  }
  return out;
}

/**
 * Mean duration per label value of a histogram between two scrapes, e.g. sync jobs by kind or
 * platform calls by operation: "user 89 ms × 11617, group 78 ms × 1007".
 */
export function meanDurations(before: string, after: string, histogram: string, label: string): string {
  const a = metricSums(after);
  const b = metricSums(before);
  const rows: Array<[string, number, number]> = [];
  for (const [key, count] of a) {
    const m = new RegExp(`^${histogram}_count\\{(?:.*,)?${label}="([^"]+)"`).exec(key);
    if (!m) continue;
    const n = count - (b.get(key) ?? 0);
    const sumKey = key.replace(`${histogram}_count`, `${histogram}_sum`);
    const seconds = (a.get(sumKey) ?? 0) - (b.get(sumKey) ?? 0);
    if (n > 0) rows.push([m[1]!, (1000 * seconds) / n, n]);
  }
  if (rows.length === 0) return "n/a";
  return rows
    .sort((x, y) => y[2] - x[2])
    .map(([v, meanMs, n]) => `${v} ${Math.round(meanMs)} ms × ${n}`)
    .join(", ");
}
