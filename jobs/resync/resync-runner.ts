import { type RepairOutcome, type TrackedResync, startedOutcome } from "../../src/admin/repair-outcome.js";
import type { ResyncStore } from "../../src/admin/resync-store.js";
import type { Config } from "../../src/config/config-schema.js";
import type { DirectoryStore, UserRecord } from "../../src/directory/directory-types.js";
import type { Logger } from "../../src/observability/logger.js";
import type { PlatformClient } from "../../src/platform/platform-types.js";
import { embedMemberId, resolveEmbedTenant } from "../../src/mapping/plan-embed-group.js";
import type { AppliedEmbedGroup, AppliedUser } from "../../src/mapping/plan-types.js";
import { isPlatformError } from "../../src/platform/platform-error.js";
import { evaluateGuard } from "../../src/reconcile/deprovision-guard.js";
import type { ResyncOperation } from "../../src/reconcile/reconcile-run.js";
import { type EntityKind, type EntityRef, parseRefKey, refKey } from "../../src/scim/scim-types.js";
import { type DirtyReader, syncDeprovisionsItself } from "../reconcile/deprovision-under-way.js";
import { type JobLease, isJobHandedOn, recordFailure } from "../job-lease.js";
import { failureLogFields } from "../reconcile/failure-log-fields.js";
import type { ReconcileSyncState, ResyncRequester } from "../reconcile/reconcile-ports.js";
import {
  type SettleOptions,
  finishedFields,
  sameProgress,
  settlePass,
  stalled,
} from "../reconcile/repair-settlement.js";
import type { OwnedCounts } from "../reconcile/sync-state-adapter.js";

export interface ResyncDeps {
  config: Config;
  /**
   * The guard also reads, when given: an embed-tenant source's groups' members
   * (listEmbedGroupMembers), and the platform user a user without a platform id would adopt
   * (findUserByUserName).
   */
  platform: Pick<PlatformClient, "getUser"> &
    Partial<Pick<PlatformClient, "listEmbedGroupMembers" | "findUserByUserName">>;
  directory: Pick<DirectoryStore, "snapshotUser" | "snapshotGroup" | "scanIds" | "countEntities">;
  state: Pick<ReconcileSyncState, "getUserPlatformIds" | "countEmbedUsers"> &
    Partial<
      Pick<
        ReconcileSyncState,
        "getApplied" | "ownersOf" | "getEmbedMembers" | "queuedLifecycle" | "changedSinceSync"
      >
    > &
    OwnedCounts;
  requestResync: ResyncRequester;
  resyncs: ResyncStore;
  logger: Logger;
  /** Entities marked dirty and enqueued per chunk. Default 250. */
  chunk?: number;
  /**
   * Which entities have a sync ahead of them (dirty): a user the identity provider deprovisioned a
   * moment ago, whose pending sync does it by itself, is not counted by the guard
   * (deprovision-under-way.ts). Without it, every such user counts.
   */
  dirty?: DirtyReader;
  /**
   * Tracks the enqueued entities until each synced or failed: the resync stays `running` meanwhile
   * and ends `succeeded` only when none failed (`outcome`). Without it, it ends once enqueued.
   */
  settle?: SettleOptions;
  /**
   * The job the resync is processed under (per job, set by processResyncJob): checked before each
   * chunk of its Redis work, so that a resync whose job was handed back to the queue (a forced
   * close) or moved on (its lock ran out) stops here, quietly, while the next holder runs it: no
   * second fan-out, no second writer of its record, no held set read after the other dropped it.
   */
  lease?: JobLease;
}

const MAX_UNKNOWN_LISTED = 100;

async function* chunked(ids: readonly string[], size: number): AsyncIterable<string[]> {
  for (let start = 0; start < ids.length; start += size) yield ids.slice(start, start + size);
}

