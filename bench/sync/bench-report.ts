/**
 * Recording benchmark figures: percentiles, the machine's load, and the "Sync" section of
 * bench/RESULTS.md (only that section is ever rewritten; other sections are left as they are).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "./bench-processes.js";

export const RESULTS_FILE = join(ROOT, "bench/RESULTS.md");
const SECTION = "## Sync";

/** Nearest-rank percentile of an ascending-sorted list. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function uptimeLine(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")}`;
  }
}

export function machineLine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

export const ms = (n: number) => `${Math.round(n)} ms`;
export const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

/**
 * Appends `block` at the end of the subsection `### <title>` of the "## Sync" section, creating
 * the file, the section or the subsection when missing. Pure: returns the new text.
 */
export function appendToSyncSection(text: string, title: string, block: string): string {
  let doc = text.trim() === "" ? "# Benchmark results\n" : text;
  if (!doc.endsWith("\n")) doc += "\n";
  const lines = doc.split("\n");
  const isSection = (l: string) => l.trim().toLowerCase() === SECTION.toLowerCase();
  let start = lines.findIndex(isSection);
  if (start < 0) {
    lines.splice(lines.length - 1, 0, "", SECTION, "");
    start = lines.findIndex(isSection);
  }
  let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  if (end < 0) end = lines.length;
  const heading = `### ${title}`;
  let sub = lines.findIndex((l, i) => i > start && i < end && l.trim() === heading);
  if (sub < 0) {
    lines.splice(end, 0, heading, "");
    sub = end;
    end += 2;
  }
  let subEnd = lines.findIndex((l, i) => i > sub && i < end && /^#{2,3} /.test(l));
  if (subEnd < 0) subEnd = end;
  // Insert before trailing blank lines of the subsection.
  let at = subEnd;
  while (at - 1 > sub && lines[at - 1]!.trim() === "") at--;
  lines.splice(at, 0, "", ...block.trimEnd().split("\n"), "");
  // Collapse runs of blank lines inside this section only (other sections are left as they are).
  const sectionEnd = lines.findIndex((l, i) => i > start && /^## /.test(l));
  const stop = sectionEnd < 0 ? lines.length : sectionEnd;
  const section = lines
    .slice(start, stop)
    .filter((l, i, all) => !(l.trim() === "" && all[i - 1]?.trim() === ""));
  if (sectionEnd >= 0 && section[section.length - 1]?.trim() !== "") section.push("");
  return `${[...lines.slice(0, start), ...section, ...lines.slice(stop)].join("\n").trimEnd()}\n`;
}

export function recordResult(title: string, block: string): void {
  const text = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, "utf8") : "";
  writeFileSync(RESULTS_FILE, appendToSyncSection(text, title, block));
}

export function table(rows: Array<[string, string]>): string {
  return ["| measure | value |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
}
