import type { ReconcileRun, ResyncOperation } from "../reconcile/reconcile-run.js";

/** One repair that ended as a dead letter: the entity (`<source>/<kind>/<id>`), the letter's code and reason. */
export interface RepairFailure {
  ref: string;
  code: string;
  reason: string;
}

/**
 * What became of the entities a run or resync enqueued (`repairs.outcome` of a run, `outcome` of a
 * resync). Enqueued is not done: the run or resync stays `running` until every entity it enqueued
 * has synced or ended as a dead letter, then ends `succeeded` (none failed) or `failed`.
 */
export interface RepairOutcome {
  /** Entities whose sync completed after the request (or that are gone at the source). */
  synced: number;
  /** Entities whose sync ended as a dead letter. */
  failed: number;
  /** Entities not settled yet; once `settled` is false and the run finished, they never settled. */
  pending: number;
  /** Every entity synced or failed. */
  settled: boolean;
  /** The first failures (at most 20): which entity, and the dead letter's code and reason. */
  failures: RepairFailure[];
  /** When an entity last settled (or the tracking began): the tracking gives up after a long stall. */
  lastSettledAt: string;
}

/** A reconciliation run whose applied repairs are tracked until they settle. */
export type TrackedRun = ReconcileRun & {
  repairs: ReconcileRun["repairs"] & { outcome?: RepairOutcome };
};

/** A resync whose enqueued entities are tracked until they settle. */
export type TrackedResync = ResyncOperation & { outcome?: RepairOutcome };

export const MAX_LISTED_FAILURES = 20;

export function startedOutcome(pending: number, at = new Date()): RepairOutcome {
  return {
    synced: 0,
    failed: 0,
    pending,
    settled: pending === 0,
    failures: [],
    lastSettledAt: at.toISOString(),
  };
}

/** The error a run or resync ends with when some of its repairs failed or never settled. */
export function outcomeError(outcome: RepairOutcome, what: "repairs" | "entities"): string | undefined {
  const total = outcome.synced + outcome.failed + outcome.pending;
  if (outcome.failed > 0) {
    const codes = [...new Set(outcome.failures.map((f) => f.code))].join(", ");
    return `${outcome.failed} of ${total} ${what} failed (dead letters${codes ? `: ${codes}` : ""})`;
  }
  if (outcome.pending > 0) return `${outcome.pending} of ${total} ${what} did not settle (synced or dead)`;
  return undefined;
}