function targets(deps: ResyncDeps, op: ResyncOperation, kind: EntityKind): AsyncIterable<string[]> {
  const size = deps.chunk ?? 250;
  if ("all" in op.scope) return deps.directory.scanIds(op.source, kind, size);
  return chunked(kind === "user" ? op.scope.users : op.scope.groups, size);
}

async function exists(deps: ResyncDeps, source: string, kind: EntityKind, id: string): Promise<boolean> {
  const snapshot =
    kind === "user"
      ? await deps.directory.snapshotUser(source, id)
      : await deps.directory.snapshotGroup(source, id);
  return snapshot !== null;
}

/** What deprovisionCandidates reads (a resync's deps, or a reconciliation's). */
type CandidateDeps = Pick<ResyncDeps, "config" | "directory" | "platform" | "dirty"> & {
  state: Pick<ReconcileSyncState, "getUserPlatformIds"> &
    Partial<Pick<ReconcileSyncState, "getApplied" | "ownersOf" | "queuedLifecycle" | "changedSinceSync">>;
};

/**
 * The users of a chunk a resync would deactivate or delete: users inactive or deleted at the
 * source whose platform user is still there and active (or, with onDelete delete, there at all).
 * Only those are read on the platform. Embed-tenant sources own no platform users.
 */
export async function deprovisionCandidates(
  deps: CandidateDeps,
  sourceId: string,
  ids: readonly string[],
): Promise<string[]> {
  const source = deps.config.sources[sourceId];
  if (source?.target !== "workspace") return [];
  const snapshots = await Promise.all(ids.map((id) => deps.directory.snapshotUser(sourceId, id)));
  const candidates = ids.filter((_id, index) => {
    const snapshot = snapshots[index];
    return snapshot && (snapshot.desired === null || snapshot.desired.resource.active === false);
  });
  if (candidates.length === 0) return [];
  const [pids, dirty] = await Promise.all([
    deps.state.getUserPlatformIds(sourceId, candidates),
    deps.dirty?.(candidates.map((id) => refKey({ source: sourceId, kind: "user", id }))) ?? [],
  ]);
  const found = await Promise.all(
    candidates.map(async (id, index) => {
      const pid = pids[index];
      const desired = snapshots[ids.indexOf(id)]?.desired;
      if (!pid) return adoptedAndDeactivated(deps, sourceId, desired?.resource);
      if (dirty[index] && (await syncDeprovisionsUser(deps, sourceId, id, pid, desired))) return false;
      const user = await deps.platform.getUser(pid);
      // Gone behind the bridge's back: the sync creates it again, and a 409 from an active
      // platform user of that userName (recreated there, say) is adopted and deactivated.
      if (!user) return adoptedAndDeactivated(deps, sourceId, desired?.resource);
      const tombstone = desired === null;
      return user.active !== false || (tombstone && source.onDelete === "delete");
    }),
  );
  return candidates.filter((_id, index) => found[index]);
}

/** Whether a dirty user's pending sync deprovisions it by itself (deprovision-under-way.ts). */
async function syncDeprovisionsUser(
  deps: Pick<CandidateDeps, "config" | "state">,
  source: string,
  id: string,
  platformId: string,
  desired: UserRecord | null | undefined,
): Promise<boolean> {
  if (desired === undefined || !deps.state.getApplied) return false;
  const ref: EntityRef = { source, kind: "user", id };
  const [applied, queued, changed] = await Promise.all([
    deps.state.getApplied<AppliedUser>(ref),
    deps.state.queuedLifecycle?.(platformId),
    deps.state.changedSinceSync?.(ref) ?? true,
  ]);
  return syncDeprovisionsItself(
    desired === null ? { state: "tombstone" } : { state: "present", resource: desired.resource },
    applied?.lifecycle,
    deps.config.sources[source]?.onDelete ?? "deactivate",
    queued,
    changed,
  );
}

