import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { emptySamples } from "../reconcile/drift-report.js";
import type { ReconcileRun } from "../reconcile/reconcile-run.js";
import { emptyCounts, type RunState, UNFINISHED_RUN_STATES } from "../reconcile/reconcile-types.js";
import { luaScript } from "../lua-script.js";
import { OperationNotHeld } from "./operation-not-held.js";
import { OPERATION_GUARD_LUA, type OperationHolder, OperationStore } from "./operation-store.js";
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
  /** The embed users the run's repairs take out of a group, kept while the run is held (shown to the admin). */
  embedShown: "embed:shown",
  adoptable: "adoptable",
} as const;

/**
 * Writes a starting run's document and takes its source's attribute turn, in one script: KEYS[1] =
 * run hash, KEYS[2] = the source's turn counter, KEYS[3] (optional) = its job's lock key; ARGV[1] =
 * allowed states joined by "|", ARGV[2] = new state, ARGV[3] = new document, ARGV[4] = the turn the
 * run read (a missing counter is 0; it becomes ARGV[4] + 1), ARGV[5] = the lock token. Returns 1
 * when written, 0 when the state is not an allowed one, -1 when the lock is not the token's, -2
 * when another run took a turn since (nothing written either way but 1).
 */
const START_WITH_TURN = luaScript<number>(
  "scimReconcileStartWithTurn",
  `${OPERATION_GUARD_LUA}
if not heldBy(KEYS[3], ARGV[5]) then return -1 end
if not stateIn(redis.call('HGET', KEYS[1], 'state'), ARGV[1]) then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[4]) then return -2 end
redis.call('SET', KEYS[2], tonumber(ARGV[4]) + 1)
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'doc', ARGV[3])
return 1
`,
);

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

  /** The counter of a source's attribute turns: real runs take the next one as they start. */
  attributeTurnKey(source: string): string {
    return this.key(`attribute-turn:${source}`);
  }

  /** The last attribute turn a run of the source took (0: none yet). */
  async attributeTurn(source: string): Promise<number> {
    return Number((await this.redis.get(this.attributeTurnKey(source))) ?? 0);
  }

  /**
   * Writes `next` (a run as it starts, holding the slice of turn `turn + 1`) only if its stored
   * state is one of `from`, and takes that turn in the same script: a start refused takes none.
   * "turn-moved": another run of the source took turn `turn + 1` first (read the turn again).
   * With `holder`, only while its job's lock is the holder's (else OperationNotHeld).
   */
  async startWithTurn(
    next: ReconcileRun,
    from: readonly RunState[],
    turn: number,
    holder?: OperationHolder,
  ): Promise<"written" | "refused" | "turn-moved"> {
    const keys = [this.key(next.id), this.attributeTurnKey(next.source)];
    const args = [from.join("|"), next.state, JSON.stringify(next), turn];
    const written = holder
      ? await START_WITH_TURN.run(this.redis, [...keys, holder.lockKey], [...args, holder.token])
      : await START_WITH_TURN.run(this.redis, keys, args);
    if (written === -1) throw new OperationNotHeld(next.id);
    if (written === -2) return "turn-moved";
    return written === 1 ? "written" : "refused";
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
