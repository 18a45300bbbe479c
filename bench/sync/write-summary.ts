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

/** One line per second since `t0` (epoch ms): writes that second, by operation. */
export function timelineText(timeline: Timeline, t0: number, maxLines = 90): string {
  const start = Math.floor(t0 / 1000);
  const seconds = Object.keys(timeline.perSecond)
    .map(Number)
    .sort((a, b) => a - b);
  if (seconds.length === 0) return "(no writes)";
  const last = seconds[seconds.length - 1]!;
  const lines: string[] = [];
  for (let s = Math.min(start, seconds[0]!); s <= last; s++) {
    const ops = timeline.perSecond[String(s)] ?? {};
    const total = Object.values(ops).reduce((a, b) => a + b, 0);
    const parts = Object.entries(ops)
      .sort((a, b) => b[1] - a[1])
      .map(([op, n]) => `${op} ${n}`)
      .join(", ");
    lines.push(`t+${String(s - start).padStart(3)} s  ${String(total).padStart(5)}  ${parts}`);
  }
  if (lines.length <= maxLines) return lines.join("\n");
  const head = lines.slice(0, maxLines - 10);
  return [...head, `... ${lines.length - maxLines} more seconds ...`, ...lines.slice(-10)].join("\n");
}
