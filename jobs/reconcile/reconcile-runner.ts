import type { Logger } from "../../src/observability/logger.js";
import { recordDrift, recordReconcileRun } from "../../src/observability/bridge-metrics.js";
import { attributeSlices } from "../../src/reconcile/attribute-slices.js";
import { evaluateGuard } from "../../src/reconcile/deprovision-guard.js";
import type { ReconcileRun } from "../../src/reconcile/reconcile-run.js";
import { DRIFT_CLASSES } from "../../src/reconcile/reconcile-types.js";
import { type RepairOutcome, type TrackedRun, startedOutcome } from "../../src/admin/repair-outcome.js";
import { type EntityRef, refKey } from "../../src/scim/scim-types.js";
import { resyncTransientDeadLetters } from "../../src/sync/dead-letter-retry.js";
import { type AdoptionCheck, applyRepairs, scanRefs } from "./apply-repairs.js";
import { deprovisionCandidates } from "../resync/resync-runner.js";
import { redisDirtyReader } from "./deprovision-under-way.js";
import { isJobHandedOn, recordFailure } from "../job-lease.js";
import { failureLogFields } from "./failure-log-fields.js";
import type { ReconcileDeps } from "./reconcile-ports.js";
import {
  TRACKED_TTL_SECONDS,
  finishedFields,
  sameProgress,
  settlePass,
  stalled,
} from "./repair-settlement.js";
import { RunContext } from "./run-context.js";
import { scanDirectory } from "./scan-directory.js";
import {
  countEmbedDeprovisions,
  embedRemovalsNow,
  scanEmbedGroups,
  scanWorkspaceGroups,
} from "./scan-platform-groups.js";
import { scanPlatformUsers } from "./scan-platform-users.js";

/** Counts a run that reached an outcome (reconcile_runs_total), once its store transition wrote it. */
function countRun(deps: ReconcileDeps, run: ReconcileRun, written: boolean): void {
  if (written && deps.registry) recordReconcileRun(deps.registry, run.source, run.state);
}

function finished(startedMs: number): Pick<ReconcileRun, "finishedAt" | "durationMs"> {
  return { finishedAt: new Date().toISOString(), durationMs: Date.now() - startedMs };
}

/**
 * Drops a run's working sets: the seen sets always; the planned repairs unless the run is held
 * (`held`); while its applied repairs are tracked (`tracking`), the entities and their classes stay.
 */
async function dropWorkingSets(ctx: RunContext, keep: "held" | "tracking" | "none"): Promise<void> {
  const names: Array<keyof RunContext["keys"]> = [
    "seenUsers",
    "seenGroups",
    "embedMembers",
    "embedKept",
    "embedRemoved",
    "adoptable",
  ];
  if (keep !== "held") names.push("orphans", "embedShown");
  if (keep === "none") names.push("repairs", "repairClasses");
  await ctx.dropSets(names);
}

/** A run whose applied repairs are still tracked: it stays `running` until they settle. */
export function isSettling(run: TrackedRun | null | undefined): boolean {
  const outcome = run?.repairs.outcome;
  return run?.state === "running" && outcome !== undefined && !outcome.settled;
}

/** Whether any workspace source's directory holds a user of this userName (apply-repairs.ts). */
function heldByAWorkspaceSource(deps: ReconcileDeps): AdoptionCheck {
  const workspaces = Object.entries(deps.config.sources)
    .filter(([, source]) => source.target === "workspace")
    .map(([id]) => id);
  return async (userName) => {
    for (const source of workspaces) {
      if (await deps.directory.findUserId(source, { userName })) return true;
    }
    return false;
  };
}

type AppliedRepairs = { entities: number; orphanDeactivations: number };