/**
 * A user inactive at the source without a platform id (never synced, or the sync state was lost):
 * its sync meets a 409 from the platform user of that userName, adopts it unless another source
 * owns it, and deactivates it when it is active (sync-user.ts). Tombstones without a platform id
 * are not counted (their sync finds nothing to adopt by id).
 */
async function adoptedAndDeactivated(
  deps: Pick<CandidateDeps, "platform" | "state">,
  source: string,
  user: { active?: unknown; userName?: unknown } | undefined,
): Promise<boolean> {
  if (user?.active !== false || typeof user.userName !== "string") return false;
  const find = deps.platform.findUserByUserName?.bind(deps.platform);
  if (!find) return false;
  const holder = await find(user.userName);
  if (!holder || holder.active === false) return false;
  const [owner] = (await deps.state.ownersOf?.("user", [holder.id])) ?? [null];
  return !owner || ownerSource(owner) === source;
}

/** The source of an owner refKey (null when it cannot be read). */
function ownerSource(owner: string): string | null {
  try {
    return parseRefKey(owner).source;
  } catch {
    return null;
  }
}

/**
 * Counts the users a resync would deactivate or delete, and records them on the operation: if it
 * is held, they are what the admin is shown, and all a confirmation may deprovision.
 */
async function plannedDeprovisions(
  deps: ResyncDeps,
  op: ResyncOperation,
): Promise<{ planned: number; owned?: number }> {
  // The pass starts over from nothing (what a handed-on pass held is dropped), unless the job was
  // handed on meanwhile: then this drop would take what the next holder wrote (OperationNotHeld).
  await deps.resyncs.dropOwnedKeys(op.id, deps.lease?.holder);
  // Embed-tenant sources own no platform users: their users are embed users.
  if (deps.config.sources[op.source]?.target !== "workspace") return plannedEmbedDeprovisions(deps, op);
  let planned = 0;
  for await (const ids of targets(deps, op, "user")) {
    await deps.lease?.check();
    const found = await deprovisionCandidates(deps, op.source, ids);
    await deps.resyncs.addHeld(op.id, found, deps.lease?.holder);
    planned += found.length;
  }
  return { planned };
}

/** The groups a resync of an embed-tenant source resyncs: every group, or those named. */
async function* embedScopeGroups(deps: ResyncDeps, op: ResyncOperation): AsyncIterable<string[]> {
  if ("all" in op.scope) {
    yield* deps.directory.scanIds(op.source, "group", deps.chunk ?? 250);
    return;
  }
  yield op.scope.groups;
}

/**
 * Users named in a resync of an embed-tenant source whose sync takes them out of every group of
 * the tenant: inactive or deleted at the source while the sync's record still has them active (it
 * records them inactive, and their groups follow).
 */
async function embedUsersLeaving(deps: ResyncDeps, op: ResyncOperation): Promise<string[]> {
  if ("all" in op.scope || op.scope.users.length === 0 || !deps.state.getEmbedMembers) return [];
  const ids = op.scope.users;
  const [infos, snapshots] = await Promise.all([
    deps.state.getEmbedMembers(op.source, ids),
    Promise.all(ids.map((id) => deps.directory.snapshotUser(op.source, id))),
  ]);
  return ids.filter((_id, index) => {
    const snapshot = snapshots[index];
    if (infos[index]?.active !== true || !snapshot) return false;
    return snapshot.desired === null || snapshot.desired.resource.active === false;
  });
}

/** The embed externalIds of a group's members that are active at the source (as syncEmbedUser maps them). */
async function activeEmbedMembers(
  deps: ResyncDeps,
  source: string,
  ids: readonly string[],
): Promise<string[]> {
  const [snapshots, infos] = await Promise.all([
    Promise.all(ids.map((id) => deps.directory.snapshotUser(source, id))),
    deps.state.getEmbedMembers ? deps.state.getEmbedMembers(source, [...ids]) : [],
  ]);
  return snapshots.flatMap((snapshot, index) => {
    const user = snapshot?.desired?.resource;
    if (!user || user.active === false) return [];
    // The id the sync keeps for the member (a userName changed in case only keeps the recorded one).
    return [embedMemberId(user, infos[index]?.externalId)];
  });
}

