import type { SourceConfig } from "../../src/config/config-schema.js";
import type { Classification, DesiredState } from "../../src/reconcile/classify-user.js";
import { DriftReport } from "../../src/reconcile/drift-report.js";
import { DRIFT_CLASSES, type DriftEntry } from "../../src/reconcile/reconcile-types.js";
import type { ReconcileRun } from "../../src/reconcile/reconcile-run.js";
import { RUN_KEYS } from "../../src/admin/reconcile-run-store.js";
import type { AppliedUser } from "../../src/mapping/plan-types.js";
import { type EntityRef, refKey } from "../../src/scim/scim-types.js";
import { redisDirtyReader, syncDeprovisionsItself } from "./deprovision-under-way.js";
import type { ReconcileDeps } from "./reconcile-ports.js";
import { mergeRepairClasses } from "./repair-settlement.js";

/** The state of one run while it streams: counters and small buffers only. */
export class RunContext {
  readonly report: DriftReport;
  readonly source: SourceConfig;
  readonly keys: Record<keyof typeof RUN_KEYS, string>;
  /** Users this source owns on the platform: seen in the listing, or recorded but deleted behind. */
  ownedUsers = 0;
  /** Unseen entities not synced during the run that it may still read again (scan-directory.ts). */
  rereadsLeft: number;
  /** Which users get their attribute values read in this run (see attribute-slices.ts). */
  attributeSlice = { slice: 0, slices: 1 };
  private repairBuffer: string[] = [];
  /** Drift classes of the buffered repairs (bit i = DRIFT_CLASSES[i]): drift_repaired_total counts them once synced. */
  private classBuffer = new Map<string, number>();
  private orphanBuffer: string[] = [];

  constructor(
    readonly deps: ReconcileDeps,
    readonly run: ReconcileRun,
  ) {
    const source = deps.config.sources[run.source];
    if (!source) throw new Error(`unknown source ${run.source}`);
    this.source = source;
    this.report = new DriftReport(run.sampleSize);
    this.rereadsLeft = deps.maxUnseenRereads ?? 100;
    this.keys = {
      repairs: deps.runs.key(run.runId, RUN_KEYS.repairs),
      orphans: deps.runs.key(run.runId, RUN_KEYS.orphans),
      seenUsers: deps.runs.key(run.runId, RUN_KEYS.seenUsers),
      seenGroups: deps.runs.key(run.runId, RUN_KEYS.seenGroups),
      repairClasses: deps.runs.key(run.runId, RUN_KEYS.repairClasses),
      settleCounts: deps.runs.key(run.runId, RUN_KEYS.settleCounts),
      failures: deps.runs.key(run.runId, RUN_KEYS.failures),
      embedMembers: deps.runs.key(run.runId, RUN_KEYS.embedMembers),
      embedKept: deps.runs.key(run.runId, RUN_KEYS.embedKept),
      embedRemoved: deps.runs.key(run.runId, RUN_KEYS.embedRemoved),
      embedShown: deps.runs.key(run.runId, RUN_KEYS.embedShown),
      adoptable: deps.runs.key(run.runId, RUN_KEYS.adoptable),
    };
  }

  /** Whether the run may read one more unseen entity again (and counts it): see rereadsLeft. */
  takeReread(): boolean {
    if (this.rereadsLeft <= 0) return false;
    this.rereadsLeft -= 1;
    return true;
  }

  /** Throws JobHandedOn when this process no longer holds the run's job (ReconcileDeps.lease). */
  async stillHeld(): Promise<void> {
    await this.deps.lease?.check();
  }

  /**
   * Drops some of the run's working sets, only while its job is still this process's (the lease's
   * holder, checked in the same script as the delete; else OperationNotHeld): an old holder handed
   * on does not drop the sets the next holder is building.
   */
  async dropSets(names: ReadonlyArray<keyof typeof RUN_KEYS>): Promise<void> {
    await this.deps.runs.dropKeys(
      this.run.runId,
      names.map((name) => RUN_KEYS[name]),
      this.deps.lease?.holder,
    );
  }