/** Whether each entity is among the run's repairs (its sync was requested as a repair). */
async function inRepairs(deps: ReconcileDeps, ctx: RunContext, refs: EntityRef[]): Promise<boolean[]> {
  if (refs.length === 0) return [];
  const found = await deps.redis.smismember(ctx.keys.repairs, ...refs.map(refKey));
  return found.map((member) => member === 1);
}

/**
 * Applies a run's planned repairs (at once, or once an admin confirmed them). Orphans are
 * deactivated here, and `drift_repaired_total{kind="orphans"}` counts those really deactivated (a
 * source may have claimed one meanwhile). Entities are only enqueued: their differences count as
 * repaired once each entity synced (settleRun).
 */
async function applyAndCount(
  deps: ReconcileDeps,
  ctx: RunContext,
  run: ReconcileRun,
  log: Logger,
): Promise<AppliedRepairs> {
  const applied = await applyRepairs({
    redis: deps.redis,
    repairsKey: ctx.keys.repairs,
    orphansKey: ctx.keys.orphans,
    requestResync: deps.requestResync,
    platform: deps.platform,
    state: deps.state,
    logger: log,
    chunk: deps.repairChunk ?? 500,
    adoptable: heldByAWorkspaceSource(deps),
    beforeChunk: () => ctx.stillHeld(),
  });
  if (deps.registry) {
    recordDrift(deps.registry, "repaired", run.source, { orphans: applied.orphanDeactivations });
  }
  // Dead letters of transient failures (an outage longer than the jobs' attempts) are synced again
  // too, drift or not (src/sync/dead-letter-retry.ts); not tracked as the run's repairs, and a
  // failure here does not fail the run (its repairs are applied; the next run tries again).
  await ctx.stillHeld();
  try {
    const deadLetters = await resyncTransientDeadLetters(
      deps.state.deadLetters,
      run.source,
      deps.requestResync,
      { alreadyRequested: (refs) => inRepairs(deps, ctx, refs) },
    );
    if (deadLetters > 0) {
      log.info({ deadLetters }, "reconcile: dead letters of transient failures are synced again");
    }
  } catch (err) {
    log.warn(
      failureLogFields(err),
      "reconcile: dead letters of transient failures could not be synced again; the next run tries",
    );
  }
  return applied;
}

/**
 * The run once its repairs are enqueued: with tracking (deps.settle) and entities to wait for, it
 * stays `running` with `repairs.outcome` (settleRun ends it); otherwise it succeeded.
 */
async function afterApply(
  deps: ReconcileDeps,
  ctx: RunContext,
  run: TrackedRun,
  applied: AppliedRepairs,
): Promise<TrackedRun> {
  const tracking = deps.settle !== undefined && applied.entities > 0;
  const repairs = {
    ...applied,
    applied: true,
    ...(deps.settle ? { outcome: startedOutcome(tracking ? applied.entities : 0) } : {}),
  };
  if (!tracking) return { ...run, state: "succeeded", repairs };
  await deps.redis
    .multi()
    .expire(ctx.keys.repairs, TRACKED_TTL_SECONDS)
    .expire(ctx.keys.repairClasses, TRACKED_TTL_SECONDS)
    .exec();
  return { ...run, state: "running", repairs };
}

/** Counts synced entities' drift classes (bit i = DRIFT_CLASSES[i]) by class. */
function classCounts(bits: readonly number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const b of bits) {
    DRIFT_CLASSES.forEach((cls, i) => {
      if (b & (1 << i)) counts[cls] = (counts[cls] ?? 0) + 1;
    });
  }
  return counts;
}

/**
 * One pass over a run's tracked repairs (repair-settlement.ts): counts the entities that synced
 * (drift_repaired_total, by their drift classes) or failed since the last pass, and ends the run
 * once all settled (`succeeded`, or `failed` naming the dead letters) or the tracking stalled.
 */