/** What resyncing one embed group does to its members: tenant/externalId keys of each set. */
interface EmbedGroupChange {
  members: string[];
  kept: string[];
  removed: string[];
}

/** How a held set names an embed user taken out of a group (beside workspace user ids). */
function heldEmbedKey(key: string): string {
  return `embed:${key}`;
}

/**
 * What a resync of one group of an embed-tenant source does to its members, read on the platform
 * (a resync does not trust the record of what was applied): the embed users in it now, those it
 * leaves in (or puts in) it, those it takes out. null: not a group of the directory, or not an
 * embed-tenant source.
 */
async function embedGroupChange(
  deps: ResyncDeps,
  source: string,
  id: string,
): Promise<EmbedGroupChange | null> {
  const target = deps.config.sources[source]?.target;
  const listMembers = deps.platform.listEmbedGroupMembers?.bind(deps.platform);
  const getApplied = deps.state.getApplied?.bind(deps.state);
  if (!target || target === "workspace" || !listMembers || !getApplied) return null;
  const [snapshot, applied] = await Promise.all([
    deps.directory.snapshotGroup(source, id),
    getApplied<AppliedEmbedGroup>({ source, kind: "group", id }),
  ]);
  if (!snapshot) return null;
  const key = (tenant: string, externalId: string) => `${tenant}/${externalId}`;
  const tenant = applied?.tenant;
  const actual: string[] = [];
  if (tenant && applied?.platformId) {
    try {
      for await (const member of listMembers(tenant, applied.platformId)) actual.push(member.externalId);
    } catch (err) {
      // Deleted behind the bridge's back: nobody is in it to be taken out.
      if (!(isPlatformError(err) && err.httpStatus === 404)) throw err;
    }
  }
  const record = snapshot.desired;
  // A name that gives no tenant keeps the group where it is, following its membership (sync-embed-group.ts).
  const wantTenant = record
    ? (resolveEmbedTenant(target, record.resource.displayName) ?? tenant ?? null)
    : null;
  const expected =
    record && wantTenant
      ? await activeEmbedMembers(
          deps,
          source,
          (record.members ?? []).map((member) => member.value),
        )
      : [];
  const keep = new Set(wantTenant === tenant ? expected : []);
  return {
    members: tenant ? actual.map((externalId) => key(tenant, externalId)) : [],
    kept: wantTenant ? expected.map((externalId) => key(wantTenant, externalId)) : [],
    removed: tenant
      ? actual.filter((externalId) => !keep.has(externalId)).map((externalId) => key(tenant, externalId))
      : [],
  };
}

/**
 * Invariant 8 for an embed-tenant source, as reconciliation counts it (countEmbedDeprovisions in
 * jobs/reconcile/scan-platform-groups.ts): an embed user the resync would take out of every group
 * it resyncs is one planned deprovisioning; the users the source owns are those the sync recorded
 * as its embed users. Every removal from a group goes to the held set: a confirmed resync applies
 * a group only if it takes out no one else (fanOut).
 */
async function plannedEmbedDeprovisions(
  deps: ResyncDeps,
  op: ResyncOperation,
): Promise<{ planned: number; owned?: number }> {
  const done = new Set<string>();
  for await (const ids of embedScopeGroups(deps, op)) {
    await deps.lease?.check();
    for (const id of ids) {
      if (done.has(id)) continue;
      if (!("all" in op.scope)) done.add(id);
      const change = await embedGroupChange(deps, op.source, id);
      if (!change) continue;
      await deps.resyncs.addEmbedMembership(op.id, change, deps.lease?.holder);
      await deps.resyncs.addHeld(op.id, change.removed.map(heldEmbedKey), deps.lease?.holder);
    }
  }
  const leaving = await embedUsersLeaving(deps, op);
  await deps.lease?.check();
  await deps.resyncs.addHeld(op.id, leaving, deps.lease?.holder);
  const { planned, onPlatform } = await deps.resyncs.countEmbedDeprovisions(op.id, deps.lease?.holder);
  const synced = await deps.state.countEmbedUsers?.(op.source);
  return { planned: planned + leaving.length, owned: synced ?? onPlatform };
}

