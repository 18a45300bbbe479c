import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { emptySamples } from "../reconcile/drift-report.js";
import type { ReconcileRun } from "../reconcile/reconcile-run.js";
import { emptyCounts, type RunState, UNFINISHED_RUN_STATES } from "../reconcile/reconcile-types.js";
import { OperationStore } from "./operation-store.js";
import type { TrackedRun } from "./repair-outcome.js";

/**
 * Keys owned by a run: planned repairs (entity refs, orphan platform ids), ids seen on the
 * platform, and, once the repairs are applied, what became of them: `repairs` then holds the
 * entities not settled yet, `repair-classes` their drift classes, `settle` the synced and failed
 * counts, `failures` the first failures. Embed-tenant sources: `embed:members` the embed users in the
 * source's groups on the platform, `embed:kept` those its repairs leave in at least one of them,
 * `embed:removed` those its repairs take out of one (tenant/externalId each; see the guard).
 * `adoptable`: the case-folded userNames of the active platform users no source owns, which a
 * sync of a user of that userName without a platform id finds again and adopts.
 */
export const RUN_KEYS = {
  repairs: "repairs",
  orphans: "orphans",
  seenUsers: "seen:user",
  seenGroups: "seen:group",
  repairClasses: "repair-classes",
  settleCounts: "settle",
  failures: "failures",
  embedMembers: "embed:members",
  embedKept: "embed:kept",
  embedRemoved: "embed:removed",
  adoptable: "adoptable",
} as const;

/**
 * Reconciliation runs and their reports, the last `reconcile.keepRuns` finished ones per source
 * (dry runs included); unfinished runs, held ones above all, are never trimmed.
 */
export class ReconcileRunStore extends OperationStore<RunState, TrackedRun> {
  constructor(redis: Redis, prefix: string, keepRuns: number) {
    super(redis, prefix, "reconcile", keepRuns, Object.values(RUN_KEYS), UNFINISHED_RUN_STATES);
  }

  async createRun(input: {
    source: string;
    dryRun: boolean;
    trigger: ReconcileRun["trigger"];
    requestedBy?: string;
    sampleSize?: number;
  }): Promise<ReconcileRun> {
    const id = randomUUID();
    const run: ReconcileRun = {
      id,
      runId: id,
      source: input.source,
      state: "queued",
      dryRun: input.dryRun,
      trigger: input.trigger,
      requestedBy: input.requestedBy,
      counts: emptyCounts(),
      samples: emptySamples(),
      sampleSize: input.sampleSize ?? 20,
      repairs: { entities: 0, orphanDeactivations: 0, applied: false },
      createdAt: new Date().toISOString(),
    };
    await this.create(run);
    return run;
  }

  /** Where a run's repairs are tracked once applied (see repair-settlement.ts). */
  settleKeys(runId: string) {
    return {
      tracked: this.key(runId, RUN_KEYS.repairs),
      classes: this.key(runId, RUN_KEYS.repairClasses),
      counts: this.key(runId, RUN_KEYS.settleCounts),
      failures: this.key(runId, RUN_KEYS.failures),
    };
  }
}
