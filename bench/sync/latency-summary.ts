/**
 * Steady-state figures from the correlated changes (pure): p50/p99 from the SCIM answer to the
 * platform write's arrival at the emulator (and to its answer), per kind and per 10 s window.
 */
import { ms, percentile } from "./bench-report.js";
import type { Match } from "./correlate.js";

const TARGET_P99_MS = 500;

function stats(values: number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

const arrival = (m: Match) => m.write!.t - m.change.tAnswer;
const answered = (m: Match) => m.write!.tDone - m.change.tAnswer;

export function latencyRows(matches: Match[]): Array<[string, string]> {
  const found = matches.filter((m) => m.write);
  const all = stats(found.map(arrival));
  const done = stats(found.map(answered));
  const rows: Array<[string, string]> = [
    [
      "SCIM answer → platform write arrives",
      `p50 ${ms(all.p50)}, p99 **${ms(all.p99)}** (target p99 < ${TARGET_P99_MS} ms: ${all.p99 < TARGET_P99_MS ? "met" : "**missed**"}), max ${ms(all.max)}, n ${all.n}`,
    ],
    [
      "SCIM answer → platform write answered",
      `p50 ${ms(done.p50)}, p99 ${ms(done.p99)}, max ${ms(done.max)}`,
    ],
  ];
  for (const kind of ["profile", "lifecycle", "membership"] as const) {
    const s = stats(found.filter((m) => m.change.kind === kind).map(arrival));
    rows.push([`… ${kind} changes`, `p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, max ${ms(s.max)}, n ${s.n}`]);
  }
  const count = (how: Match["how"]) => {
    const list = matches.filter((m) => m.how === how);
    const byKind = (k: string) => list.filter((m) => m.change.kind === k).length;
    return `${list.length} (profile ${byKind("profile")}, lifecycle ${byKind("lifecycle")}, membership ${byKind("membership")})`;
  };
  rows.push([
    "changes matched: direct / superseded by a newer change / cancelled by a later change / missing",
    `${count("direct")} / ${count("superseded")} / ${count("cancelled")} / ${matches.some((m) => m.how === "missing") ? `**${count("missing")}**` : "0"}`,
  ]);
  return rows;
}

/** p50/p99 per 10 s window of the SCIM answer time, to show whether a backlog builds up. */
export function windowText(matches: Match[], t0: number): string {
  const windows = new Map<number, number[]>();
  for (const m of matches) {
    if (!m.write) continue;
    const w = Math.floor((m.change.tAnswer - t0) / 10_000);
    const list = windows.get(w) ?? [];
    list.push(arrival(m));
    windows.set(w, list);
  }
  return [...windows.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([w, values]) => {
      const s = stats(values);
      return `${String(w * 10).padStart(3)}-${String(w * 10 + 10).padStart(3)} s  n ${String(s.n).padStart(5)}  p50 ${ms(s.p50).padStart(8)}  p99 ${ms(s.p99).padStart(8)}  max ${ms(s.max).padStart(8)}`;
    })
    .join("\n");
}