/**
 * Marks the entities dirty and enqueues their syncs, in chunks. A confirmed resync (`confirmed`)
 * leaves out what would deprovision someone not in its held set (the admin was not shown them:
 * withholdUnshown): those users and groups are returned, withheld.
 */
async function fanOut(
  deps: ResyncDeps,
  op: TrackedResync,
  confirmed: boolean,
): Promise<{ op: TrackedResync; withheld: string[]; withheldGroups: WithheldGroups }> {
  let current = op;
  const withheld: string[] = [];
  const withheldGroups: WithheldGroups = { ids: [], removals: [] };
  const embed = deps.config.sources[op.source]?.target !== "workspace";
  for (const kind of ["user", "group"] as const) {
    for await (const ids of targets(deps, current, kind)) {
      await deps.lease?.check();
      let known = ids;
      if (!("all" in current.scope)) {
        const present = await Promise.all(ids.map((id) => exists(deps, current.source, kind, id)));
        known = ids.filter((_id, index) => present[index]);
        const unknown = ids.filter((_id, index) => !present[index]).map((id) => `${kind}/${id}`);
        if (unknown.length > 0) {
          current = {
            ...current,
            unknown: [...current.unknown, ...unknown].slice(0, MAX_UNKNOWN_LISTED),
            total: current.total - unknown.length,
          };
        }
      }
      if (confirmed && known.length > 0) {
        const unshown = await withholdUnshown(deps, current.id, current.source, kind, embed, known);
        withheld.push(...unshown.users);
        withheldGroups.ids.push(...unshown.groups.ids);
        withheldGroups.removals.push(...unshown.groups.removals);
        known = unshown.kept;
      }
      if (known.length > 0) {
        const refs = known.map((id) => ({ source: current.source, kind, id }));
        await deps.lease?.check();
        await deps.requestResync(refs);
        // After the request (the entities are dirty by now): a pass never takes one for settled
        // on the strength of a sync that came before it.
        if (deps.settle) await deps.resyncs.track(current.id, refs.map(refKey), deps.lease?.holder);
      }
      current = { ...current, enqueued: current.enqueued + known.length };
      // Its progress is the next holder's to write once the job was handed on meanwhile.
      await deps.lease?.check();
      await deps.resyncs.transition(current, ["running"], deps.lease?.holder);
    }
  }
  return { op: current, withheld, withheldGroups };
}

/**
 * A confirmed resync's batch of `kind` entities without those whose sync would deprovision someone
 * the admin was not shown (not in the resync's held set): users it would deactivate or delete, and,
 * for an embed-tenant source, groups that would take an embed user out. Those are returned to be
 * held again (holdAgain), not synced.
 */
async function withholdUnshown(
  deps: ResyncDeps,
  opId: string,
  source: string,
  kind: EntityKind,
  embed: boolean,
  ids: string[],
): Promise<{ kept: string[]; users: string[]; groups: WithheldGroups }> {
  const users: string[] = [];
  const groups: WithheldGroups = { ids: [], removals: [] };
  if (kind === "user") {
    const candidates = await deprovisionCandidates(deps, source, ids);
    const shown = await deps.resyncs.heldAmong(opId, candidates);
    users.push(...new Set(candidates.filter((_id, index) => !shown[index])));
  } else if (embed) {
    for (const id of ids) {
      const removed = (await embedGroupChange(deps, source, id))?.removed.map(heldEmbedKey) ?? [];
      const shown = await deps.resyncs.heldAmong(opId, removed);
      if (removed.every((_key, index) => shown[index])) continue;
      groups.ids.push(id);
      groups.removals.push(...removed);
    }
  }
  const out = new Set([...users, ...groups.ids]);
  return { kept: out.size > 0 ? ids.filter((id) => !out.has(id)) : ids, users, groups };
}

