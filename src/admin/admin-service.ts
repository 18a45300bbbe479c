import { snapshotEntity } from "../directory/snapshot-entity.js";
import type { Config } from "../config/config-schema.js";
import type { DirectoryStore } from "../directory/directory-types.js";
import { AppError, NotFoundError } from "../errors.js";
import { recordReconcileRun } from "../observability/bridge-metrics.js";
import type { Registry } from "../observability/metrics.js";
import type { ReconcileRun, ResyncOperation, ResyncScope } from "../reconcile/reconcile-run.js";
import type { GuardResult } from "../reconcile/reconcile-types.js";
import type { EntityKind, EntityRef } from "../scim/scim-types.js";
import type { StoredDeadLetter, SyncStateReader } from "../sync/sync-state-types.js";
import type { AdminPrincipal } from "./admin-principals.js";
import type { AuditLog } from "./audit-log.js";
import type { ReconcileRunStore } from "./reconcile-run-store.js";
import type { ResyncStore } from "./resync-store.js";

export type QueueCounts = Record<string, Record<string, number>>;

/** What the admin surface needs from the jobs layer (wired by the composition root). */
export interface AdminJobPorts {
  /** Job counts per queue and state (sync, lifecycle, reconcile, resync). */
  queueCounts(): Promise<QueueCounts>;
  /** Dirty entities plus queued lifecycle changes. */
  pending(): Promise<number>;
  /**
   * The queues paused for the platform (a `Retry-After` longer than a minute) and when each pause
   * ends (epoch ms). Absent: none is reported.
   */
  pausedQueues?(): Promise<Array<{ queue: string; until: number }>>;
  /** Enqueues a reconciliation run (`run`), or the repairs of a confirmed run (`apply`). */
  enqueueReconcile(runId: string, phase: "run" | "apply"): Promise<void>;
  enqueueResync(opId: string, phase: "run" | "apply"): Promise<void>;
  /** Marks entities dirty and enqueues their syncs in resync mode (the pipeline's one code path). */
  requestResync(refs: EntityRef[]): Promise<void>;
  /**
   * Drops what the sync state still records of an entity the directory no longer holds (its
   * status, applied record, claims: forgetAbsent), as the sync of an absent entity does; for an
   * entity no sync can run for (its source taken out of the configuration).
   */
  forgetAbsent(ref: EntityRef): Promise<void>;
}

export interface AdminServiceDeps {
  config: Config;
  directory: Pick<
    DirectoryStore,
    | "countEntities"
    | "countDirty"
    | "snapshotUser"
    | "snapshotGroup"
    | "findUserId"
    | "findGroupId"
    | "purgeTombstone"
  >;
  syncState: SyncStateReader;
  runs: ReconcileRunStore;
  resyncs: ResyncStore;
  audit: AuditLog;
  jobs: AdminJobPorts;
  /** Names of the reconciliation and resync queues (default "reconcile", "resync"). */
  operationQueues?: string[];
  /** Where a run an admin discards is counted (reconcile_runs_total). */
  registry?: Registry;
}

/** A run or resync that waits for an admin's confirmation (GET /status `awaitingConfirmation`). */
export interface HeldOperation {
  kind: "reconcile" | "resync";
  id: string;
  source: string;
  plannedDeprovisions?: number;
  ownedUsers?: number;
}

const BUSY_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"];

/**
 * `idle` of GET /status: nothing pending, no job waiting, running or delayed in the sync and
 * lifecycle queues, and no reconciliation or resync waiting or running. The job scheduler's next
 * run sits delayed in the reconcile queue all the time, so delayed jobs there do not count.
 */
export function isIdle(pending: number, queues: QueueCounts, operationQueues: readonly string[]): boolean {
  if (pending > 0) return false;
  return Object.entries(queues).every(([name, counts]) =>
    BUSY_STATES.every(
      (state) => (operationQueues.includes(name) && state === "delayed") || (counts[state] ?? 0) === 0,
    ),
  );
}

