import { type EntityRef, parseRefKey, refKey } from "../scim/scim-types.js";
import type { OwnerScope } from "./sync-keys.js";
import type { SyncContext } from "./sync-context.js";
import { SyncError } from "./sync-error.js";

/**
 * Claims a platform object for `ref` (ARCHITECTURE.md, "Ownership"). Another source's object is a
 * permanent, visible conflict, never a tug of war. When the owner is an entity of the same source
 * that is being deprovisioned (deleted and created again under the same name), or renamed away
 * (a change of its not yet applied), the claim waits (a blocked, not a failed, sync); a record left
 * by an entity that no longer exists is taken over.
 */
export async function claimOwnership(
  ctx: SyncContext,
  scope: OwnerScope,
  platformKey: string,
  ref: EntityRef,
  operation: string,
): Promise<void> {
  const me = refKey(ref);
  const owner = await ctx.state.claimOwner(scope, platformKey, ref);
  if (owner === me) return;
  const previous = parseRefKey(owner);
  if (previous.source === ref.source && previous.kind === ref.kind) {
    const snap =
      previous.kind === "user"
        ? await ctx.directory.snapshotUser(previous.source, previous.id)
        : await ctx.directory.snapshotGroup(previous.source, previous.id);
    if (snap === null) {
      await ctx.state.takeOverOwner(scope, platformKey, owner, ref);
      return;
    }
    if (snap.desired === null) {
      throw new SyncError("the platform object still belongs to a deleted entity being deprovisioned", {
        code: "waiting_for_previous_owner",
        permanent: false,
        blocked: true,
        operation,
      });
    }
    // Names are unique within a source, so a live owner of the same source that has a change not
    // yet applied is moving away from this name (a rename on its way): wait for it, do not fail.
    if (await hasUnappliedChange(ctx, previous, snap.generation)) {
      throw new SyncError("the platform object still belongs to an entity of this source being renamed", {
        code: "waiting_for_previous_owner",
        permanent: false,
        blocked: true,
        operation,
      });
    }
  }
  throw new SyncError(`the platform object ${platformKey} is owned by source ${previous.source}`, {
    code: "ownership_conflict",
    permanent: true,
    operation,
  });
}

/** Whether `ref` has a directory generation its sync has not applied yet (and is not dead-lettered). */
async function hasUnappliedChange(ctx: SyncContext, ref: EntityRef, generation: number): Promise<boolean> {
  const status = await ctx.state.getStatus(ref);
  if (status?.state === "dead") return false;
  return (status?.appliedGeneration ?? 0) < generation;
}

/**
 * A platform 409 on a rename (the new name is taken on the platform). When the platform object
 * holding the name belongs to another entity of the same source that has a change not yet applied
 * (it is moving away from the name: names are unique within a source), the sync waits (blocked);
 * otherwise this returns and the caller lets the conflict stand. A swap (the holder wants the name
 * this entity's platform object still has) would wait forever on both sides: it stays a conflict.
 */
export async function waitForNameHolder(
  ctx: SyncContext,
  scope: OwnerScope,
  holderKey: string,
  ref: EntityRef,
  operation: string,
  swapsWithUs: (holderResource: Record<string, unknown>) => boolean,
): Promise<void> {
  const owner = await ctx.state.ownerOf(scope, holderKey);
  if (!owner || owner === refKey(ref)) return;
  const holder = parseRefKey(owner);
  if (holder.source !== ref.source || holder.kind !== ref.kind) return;
  const snap =
    holder.kind === "user"
      ? await ctx.directory.snapshotUser(holder.source, holder.id)
      : await ctx.directory.snapshotGroup(holder.source, holder.id);
  if (snap === null) return;
  const moving =
    snap.desired === null ||
    (!swapsWithUs(snap.desired.resource as Record<string, unknown>) &&
      (await hasUnappliedChange(ctx, holder, snap.generation)));
  if (!moving) return;
  throw new SyncError("the new name is still held by an entity of this source that is moving away", {
    code: "waiting_for_previous_owner",
    permanent: false,
    blocked: true,
    operation,
  });
}