/**
 * Groups of an embed-tenant source a confirmed resync did not resync: each would take out of it
 * an embed user the admin was not shown. `removals`: everything they take out (held keys).
 */
interface WithheldGroups {
  ids: string[];
  removals: string[];
}

/**
 * What a confirmed resync withheld (deprovisionings the admin was not shown) waits in a new resync
 * of those users (and, for an embed-tenant source, groups), created held with its own guard count:
 * applied only if an admin confirms it.
 */
async function holdAgain(
  deps: ResyncDeps,
  op: TrackedResync,
  withheld: string[],
  groups: WithheldGroups,
  log: Logger,
): Promise<TrackedResync> {
  const embedOwned = groups.ids.length > 0 ? await deps.state.countEmbedUsers?.(op.source) : undefined;
  const owned = embedOwned ?? (await deps.state.countOwnedUsers(op.source));
  // An embed user counted once, however many of the withheld groups it would leave.
  const planned = withheld.length + new Set(groups.removals).size;
  const guard = evaluateGuard(planned, owned, deps.config.reconcile.maxDeprovisionShare);
  const next = await deps.resyncs.createOperation({
    source: op.source,
    scope: { users: withheld, groups: groups.ids },
    requestedBy: op.requestedBy,
    held: { guard, users: [...withheld, ...groups.removals], from: op.id },
  });
  log.warn(
    {
      confirmed: op.guard?.plannedDeprovisions,
      withheld: withheld.length + groups.ids.length,
      heldAgainAs: next.id,
    },
    "resync: more users to deprovision than the admin confirmed; they wait in a new held resync",
  );
  return { ...op, withheld: withheld.length + groups.ids.length, heldAgainAs: next.id };
}

/**
 * Runs a resync: counts what it would deprovision (invariant 8: above the share it waits for an
 * admin), then marks the entities dirty and enqueues their syncs in resync mode, in chunks, with
 * progress stored on the operation. `apply` runs a confirmed one without asking again, but
 * deprovisions only the users its guard counted (the held set): any more found now are withheld
 * and held again in a new resync.
 */
