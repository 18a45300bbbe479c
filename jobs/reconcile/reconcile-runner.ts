import type { Logger } from "../../src/observability/logger.js";
import { recordDrift } from "../../src/observability/bridge-metrics.js";
import { attributeSlices } from "../../src/reconcile/attribute-slices.js";
import { evaluateGuard } from "../../src/reconcile/deprovision-guard.js";
import type { ReconcileRun } from "../../src/reconcile/reconcile-run.js";
import { applyRepairs } from "./apply-repairs.js";
import type { ReconcileDeps } from "./reconcile-ports.js";
import { RunContext } from "./run-context.js";
import { scanDirectory } from "./scan-directory.js";
import { scanEmbedGroups, scanWorkspaceGroups } from "./scan-platform-groups.js";
import { scanPlatformUsers } from "./scan-platform-users.js";

function finished(startedMs: number): Pick<ReconcileRun, "finishedAt" | "durationMs"> {
  return { finishedAt: new Date().toISOString(), durationMs: Date.now() - startedMs };
}

async function dropWorkingSets(deps: ReconcileDeps, ctx: RunContext, keepRepairs: boolean): Promise<void> {
  const keys = [ctx.keys.seenUsers, ctx.keys.seenGroups];
  if (!keepRepairs) keys.push(ctx.keys.repairs, ctx.keys.orphans);
  await deps.redis.del(...keys);
}

/**
 * Applies a run's planned repairs (at once, or once an admin confirmed them) and counts them in
 * `drift_repaired_total`: every difference of the run's counts got its resync, except orphans,
 * which count the users really deactivated (a source may have claimed one meanwhile).
 */
async function applyAndCount(
  deps: ReconcileDeps,
  ctx: RunContext,
  run: ReconcileRun,
  log: Logger,
): Promise<{ entities: number; orphanDeactivations: number }> {
  const applied = await applyRepairs({
    redis: deps.redis,
    repairsKey: ctx.keys.repairs,
    orphansKey: ctx.keys.orphans,
    requestResync: deps.requestResync,
    platform: deps.platform,
    state: deps.state,
    logger: log,
    chunk: deps.repairChunk ?? 500,
  });
  if (deps.registry) {
    recordDrift(deps.registry, "repaired", run.source, {
      ...run.counts,
      orphans: applied.orphanDeactivations,
    });
  }
  return applied;
}

/**
 * Runs a queued reconciliation: streams the platform and the directory, classifies every
 * difference, then (unless dry-run) applies the repairs, or holds them all when the
 * deprovisioning guard trips (invariant 8). Memory stays flat: working sets live in Redis.
 */
export async function runReconcile(deps: ReconcileDeps, runId: string): Promise<ReconcileRun | null> {
  const queued = await deps.runs.get(runId);
  // "running" here means the worker that ran it died (BullMQ hands a stalled job on): start over.
  if (queued?.state !== "queued" && queued?.state !== "running") return queued;
  const startedMs = Date.now();
  let run: ReconcileRun = { ...queued, state: "running", startedAt: new Date(startedMs).toISOString() };
  if (!(await deps.runs.transition(run, ["queued", "running"]))) return deps.runs.get(runId);
  const log = deps.logger.child({ module: "reconcile", runId, source: run.source });
  let ctx: RunContext | undefined;
  try {
    ctx = new RunContext(deps, run);
    if (Object.keys(ctx.source.attributes).length > 0 && ctx.isWorkspace) {
      const slices = attributeSlices(
        await deps.directory.countEntities(run.source, "user"),
        deps.maxAttributeChecksPerRun ?? 2000,
      );
      const turn = await deps.redis.incr(deps.runs.key(`attribute-turn:${run.source}`));
      ctx.attributeSlice = { slice: turn % slices, slices };
    }
    await deps.redis.del(ctx.keys.seenUsers, ctx.keys.seenGroups, ctx.keys.repairs, ctx.keys.orphans);
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
    await ctx.flush();

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
      run = {
        ...run,
        state: "succeeded",
        repairs: { ...applied, applied: true },
        ...finished(startedMs),
      };
    }
    await dropWorkingSets(deps, ctx, run.state === "awaiting-confirmation");
    await deps.runs.transition(run, ["running"]);
    if (run.state === "awaiting-confirmation" && run.trigger === "schedule") {
      await supersedeHeldScheduledRuns(deps, run, log);
    }
    log.info({ counts: run.counts, state: run.state, durationMs: run.durationMs }, "reconcile: run finished");
    return run;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error({ err: message }, "reconcile: run failed");
    if (ctx) await dropWorkingSets(deps, ctx, false).catch(() => undefined);
    run = { ...run, state: "failed", error: message, ...finished(startedMs) };
    await deps.runs.transition(run, ["running"]);
    return run;
  }
}

/**
 * A scheduled run that is held replaces the source's older held scheduled runs: they are
 * discarded (`supersededBy`), their repair sets dropped. Held runs are never trimmed, so without
 * this a source whose drift keeps tripping the guard would add a held run, repair sets and all, on
 * every tick until an admin acts; the newest one shows the drift as it is now. Runs an admin
 * started are left for the admin.
 */
async function supersedeHeldScheduledRuns(
  deps: ReconcileDeps,
  run: ReconcileRun,
  log: Logger,
): Promise<void> {
  const { items } = await deps.runs.list({ source: run.source, offset: 0, limit: 500 });
  for (const older of items) {
    if (
      older.runId === run.runId ||
      older.state !== "awaiting-confirmation" ||
      older.trigger !== "schedule"
    ) {
      continue;
    }
    const settled: ReconcileRun = {
      ...older,
      state: "discarded",
      settledBy: "scheduler",
      settledAt: new Date().toISOString(),
      supersededBy: run.runId,
    };
    if (!(await deps.runs.transition(settled, ["awaiting-confirmation"]))) continue;
    await deps.runs.dropOwnedKeys(older.runId);
    log.warn(
      { supersededRunId: older.runId },
      "reconcile: an older held scheduled run is superseded by this one",
    );
  }
}

/** Applies the held repairs of a run an admin confirmed (queued again, with settledBy). */
export async function applyConfirmedRun(deps: ReconcileDeps, runId: string): Promise<ReconcileRun | null> {
  const queued = await deps.runs.get(runId);
  if ((queued?.state !== "queued" && queued?.state !== "running") || !queued.settledBy) return queued;
  let run: ReconcileRun = { ...queued, state: "running" };
  // Applying again after a crash is harmless: resyncs and deactivations are idempotent.
  if (!(await deps.runs.transition(run, ["queued", "running"]))) return deps.runs.get(runId);
  const log = deps.logger.child({ module: "reconcile", runId, source: run.source });
  try {
    const ctx = new RunContext(deps, run);
    const applied = await applyAndCount(deps, ctx, run, log);
    await deps.runs.dropOwnedKeys(runId);
    run = { ...run, state: "succeeded", repairs: { ...applied, applied: true } };
    log.info({ repairs: run.repairs }, "reconcile: confirmed run applied");
  } catch (err) {
    run = { ...run, state: "failed", error: err instanceof Error ? err.message : String(err) };
    log.error({ err: run.error }, "reconcile: applying a confirmed run failed");
  }
  await deps.runs.transition(run, ["running"]);
  return run;
}
