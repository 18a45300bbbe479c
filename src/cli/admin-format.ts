import type { CliIo } from "./admin-client.js";

/** Prints an answer: as it is with --json, else as the human text. */
export function show(io: CliIo, json: boolean, data: unknown, human: () => string): void {
  io.stdout(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

export function runSummary(run: Record<string, unknown>): string {
  const counts = (run.counts ?? {}) as Record<string, number>;
  const guard = run.guard as GuardSummary | undefined;
  const lines = [
    `run ${run.runId} (${run.source}): ${run.state}${run.dryRun ? " [dry run]" : ""}`,
    ...Object.entries(counts).map(([cls, n]) => `  ${cls.padEnd(16)} ${n}`),
  ];
  if (guard) lines.push(guardLine(guard));
  const repairs = run.repairs as { entities?: number; applied?: boolean; outcome?: Outcome } | undefined;
  if (repairs?.applied)
    lines.push(...outcomeLines(`${repairs.entities ?? 0} repairs enqueued`, repairs.outcome));
  if (run.error) lines.push(`  error: ${run.error}`);
  if (run.state === "awaiting-confirmation") lines.push(heldLine("reconcile", run.runId));
  return lines.join("\n");
}

export type Outcome = {
  synced: number;
  failed: number;
  pending: number;
  settled: boolean;
  failures?: Array<{ ref: string; code: string; reason: string }>;
};

/**
 * What became of what a run or resync enqueued: enqueued is not done. The API tracks each entity
 * until it synced or failed (a dead letter), and lists the first failures.
 */
function outcomeLines(enqueued: string, outcome: Outcome | undefined): string[] {
  if (!outcome) return [`  ${enqueued}`];
  const left = outcome.pending > 0 ? `, ${outcome.pending} not settled` : "";
  const lines = [`  ${enqueued}: ${outcome.synced} synced, ${outcome.failed} failed${left}`];
  for (const failure of outcome.failures ?? []) {
    lines.push(`  failed: ${failure.ref}  ${failure.code}  ${failure.reason}`);
  }
  if (outcome.failed > (outcome.failures ?? []).length) {
    lines.push("  (the rest: scim-bridge dead-letters list)");
  }
  return lines;
}

type GuardSummary = {
  plannedDeprovisions: number;
  ownedUsers: number;
  tripped: boolean;
  share?: number;
  maxShare?: number;
};

/** A share as a percentage, to a tenth at most: 0.1 -> "10%", 0.125 -> "12.5%". */
function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

/**
 * What the deprovisioning guard counted, for a run or a resync, and why it holds it or not: the
 * share to deprovision against `reconcile.maxDeprovisionShare` (when the answer has both).
 */
function guardLine(guard: GuardSummary): string {
  const counted = `  guard: ${guard.plannedDeprovisions} of ${guard.ownedUsers} owned users${guard.tripped ? " (tripped)" : ""}`;
  if (typeof guard.share !== "number" || typeof guard.maxShare !== "number") return counted;
  const against = guard.tripped ? "more than" : "within";
  return `${counted}: ${percent(guard.share)} to deprovision, ${against} reconcile.maxDeprovisionShare ${percent(guard.maxShare)}`;
}

/** How to settle a run or resync the guard holds. */
function heldLine(command: "reconcile" | "resync", id: unknown): string {
  return `  held by the deprovisioning guard: scim-bridge ${command} --confirm ${id} (apply) or --discard ${id} (drop)`;
}

export function resyncSummary(op: Record<string, unknown>): string {
  // Ids the source does not have are listed by the run as `<kind>/<id>`; an operator must see them.
  const unknown = Array.isArray(op.unknown) ? (op.unknown as string[]) : [];
  const guard = op.guard as GuardSummary | undefined;
  const outcome = op.outcome as Outcome | undefined;
  const lines = [
    `resync ${op.id} (${op.source}): ${op.state}${op.enqueued !== undefined ? `, ${op.enqueued} of ${op.total} enqueued` : ""}`,
  ];
  if (outcome) lines.push(...outcomeLines("entities", outcome));
  if (unknown.length > 0) lines.push(`  unknown: ${unknown.join(" ")}`);
  if (guard) lines.push(guardLine(guard));
  if (op.error) lines.push(`  error: ${op.error}`);
  if (op.state === "awaiting-confirmation") lines.push(heldLine("resync", op.id));
  return lines.join("\n");
}

/**
 * A late write's time (ISO) already past: its mark or check waits for the sweeper to hand it on
 * (the entity is read again then); "until" a past time would read as a wait that never ends.
 */
export function isPast(iso: string | null | undefined): boolean {
  return typeof iso === "string" && Date.parse(iso) <= Date.now();
}