export async function settleRun(deps: ReconcileDeps, runId: string): Promise<TrackedRun | null> {
  const run = await deps.runs.get(runId);
  if (!run || !isSettling(run) || !deps.settle) return run;
  const previous = run.repairs.outcome as RepairOutcome;
  const log = deps.logger.child({ module: "reconcile", runId, source: run.source });
  await deps.lease?.check();
  const { outcome, syncedBits } = await settlePass(deps.settle, deps.runs.settleKeys(runId), previous);
  if (deps.registry && syncedBits.length > 0) {
    recordDrift(deps.registry, "repaired", run.source, classCounts(syncedBits));
  }
  const done = outcome.settled || stalled(deps.settle, outcome);
  let next: TrackedRun = { ...run, repairs: { ...run.repairs, outcome } };
  if (done) {
    next = { ...next, ...finishedFields(outcome, "repairs", run) };
  } else if (sameProgress(outcome, previous)) {
    return run;
  }
  await deps.lease?.check();
  if (!(await deps.runs.transition(next, ["running"], deps.lease?.holder))) return deps.runs.get(runId);
  if (done) {
    countRun(deps, next, true);
    await deps.runs.dropOwnedKeys(runId);
    const fields = { synced: outcome.synced, failed: outcome.failed, pending: outcome.pending };
    if (next.state === "failed") log.warn({ ...fields, err: next.error }, "reconcile: repairs failed");
    else log.info(fields, "reconcile: repairs settled");
  }
  return next;
}

/**
 * The slice of users whose attribute values a run reads (attribute-slices.ts), for a workspace
 * source that maps attributes (undefined otherwise), and for a real run the turn it read: it takes
 * the turn after that one as it starts (startRun). A dry run reads the slice the next run will
 * read, and takes no turn: it reports what that run applies, and dry runs between scheduled runs
 * do not keep those on the same slices.
 */
async function planAttributeSlice(
  deps: ReconcileDeps,
  run: ReconcileRun,
): Promise<{ slice: { slice: number; slices: number }; turn?: number } | undefined> {
  const source = deps.config.sources[run.source];
  if (source?.target !== "workspace" || Object.keys(source.attributes).length === 0) return undefined;
  const slices = attributeSlices(
    await deps.directory.countEntities(run.source, "user"),
    deps.maxAttributeChecksPerRun ?? 2000,
  );
  const turn = await deps.runs.attributeTurn(run.source);
  return { slice: { slice: (turn + 1) % slices, slices }, ...(run.dryRun ? {} : { turn }) };
}

/**
 * Writes a run as it starts (`running`, from queued or running): null when it is neither any more.
 * A run takes its attribute slice when it first starts and keeps it on its record: a run started
 * over (a rolling deploy handed its job back, or it stalled) reads the same slice, so the source's
 * runs skip none. A real run's turn is taken in the script that writes its record: a start refused
 * (its job handed on as it starts, or the run no longer queued) uses up no turn.
 */
async function startRun(deps: ReconcileDeps, run: TrackedRun): Promise<TrackedRun | null> {
  const from = ["queued", "running"] as const;
  const holder = deps.lease?.holder;
  for (;;) {
    const planned = run.attributeSlice ? undefined : await planAttributeSlice(deps, run);
    const next: TrackedRun = planned ? { ...run, attributeSlice: planned.slice } : run;
    if (planned?.turn === undefined) return (await deps.runs.transition(next, from, holder)) ? next : null;
    const started = await deps.runs.startWithTurn(next, from, planned.turn, holder);
    // Another run of the source took that turn meanwhile: this one takes the next.
    if (started === "turn-moved") continue;
    return started === "written" ? next : null;
  }
}

/**
 * Runs a queued reconciliation: streams the platform and the directory, classifies every
 * difference, then (unless dry-run) applies the repairs, or holds them all when the
 * deprovisioning guard trips (invariant 8). Memory stays flat: working sets live in Redis.
 */