export async function runResync(
  deps: ResyncDeps,
  id: string,
  phase: "run" | "apply",
): Promise<TrackedResync | null> {
  const queued = await deps.resyncs.get(id);
  // "running" here means the worker that ran it died (a stalled job handed on): start over, unless
  // its fan-out is done and only its entities are tracked (settleResync goes on with those).
  if (queued?.state !== "queued" && queued?.state !== "running") return queued;
  if (isResyncSettling(queued)) return queued;
  const startedMs = Date.now();
  let op: TrackedResync = {
    ...queued,
    state: "running",
    startedAt: queued.startedAt ?? new Date(startedMs).toISOString(),
    enqueued: 0,
    unknown: [],
  };
  if ("all" in op.scope) {
    const [users, groups] = await Promise.all([
      deps.directory.countEntities(op.source, "user"),
      deps.directory.countEntities(op.source, "group"),
    ]);
    op = { ...op, total: users + groups };
  } else {
    op = { ...op, total: op.scope.users.length + op.scope.groups.length };
  }
  await deps.lease?.check();
  if (!(await deps.resyncs.transition(op, ["queued", "running"], deps.lease?.holder)))
    return deps.resyncs.get(id);
  const log = deps.logger.child({ module: "resync", operationId: id, source: op.source });
  /** Set when the resync failed: told once its record is written (recordFailure). */
  let tellFailure: (() => void) | undefined;
  try {
    if (phase === "run") {
      const counted = await plannedDeprovisions(deps, op);
      const planned = counted.planned;
      const owned = counted.owned ?? (await deps.state.countOwnedUsers(op.source));
      const guard = evaluateGuard(planned, owned, deps.config.reconcile.maxDeprovisionShare);
      op = { ...op, guard };
      await deps.lease?.check();
      if (guard.tripped) {
        log.warn(
          { planned, owned },
          "resync: deprovisioning guard tripped; waiting for an admin's confirmation",
        );
        op = { ...op, state: "awaiting-confirmation", finishedAt: new Date().toISOString() };
        await deps.resyncs.transition(op, ["running"], deps.lease?.holder);
        return op;
      }
      await deps.resyncs.transition(op, ["running"], deps.lease?.holder);
    }
    const fanned = await fanOut(deps, op, phase === "apply");
    op = fanned.op;
    await deps.lease?.check();
    if (fanned.withheld.length > 0 || fanned.withheldGroups.ids.length > 0) {
      op = await holdAgain(deps, op, fanned.withheld, fanned.withheldGroups, log);
    }
    log.info({ enqueued: op.enqueued }, "resync: fan-out finished");
    if (deps.settle && op.enqueued > 0) {
      // Enqueued is not done: the resync runs on until its entities settle (settleResync).
      op = { ...op, outcome: startedOutcome(op.enqueued) };
      await deps.resyncs.transition(op, ["running"], deps.lease?.holder);
      await deps.resyncs.dropHeld(id);
      return op;
    }
    op = {
      ...op,
      ...(deps.settle ? { outcome: startedOutcome(0) } : {}),
      state: "succeeded",
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - startedMs,
    };
  } catch (err) {
    // Handed on: the next holder runs it (and owns its record and held set from here).
    if (isJobHandedOn(err)) throw err;
    op = {
      ...op,
      state: "failed",
      error: err instanceof Error ? err.message : String(err),
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - startedMs,
    };
    tellFailure = () => log.error(failureLogFields(err), "resync: failed");
  }
  const ended = op;
  const record = () => deps.resyncs.transition(ended, ["running"], deps.lease?.holder);
  await (tellFailure ? recordFailure(record, tellFailure) : record());
  await deps.resyncs.dropOwnedKeys(id);
  return op;
}

/** A resync whose fan-out is done and whose entities are still tracked: it stays `running`. */
export function isResyncSettling(op: TrackedResync | null | undefined): boolean {
  return op?.state === "running" && op.outcome !== undefined && !op.outcome.settled;
}

/**
 * One pass over a resync's tracked entities (repair-settlement.ts): ends the resync once all
 * synced or failed (`succeeded`, or `failed` naming the dead letters) or the tracking stalled.
 */
export async function settleResync(deps: ResyncDeps, id: string): Promise<TrackedResync | null> {
  const op = await deps.resyncs.get(id);
  if (!op || !isResyncSettling(op) || !deps.settle) return op;
  const previous = op.outcome as RepairOutcome;
  await deps.lease?.check();
  const { outcome } = await settlePass(deps.settle, deps.resyncs.settleKeys(id), previous);
  const done = outcome.settled || stalled(deps.settle, outcome);
  let next: TrackedResync = { ...op, outcome };
  if (done) {
    next = { ...next, ...finishedFields(outcome, "entities", op) };
  } else if (sameProgress(outcome, previous)) {
    return op;
  }
  await deps.lease?.check();
  if (!(await deps.resyncs.transition(next, ["running"], deps.lease?.holder))) return deps.resyncs.get(id);
  if (done) {
    await deps.resyncs.dropOwnedKeys(id);
    const log = deps.logger.child({ module: "resync", operationId: id, source: op.source });
    const fields = { synced: outcome.synced, failed: outcome.failed, pending: outcome.pending };
    if (next.state === "failed") log.warn({ ...fields, err: next.error }, "resync: entities failed");
    else log.info(fields, "resync: entities settled");
  }
  return next;
}