  /**
   * Adds members to some of the run's working sets, only while its job is still this process's
   * (checked in the same script as the adds; else OperationNotHeld): an old holder handed on adds
   * nothing to the sets the next holder is building.
   */
  async addToSets(sets: ReadonlyArray<{ name: keyof typeof RUN_KEYS; members: readonly string[] }>) {
    await this.deps.runs.addToOwnedSets(
      this.run.runId,
      sets.map((set) => ({ suffix: RUN_KEYS[set.name], members: set.members })),
      this.deps.lease?.holder,
    );
  }

  /**
   * Counts the embed users the run would take out of every group (and those in its groups now) and
   * drops the embed sets, only while its job is still this process's (OperationStore.countEmbedRemovals).
   */
  countEmbedRemovals(): Promise<{ planned: number; onPlatform: number }> {
    return this.deps.runs.countEmbedRemovals(
      this.run.runId,
      { removed: RUN_KEYS.embedRemoved, kept: RUN_KEYS.embedKept, members: RUN_KEYS.embedMembers },
      this.deps.lease?.holder,
    );
  }

  get pageSize(): number {
    return this.deps.pageSize ?? 100;
  }

  get isWorkspace(): boolean {
    return this.source.target === "workspace";
  }

  /**
   * Whether a user's deprovisioning that the run found is the identity provider's, a moment ago:
   * the user is dirty and its pending sync deprovisions it by itself (deprovision-under-way.ts).
   * The guard does not count it; the report still shows it.
   */
  async deprovisionUnderWay(
    ref: EntityRef,
    platformId: string,
    desired: DesiredState<{ active?: unknown }>,
  ): Promise<boolean> {
    const [dirty] = await redisDirtyReader(this.deps.redis, this.deps.config.redis.prefix)([refKey(ref)]);
    if (!dirty) return false;
    const [applied, queued, changed] = await Promise.all([
      this.deps.state.getApplied<AppliedUser>(ref),
      this.deps.state.queuedLifecycle?.(platformId),
      this.deps.state.changedSinceSync?.(ref) ?? true,
    ]);
    return syncDeprovisionsItself(desired, applied?.lifecycle, this.source.onDelete, queued, changed);
  }

  /** Records a classification: counts, samples, planned repairs (buffered), planned deprovisioning. */
  record(result: Classification, entry: Omit<DriftEntry, "detail">, repairKey?: string): void {
    for (const finding of result.findings) this.report.add(finding.cls, { ...entry, detail: finding.detail });
    if (result.deprovision) this.report.plannedDeprovisions += 1;
    if (result.repair === "sync" && repairKey) {
      this.repairBuffer.push(repairKey);
      let bits = this.classBuffer.get(repairKey) ?? 0;
      for (const finding of result.findings) bits |= 1 << DRIFT_CLASSES.indexOf(finding.cls);
      this.classBuffer.set(repairKey, bits);
    }
    if (result.repair === "deactivate-orphan" && entry.platformId) this.orphanBuffer.push(entry.platformId);
  }

  /** Writes buffered repairs to the run's sets (deduplicated there). */
  async flush(): Promise<void> {
    const sets = [
      { name: "repairs" as const, members: this.repairBuffer },
      { name: "orphans" as const, members: this.orphanBuffer },
    ];
    const classes = this.classBuffer;
    this.repairBuffer = [];
    this.orphanBuffer = [];
    this.classBuffer = new Map();
    await this.addToSets(sets);
    await mergeRepairClasses(this.deps.redis, this.keys.repairClasses, classes);
  }
}

/** Groups an async stream into arrays of `size` (the last one may be shorter). */
export async function* batches<T>(items: AsyncIterable<T>, size: number): AsyncIterable<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Starts reading the next item while the caller works on the current one (one item ahead), so a
 * platform page is fetched while the previous one is classified.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = iterator.next();
      // Observed here so that a failure while the caller works is not an unhandled rejection;
      // it is rethrown by the await above on the next turn.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}