export async function runReconcile(deps: ReconcileDeps, runId: string): Promise<TrackedRun | null> {
  const queued = await deps.runs.get(runId);
  // "running" here means the worker that ran it died (BullMQ hands a stalled job on): start over,
  // unless its repairs are applied already and only tracked (settleRun goes on with those).
  if (queued?.state !== "queued" && queued?.state !== "running") return queued;
  if (isSettling(queued)) return queued;
  const startedMs = Date.now();
  await deps.lease?.check();
  const started = await startRun(deps, {
    ...queued,
    state: "running",
    startedAt: new Date(startedMs).toISOString(),
  });
  if (!started) return deps.runs.get(runId);
  let run: TrackedRun = started;
  const attributeSlice = run.attributeSlice;
  const log = deps.logger.child({ module: "reconcile", runId, source: run.source });
  let ctx: RunContext | undefined;
  try {
    ctx = new RunContext(deps, run);
    if (attributeSlice) ctx.attributeSlice = attributeSlice;
    await ctx.stillHeld();
    // Only while the job is still this process's: a holder handed on since the check above must
    // not drop the sets its next holder started (OperationNotHeld ends it as handed on).
    await ctx.dropSets([
      "seenUsers",
      "seenGroups",
      "repairs",
      "orphans",
      "embedMembers",
      "embedKept",
      "embedRemoved",
      "embedShown",
      "adoptable",
    ]);
    const phaseMs: Record<string, number> = {};
    const timed = async (name: string, pass: () => Promise<void>) => {
      const t0 = Date.now();
      await pass();
      phaseMs[name] = Date.now() - t0;
    };
    const current = ctx;
    await timed("platformUsers", () => scanPlatformUsers(current));
    await timed("platformGroups", () =>
      current.isWorkspace ? scanWorkspaceGroups(current) : scanEmbedGroups(current),
    );
    await timed("directory", async () => {
      if (current.isWorkspace) await scanDirectory(current, "user");
      await scanDirectory(current, "group");
    });
    await ctx.stillHeld();
    await ctx.flush();
    if (!ctx.isWorkspace) await countEmbedDeprovisions(ctx);

    const guard = evaluateGuard(
      ctx.report.plannedDeprovisions,
      ctx.ownedUsers,
      deps.config.reconcile.maxDeprovisionShare,
    );
    const [repairCount, orphanCount] = await Promise.all([
      deps.redis.scard(ctx.keys.repairs),
      deps.redis.scard(ctx.keys.orphans),
    ]);
    run = {
      ...run,
      counts: ctx.report.counts,
      samples: ctx.report.samples,
      guard,
      phaseMs,
      attributeSlice: ctx.attributeSlice,
      repairs: { entities: repairCount, orphanDeactivations: orphanCount, applied: false },
    };
    if (deps.registry) recordDrift(deps.registry, "found", run.source, run.counts);
    if (run.dryRun) {
      run = { ...run, state: "succeeded", ...finished(startedMs) };
    } else if (guard.tripped) {
      log.warn(
        { planned: guard.plannedDeprovisions, owned: guard.ownedUsers, share: guard.share },
        "reconcile: deprovisioning guard tripped; the run waits for an admin's confirmation",
      );
      run = { ...run, state: "awaiting-confirmation", ...finished(startedMs) };
    } else {
      const applied = await applyAndCount(deps, ctx, run, log);
      run = await afterApply(deps, ctx, run, applied);
      if (run.state === "succeeded") run = { ...run, ...finished(startedMs) };
    }
    await ctx.stillHeld();
    await dropWorkingSets(
      ctx,
      run.state === "awaiting-confirmation" ? "held" : isSettling(run) ? "tracking" : "none",
    );
    const written = await deps.runs.transition(run, ["running"], deps.lease?.holder);
    countRun(deps, run, written);
    // A scheduled run that applied its repairs, or is held, shows the drift as it is now: older
    // held scheduled runs show drift that is no more (or that this one applied).
    if (written && run.trigger === "schedule" && !run.dryRun) {
      await supersedeHeldScheduledRuns(deps, run, log);
    }
    if (isSettling(run)) {
      // Its repairs were enqueued: settleRun ends it once they synced or failed.
      log.info(
        { counts: run.counts, state: run.state, entities: run.repairs.entities },
        "reconcile: run scanned and its repairs enqueued; it waits for them to settle",
      );
    } else {
      log.info(
        { counts: run.counts, state: run.state, durationMs: run.durationMs },
        "reconcile: run finished",
      );
    }
    return run;
  } catch (err) {
    // Handed on: the next holder runs it (and owns its working sets and its record from here).
    if (isJobHandedOn(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    // Refused once the job was handed on (a platform call that failed as a forced close handed it
    // back): the sets are the next holder's, and so is the record (the write below is refused too,
    // and the failure is not told: recordFailure).
    if (ctx) await dropWorkingSets(ctx, "none").catch(() => undefined);
    run = { ...run, state: "failed", error: message, ...finished(startedMs) };
    const failed = run;
    const written = await recordFailure(
      () => deps.runs.transition(failed, ["running"], deps.lease?.holder),
      () => log.error(failureLogFields(err), "reconcile: run failed"),
    );
    countRun(deps, run, written);
    return run;
  }
}

/**
 * A scheduled run that is held, or that applied its repairs, replaces the source's older held
 * scheduled runs: they are discarded (`supersededBy`), their repair sets dropped. Held runs are
 * never trimmed, so without this a source whose drift keeps tripping the guard would add a held
 * run, repair sets and all, on every tick until an admin acts; and once the drift that tripped the
 * guard is gone (or fell below the share, and the newer run applied it), the old held run would
 * wait for an admin for good, showing drift that is no more. The newest run shows the drift as it
 * is now. Runs an admin started are left for the admin.
 */
async function supersedeHeldScheduledRuns(
  deps: ReconcileDeps,
  run: ReconcileRun,
  log: Logger,
): Promise<void> {
  // Every run of the source (a held run is never trimmed, however many came after it), read
  // before any is settled; runs started or trimmed meanwhile neither hide one nor repeat one.
  const held = (await deps.runs.listAll({ source: run.source })).filter(
    (older) =>
      older.runId !== run.runId && older.state === "awaiting-confirmation" && older.trigger === "schedule",
  );
  for (const older of held) {
    const settled: ReconcileRun = {
      ...older,
      state: "discarded",
      settledBy: "scheduler",
      settledAt: new Date().toISOString(),
      supersededBy: run.runId,
    };
    if (!(await deps.runs.transition(settled, ["awaiting-confirmation"]))) continue;
    countRun(deps, settled, true);
    await deps.runs.dropOwnedKeys(older.runId);
    log.warn(
      { supersededRunId: older.runId },
      "reconcile: an older held scheduled run is superseded by this one",
    );
  }
}

/**
 * What applying a held run's repairs would deactivate or delete now: the users of its repair set a
 * resync would deprovision (read on the platform, as a resync's guard reads them) and its orphans.
 */
async function deprovisionsNow(deps: ReconcileDeps, ctx: RunContext, source: string): Promise<number> {
  // As the run's scan did: a user the identity provider's own pending sync deprovisions is not the run's.
  const reader = { ...deps, dirty: redisDirtyReader(deps.redis, deps.config.redis.prefix) };
  let count = await deps.redis.scard(ctx.keys.orphans);
  for await (const refs of scanRefs(deps.redis, ctx.keys.repairs, 500)) {
    const ids = refs.filter((ref) => ref.kind === "user" && ref.source === source).map((ref) => ref.id);
    for (let start = 0; start < ids.length; start += 100) {
      count += (await deprovisionCandidates(reader, source, ids.slice(start, start + 100))).length;
    }
  }
  return count;
}

/**
 * For an embed-tenant source: how many embed users the held run's group repairs would take out of
 * a group now that the run did not show (its `embedShown` set: every removal its scan found), read
 * as the scan read them (embedRemovalsNow: a group's own pending sync's removals are not the
 * run's). The repairs are resyncs that do what the state says when they run, so members put back
 * on the platform while the run waited would be taken out too. (An embed user taken out of one
 * group and left in another was shown all the same: the set holds removals, not deprovisionings.)
 */
async function embedRemovalsNotShown(deps: ReconcileDeps, ctx: RunContext, source: string): Promise<number> {
  if (ctx.isWorkspace) return 0;
  let unshown = 0;
  for await (const refs of scanRefs(deps.redis, ctx.keys.repairs, 100)) {
    for (const ref of refs) {
      if (ref.kind !== "group" || ref.source !== source) continue;
      const removed = await embedRemovalsNow(ctx, ref);
      if (removed.length === 0) continue;
      const shown = await deps.redis.smismember(ctx.keys.embedShown, ...removed);
      unshown += shown.filter((flag) => flag === 0).length;
    }
  }
  return unshown;
}

/**
 * Applies the held repairs of a run an admin confirmed (queued again, with settledBy). A
 * confirmation never deprovisions more than the guard showed (invariant 8): when the platform
 * changed while the run waited so that its repairs would now deactivate or delete more users than
 * that, nothing is applied and the run fails, naming both counts; a new run shows the new count.
 */
export async function applyConfirmedRun(deps: ReconcileDeps, runId: string): Promise<TrackedRun | null> {
  const queued = await deps.runs.get(runId);
  if ((queued?.state !== "queued" && queued?.state !== "running") || !queued.settledBy) return queued;
  if (isSettling(queued)) return queued;
  let run: TrackedRun = { ...queued, state: "running" };
  // Applying again after a crash is harmless: resyncs and deactivations are idempotent.
  await deps.lease?.check();
  if (!(await deps.runs.transition(run, ["queued", "running"], deps.lease?.holder)))
    return deps.runs.get(runId);
  const log = deps.logger.child({ module: "reconcile", runId, source: run.source });
  /** Set when the apply failed: told once its record is written (recordFailure). */
  let tellFailure: (() => void) | undefined;
  try {
    const ctx = new RunContext(deps, run);
    const shown = run.guard?.plannedDeprovisions;
    if (shown !== undefined) {
      const now = await deprovisionsNow(deps, ctx, run.source);
      if (now > shown) {
        throw new Error(
          `the platform changed while the run waited for confirmation: its repairs would now deactivate or delete ${now} users, the confirmation was for ${shown}; nothing was applied (start a new reconciliation)`,
        );
      }
      const unshown = await embedRemovalsNotShown(deps, ctx, run.source);
      if (unshown > 0) {
        throw new Error(
          `the platform changed while the run waited for confirmation: its repairs would now take ${unshown} embed users out of groups that the confirmation did not show; nothing was applied (start a new reconciliation)`,
        );
      }
    }
    const applied = await applyAndCount(deps, ctx, run, log);
    run = await afterApply(deps, ctx, run, applied);
    await ctx.stillHeld();
    if (isSettling(run)) await ctx.dropSets(["orphans", "seenUsers", "seenGroups", "embedShown"]);
    else await deps.runs.dropOwnedKeys(runId, deps.lease?.holder);
    log.info({ repairs: run.repairs }, "reconcile: confirmed run applied");
  } catch (err) {
    if (isJobHandedOn(err)) throw err;
    run = { ...run, state: "failed", error: err instanceof Error ? err.message : String(err) };
    tellFailure = () => log.error(failureLogFields(err), "reconcile: applying a confirmed run failed");
  }
  const ended = run;
  const record = () => deps.runs.transition(ended, ["running"], deps.lease?.holder);
  countRun(deps, run, await (tellFailure ? recordFailure(record, tellFailure) : record()));
  return run;
}
