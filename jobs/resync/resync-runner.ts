import type { ResyncStore } from "../../src/admin/resync-store.js";
import type { Config } from "../../src/config/config-schema.js";
import type { DirectoryStore } from "../../src/directory/directory-types.js";
import type { Logger } from "../../src/observability/logger.js";
import type { PlatformClient } from "../../src/platform/platform-types.js";
import { evaluateGuard } from "../../src/reconcile/deprovision-guard.js";
import type { ResyncOperation } from "../../src/reconcile/reconcile-run.js";
import type { EntityKind } from "../../src/scim/scim-types.js";
import type { ReconcileSyncState, ResyncRequester } from "../reconcile/reconcile-ports.js";
import type { OwnedCounts } from "../reconcile/sync-state-adapter.js";

export interface ResyncDeps {
  config: Config;
  platform: Pick<PlatformClient, "getUser">;
  directory: Pick<DirectoryStore, "snapshotUser" | "snapshotGroup" | "scanIds" | "countEntities">;
  state: Pick<ReconcileSyncState, "getUserPlatformIds"> & OwnedCounts;
  requestResync: ResyncRequester;
  resyncs: ResyncStore;
  logger: Logger;
  /** Entities marked dirty and enqueued per chunk. Default 250. */
  chunk?: number;
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

/**
 * Counts the users a resync would deactivate or delete: users inactive or deleted at the source
 * whose platform user is still there and active (or, with onDelete delete, there at all). Only
 * those are read on the platform. Embed-tenant sources own no platform users.
 */
async function plannedDeprovisions(deps: ResyncDeps, op: ResyncOperation): Promise<number> {
  const source = deps.config.sources[op.source];
  // Embed-tenant sources own no platform users.
  if (source?.target !== "workspace") return 0;
  let planned = 0;
  for await (const ids of targets(deps, op, "user")) {
    const snapshots = await Promise.all(ids.map((id) => deps.directory.snapshotUser(op.source, id)));
    const candidates = ids.filter((_id, index) => {
      const snapshot = snapshots[index];
      return snapshot && (snapshot.desired === null || snapshot.desired.resource.active === false);
    });
    if (candidates.length === 0) continue;
    const pids = await deps.state.getUserPlatformIds(op.source, candidates);
    const found = await Promise.all(
      candidates.map(async (id, index) => {
        const pid = pids[index];
        if (!pid) return false;
        const user = await deps.platform.getUser(pid);
        if (!user) return false;
        const tombstone = snapshots[ids.indexOf(id)]?.desired === null;
        return user.active !== false || (tombstone && source.onDelete === "delete");
      }),
    );
    planned += found.filter(Boolean).length;
  }
  return planned;
}

async function fanOut(deps: ResyncDeps, op: ResyncOperation): Promise<ResyncOperation> {
  let current = op;
  for (const kind of ["user", "group"] as const) {
    for await (const ids of targets(deps, current, kind)) {
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
      if (known.length > 0)
        await deps.requestResync(known.map((id) => ({ source: current.source, kind, id })));
      current = { ...current, enqueued: current.enqueued + known.length };
      await deps.resyncs.transition(current, ["running"]);
    }
  }
  return current;
}

/**
 * Runs a resync: counts what it would deprovision (invariant 8: above the share it waits for an
 * admin), then marks the entities dirty and enqueues their syncs in resync mode, in chunks, with
 * progress stored on the operation. `apply` runs a confirmed one without asking again.
 */
export async function runResync(
  deps: ResyncDeps,
  id: string,
  phase: "run" | "apply",
): Promise<ResyncOperation | null> {
  const queued = await deps.resyncs.get(id);
  // "running" here means the worker that ran it died (a stalled job handed on): start over.
  if (queued?.state !== "queued" && queued?.state !== "running") return queued;
  const startedMs = Date.now();
  let op: ResyncOperation = {
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
  if (!(await deps.resyncs.transition(op, ["queued", "running"]))) return deps.resyncs.get(id);
  const log = deps.logger.child({ module: "resync", operationId: id, source: op.source });
  try {
    if (phase === "run") {
      const planned = await plannedDeprovisions(deps, op);
      const owned = await deps.state.countOwnedUsers(op.source);
      const guard = evaluateGuard(planned, owned, deps.config.reconcile.maxDeprovisionShare);
      op = { ...op, guard };
      if (guard.tripped) {
        log.warn(
          { planned, owned },
          "resync: deprovisioning guard tripped; waiting for an admin's confirmation",
        );
        op = { ...op, state: "awaiting-confirmation", finishedAt: new Date().toISOString() };
        await deps.resyncs.transition(op, ["running"]);
        return op;
      }
      await deps.resyncs.transition(op, ["running"]);
    }
    op = await fanOut(deps, op);
    op = {
      ...op,
      state: "succeeded",
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - startedMs,
    };
    log.info({ enqueued: op.enqueued, durationMs: op.durationMs }, "resync: fan-out finished");
  } catch (err) {
    op = { ...op, state: "failed", error: err instanceof Error ? err.message : String(err) };
    log.error({ err: op.error }, "resync: failed");
  }
  await deps.resyncs.transition(op, ["running"]);
  return op;
}
