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