function invalidState(message: string): AppError {
  return new AppError(message, { status: 409, code: "invalid_state" });
}

/** The admin surface's use cases: thin over the stores and the jobs layer. */
export class AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

  requireSource(source: string): void {
    if (!Object.hasOwn(this.deps.config.sources, source)) {
      const configured = Object.keys(this.deps.config.sources).join(", ");
      throw new NotFoundError(`Unknown source ${source} (configured: ${configured || "none"})`);
    }
  }

  async status(): Promise<{
    idle: boolean;
    pending: number;
    deadLetters: number;
    queues: QueueCounts;
    sources: Record<string, { users: number; groups: number; deadLetters: number }>;
    awaitingConfirmation: HeldOperation[];
    lateWrites: { count: number; until: string | null };
    pausedQueues: Array<{ queue: string; until: string }>;
  }> {
    const { directory, syncState, jobs, config } = this.deps;
    const [pending, deadLetters, queues, operations, late, paused] = await Promise.all([
      jobs.pending(),
      syncState.countDeadLetters(),
      jobs.queueCounts(),
      this.recentOperations(),
      syncState.lateWrites(),
      jobs.pausedQueues?.() ?? [],
    ]);
    const awaitingConfirmation = this.heldOperations(operations);
    // A run or resync waiting for the entities it enqueued to settle is still running: its job
    // waits delayed between two looks, which the queue counts alone would take for idle.
    const running = [...operations.runs, ...operations.resyncs].some((op) => op.state === "running");
    const idle = !running && isIdle(pending, queues, this.deps.operationQueues ?? ["reconcile", "resync"]);
    const sources: Record<string, { users: number; groups: number; deadLetters: number }> = {};
    await Promise.all(
      Object.keys(config.sources).map(async (source) => {
        const [users, groups, dead] = await Promise.all([
          directory.countEntities(source, "user"),
          directory.countEntities(source, "group"),
          syncState.listDeadLetters({ source, offset: 0, limit: 1 }),
        ]);
        sources[source] = { users, groups, deadLetters: dead.total };
      }),
    );
    // Why `idle` may be false with every queue empty: platform writes that may still land late
    // (counted in `pending` too), and when the last of them is checked.
    const lateWrites = {
      count: late.count,
      until: late.until === null ? null : new Date(late.until).toISOString(),
    };
    // Why jobs wait and none runs: the platform asked for a pause (Retry-After), and until when.
    const pausedQueues = paused.map((p) => ({ queue: p.queue, until: new Date(p.until).toISOString() }));
    return { idle, pending, deadLetters, queues, sources, awaitingConfirmation, lateWrites, pausedQueues };
  }

  /**
   * Every stored run and resync (what GET /status looks through for held and running ones). A held
   * one is never trimmed, however many came after it, so all are read, page by page (the stores'
   * `listAll`, safe against runs started or trimmed during the reading): the stores keep
   * `reconcile.keepRuns` finished ones per source (and 50 resyncs) besides the unfinished.
   */
  private async recentOperations(): Promise<{ runs: ReconcileRun[]; resyncs: ResyncOperation[] }> {
    const [runs, resyncs] = await Promise.all([this.deps.runs.listAll(), this.deps.resyncs.listAll()]);
    return { runs, resyncs };
  }

  /**
   * Reconciliation runs and resyncs held by the deprovisioning guard, oldest first: they do not
   * hold `idle` false, and nothing of theirs is applied until an admin settles them.
   */
  private heldOperations({
    runs,
    resyncs,
  }: {
    runs: ReconcileRun[];
    resyncs: ResyncOperation[];
  }): HeldOperation[] {
    const held = (kind: HeldOperation["kind"], id: string, op: { source: string; guard?: GuardResult }) => ({
      kind,
      id,
      source: op.source,
      ...(op.guard
        ? { plannedDeprovisions: op.guard.plannedDeprovisions, ownedUsers: op.guard.ownedUsers }
        : {}),
    });
    return [
      ...runs.filter((r) => r.state === "awaiting-confirmation").map((r) => held("reconcile", r.runId, r)),
      ...resyncs.filter((r) => r.state === "awaiting-confirmation").map((r) => held("resync", r.id, r)),
    ].reverse();
  }

  async sources(): Promise<
    Array<{ id: string; target: unknown; onDelete: string; users: number; groups: number }>
  > {
    const { config, directory } = this.deps;
    return Promise.all(
      Object.entries(config.sources).map(async ([id, source]) => ({
        id,
        target: source.target,
        onDelete: source.onDelete,
        attributes: Object.keys(source.attributes),
        users: await directory.countEntities(id, "user"),
        groups: await directory.countEntities(id, "group"),
      })),
    );
  }

  async entityStatus(ref: EntityRef): Promise<Record<string, unknown>> {
    this.requireSource(ref.source);
    const { directory, syncState } = this.deps;
    const snapshot = await snapshotEntity(directory, ref);
    const [status, lateWriteDue] = await Promise.all([syncState.getStatus(ref), syncState.checkDueAt(ref)]);
    if (!snapshot && !status) {
      // An operator often knows the userName (or displayName), not the id: say how to find it.
      const [key, option] =
        ref.kind === "user" ? ["userName", "--user-name"] : ["displayName", "--group-name"];
      throw new NotFoundError(
        `No ${ref.kind} ${ref.id} in source ${ref.source} (ids are the bridge's SCIM ids; to find one by ` +
          `${key}: GET /sources/${ref.source}/${ref.kind}s?${key}=… or scim-bridge status ${ref.source} ${option} …)`,
      );
    }
    const desired = snapshot?.desired ?? null;
    return {
      ...ref,
      desired: desired ? desired.resource : null,
      deletedAtSource: snapshot !== null && desired === null,
      generation: snapshot?.generation ?? null,
      ...(desired && "memberCount" in desired ? { memberCount: desired.memberCount } : {}),
      state: status?.state ?? "pending",
      platformId: status?.platformId ?? null,
      lastApplied:
        status?.appliedGeneration !== undefined
          ? { generation: status.appliedGeneration, at: status.lastSyncedAt ?? null }
          : null,
      lastError: status?.lastError ?? null,
      // A write of this entity that may still land on the platform: until then its deletion or
      // rename waits (lastError `waiting_for_late_write`), and its platform object is read again.
      lateWriteUntil: lateWriteDue === null ? null : new Date(lateWriteDue).toISOString(),
    };
  }

  /**
   * The sync status of the entity an operator names by a key they know (a user's userName or a
   * group's displayName, case-insensitive as in SCIM lookups, or the externalId): `{items: []}`
   * when the source holds none (a deleted entity is no longer found by its name).
   */
  async findEntityStatus(
    source: string,
    kind: EntityKind,
    key: { userName?: string; displayName?: string; externalId?: string },
  ): Promise<{ items: Record<string, unknown>[] }> {
    this.requireSource(source);
    const { directory } = this.deps;
    const id =
      kind === "user"
        ? await directory.findUserId(source, { userName: key.userName, externalId: key.externalId })
        : await directory.findGroupId(source, { displayName: key.displayName, externalId: key.externalId });
    return { items: id ? [await this.entityStatus(entityRef(source, kind, id))] : [] };
  }

  async triggerReconcile(source: string, dryRun: boolean, actor: AdminPrincipal): Promise<ReconcileRun> {
    this.requireSource(source);
    const run = await this.deps.runs.createRun({ source, dryRun, trigger: "admin", requestedBy: actor.name });
    await this.deps.jobs.enqueueReconcile(run.runId, "run");
    await this.audit(actor, "reconcile.trigger", source, { runId: run.runId, dryRun });
    return run;
  }

  async getRun(runId: string): Promise<ReconcileRun> {
    const run = await this.deps.runs.get(runId);
    if (!run) throw new NotFoundError(`No reconciliation run ${runId}`);
    return run;
  }

  /** Confirms a guarded run: its held repairs (deprovisioning included) are applied. */
  async confirmRun(runId: string, actor: AdminPrincipal): Promise<ReconcileRun> {
    const { run, next } = await this.settleRun(runId, actor, "queued");
    await this.deps.jobs.enqueueReconcile(runId, "apply");
    await this.audit(actor, "reconcile.confirm", run.source, { runId });
    return next;
  }

  async discardRun(runId: string, actor: AdminPrincipal): Promise<ReconcileRun> {
    const { run, next } = await this.settleRun(runId, actor, "discarded");
    if (this.deps.registry) recordReconcileRun(this.deps.registry, run.source, next.state);
    await this.deps.runs.dropOwnedKeys(runId);
    await this.audit(actor, "reconcile.discard", run.source, { runId });
    return next;
  }

  /** Moves a run that awaits confirmation to `state`, once (a second settle is refused). */
  private async settleRun(
    runId: string,
    actor: AdminPrincipal,
    state: "queued" | "discarded",
  ): Promise<{ run: ReconcileRun; next: ReconcileRun }> {
    const run = await this.getRun(runId);
    const next: ReconcileRun = { ...run, state, settledBy: actor.name, settledAt: new Date().toISOString() };
    if (
      run.state !== "awaiting-confirmation" ||
      !(await this.deps.runs.transition(next, ["awaiting-confirmation"]))
    ) {
      // Refused settlements are audited too: who tried to confirm what, and what it was by then.
      const current = (await this.deps.runs.get(runId))?.state ?? run.state;
      const action = state === "queued" ? "reconcile.confirm" : "reconcile.discard";
      await this.audit(actor, action, run.source, { runId, state: current }, "refused");
      throw invalidState(`Run ${runId} is ${current}, not awaiting-confirmation`);
    }
    return { run, next };
  }

  async triggerResync(
    source: string,
    requested: ResyncScope,
    actor: AdminPrincipal,
  ): Promise<ResyncOperation> {
    this.requireSource(source);
    // An id named twice (a script's list) is one entity: counted once in `total`, by the guard and
    // in the outcome.
    const scope: ResyncScope =
      "all" in requested
        ? requested
        : { users: [...new Set(requested.users)], groups: [...new Set(requested.groups)] };
    const op = await this.deps.resyncs.createOperation({ source, scope, requestedBy: actor.name });
    await this.deps.jobs.enqueueResync(op.id, "run");
    await this.audit(actor, "resync.trigger", source, {
      operationId: op.id,
      scope: "all" in scope ? "all" : `${scope.users.length} users, ${scope.groups.length} groups`,
    });
    return op;
  }

  async getResync(id: string): Promise<ResyncOperation> {
    const op = await this.deps.resyncs.get(id);
    if (!op) throw new NotFoundError(`No resync ${id}`);
    return op;
  }

  async settleResync(
    id: string,
    decision: "confirm" | "discard",
    actor: AdminPrincipal,
  ): Promise<ResyncOperation> {
    const op = await this.getResync(id);
    const next: ResyncOperation = {
      ...op,
      state: decision === "confirm" ? "queued" : "discarded",
      settledBy: actor.name,
      settledAt: new Date().toISOString(),
    };
    if (
      op.state !== "awaiting-confirmation" ||
      !(await this.deps.resyncs.transition(next, ["awaiting-confirmation"]))
    ) {
      const current = (await this.deps.resyncs.get(id))?.state ?? op.state;
      await this.audit(
        actor,
        `resync.${decision}`,
        op.source,
        { operationId: id, state: current },
        "refused",
      );
      throw invalidState(`Resync ${id} is ${current}, not awaiting-confirmation`);
    }
    if (decision === "confirm") await this.deps.jobs.enqueueResync(id, "apply");
    await this.audit(actor, `resync.${decision}`, op.source, { operationId: id });
    return next;
  }

  /**
   * Retries dead letters: each entity is resynced, and its letter removed only once the resync is
   * requested (a failed request leaves the letters listed, and the call fails). A letter a sync
   * wrote again meanwhile (the entity failed again) is not the one read, and stays. All of them:
   * every letter present when the call begins, each once (deadLetterPages).
   */
  async retryDeadLetters(refs: EntityRef[] | "all", actor: AdminPrincipal): Promise<{ retried: number }> {
    const { syncState, jobs } = this.deps;
    const retry = async (letters: StoredDeadLetter[]): Promise<void> => {
      if (letters.length === 0) return;
      await jobs.requestResync(letters.map((read) => read.letter.ref));
      for (const read of letters) await syncState.removeDeadLetterIfUnchanged(read);
    };
    let retried = 0;
    if (refs === "all") {
      // Each letter there at the start, once: one that fails again meanwhile is not retried twice
      // (nor does it push out one not yet read), and one written meanwhile is left for later.
      for await (const page of syncState.deadLetterPages()) {
        await retry(page);
        retried += page.length;
      }
    } else {
      const present: StoredDeadLetter[] = [];
      for (const ref of refs) {
        const read = await syncState.getDeadLetter(ref);
        if (read && !present.some((p) => refLabel(p.letter.ref) === refLabel(ref))) present.push(read);
      }
      await retry(present);
      retried = present.length;
    }
    await this.audit(actor, "dead-letters.retry", refs === "all" ? "all" : refs.map(refLabel).join(","), {
      retried,
    });
    return { retried };
  }

  /**
   * Discards a dead letter. A live entity stays `dead` (nothing reached the platform), and its
   * status says the letter is gone: a retry of it would find none; a resync of the entity syncs it
   * again. A deleted entity (a tombstone) whose deprovisioning failed for good is given up instead:
   * releaseTombstone (`released`: its platform object is no source's any more).
   *
   * The letter goes last, and only as it was read (a sync that failed again meanwhile wrote one of
   * its own, which stays): a discard that fails or is killed part way leaves the letter, so the
   * same discard can be run again and finishes the release.
   */
  async discardDeadLetter(ref: EntityRef, actor: AdminPrincipal): Promise<{ released: boolean }> {
    const { syncState } = this.deps;
    const letter = await syncState.getDeadLetter(ref);
    if (!letter) throw new NotFoundError(`No dead letter for ${refLabel(ref)}`);
    const status = await syncState.getStatus(ref);
    const released = status?.state === "dead" && (await this.releaseTombstone(ref));
    const removed = await syncState.removeDeadLetterIfUnchanged(letter);
    // Not when another discard took the letter first (it may have forgotten the status since), nor
    // when a sync failed again meanwhile (its status and letter are the news).
    if (!released && removed && status?.state === "dead" && status.lastError) {
      const discarded = { discardedBy: actor.name, discardedAt: new Date().toISOString() };
      await syncState.setStatus({ ...status, lastError: { ...status.lastError, ...discarded } });
    }
    await this.audit(actor, "dead-letters.discard", refLabel(ref), released ? { released: true } : undefined);
    return { released };
  }

  /**
   * An admin gave up the deprovisioning of a deleted entity (its letter discarded): the bridge lets
   * go of it. Its tombstone is purged, so its claim on its platform object (and the name) is a
   * record of an entity that no longer exists, which the next claim takes over (ownership.ts: an
   * entity given that name again adopts the platform object, as any unowned one of its name); then
   * its sync, of an entity now absent, drops the rest of what is recorded of it (forgetAbsent,
   * invariant 6). Nothing is written to the platform: the object stays as it is, no source's any
   * more, and reconciliation reports it as an orphan (the `orphans` policy decides). False when
   * the entity is not a tombstone.
   *
   * A sync of the tombstone already running (it read the tombstone before the purge) may still plan
   * its deprovisioning: a user's change it queues is dropped unsent by the lifecycle flusher, which
   * sends no deprovisioning of a tombstone that is gone (lifecycle-flusher.ts withoutReleased); a
   * group's delete looks once more right before it goes (sync-group.ts, sync-embed-group.ts); and
   * the dirty marker the purge left brings the sync that forgets what that run recorded. A bulk call
   * already on the wire when the admin discards cannot be called back: that one deprovisioning lands
   * (the admin gave up an object whose deprovisioning was already going out), and the object stays
   * released all the same: no source owns it, nothing of the entity is left.
   */
  private async releaseTombstone(ref: EntityRef): Promise<boolean> {
    const { directory, jobs } = this.deps;
    const snapshot = await snapshotEntity(directory, ref);
    // A source taken out of the configuration runs no sync (one of its entities is dead-lettered
    // `unknown_source`, the letter being discarded back again): what is recorded of it goes here.
    // An entity already gone from the directory is one a discard purged before it was killed: its
    // letter is still there, and this discard forgets the rest (its status, record and claim).
    if (!this.deps.config.sources[ref.source]) {
      if (snapshot !== null) {
        if (snapshot.desired !== null) return false;
        if (!(await directory.purgeTombstone(ref, snapshot.generation))) return false;
      }
      await jobs.forgetAbsent(ref);
      return true;
    }
    if (snapshot === null || snapshot.desired !== null) return false;
    // Purged before its sync is requested: a sync of the tombstone would deprovision it again. The
    // purge leaves it dirty in the same script, so a request that fails (or a crash) after it still
    // brings that sync (the sweeper); without it, its status, record and claim would stay for ever.
    if (!(await directory.purgeTombstone(ref, snapshot.generation, { syncAgain: true }))) return false;
    await jobs.requestResync([ref]);
    return true;
  }

  // A `source` filter names a configured source, as every other route's source does: a typo
  // (`--source Okta`) is a 404 naming it, never an empty list that reads as "nothing failed".
  async listRuns(query: { source?: string; offset: number; limit: number }) {
    return this.listOfSource(query, this.deps.runs.list(query));
  }

  async listResyncs(query: { source?: string; offset: number; limit: number }) {
    return this.listOfSource(query, this.deps.resyncs.list(query));
  }

  async listDeadLetters(query: { source?: string; offset: number; limit: number }) {
    return this.listOfSource(query, this.deps.syncState.listDeadLetters(query));
  }

  /**
   * A list filtered by `source`: a source that is not configured is a 404 naming it (a typo never
   * lists nothing as if nothing had failed), unless it still has items, as a source taken out of
   * the configuration keeps its dead letters, runs and resyncs.
   */
  private async listOfSource<T extends { total: number }>(
    query: { source?: string },
    list: Promise<T>,
  ): Promise<T> {
    const result = await list;
    if (query.source !== undefined && result.total === 0) this.requireSource(query.source);
    return result;
  }

  listAudit(query: { offset: number; limit: number }) {
    return this.deps.audit.list(query);
  }

  async audit(
    actor: AdminPrincipal,
    action: string,
    target: string,
    details?: Record<string, string | number | boolean>,
    outcome: "accepted" | "refused" = "accepted",
  ): Promise<void> {
    await this.deps.audit.record({
      actor: actor.name,
      role: actor.role,
      action,
      target,
      outcome,
      details,
    });
  }
}

export function refLabel(ref: EntityRef): string {
  return `${ref.source}/${ref.kind}/${ref.id}`;
}

export function entityRef(source: string, kind: EntityKind, id: string): EntityRef {
  return { source, kind, id };
}
