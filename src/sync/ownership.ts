import { type EntityRef, parseRefKey, refKey } from "../scim/scim-types.js";
import type { OwnerScope } from "./sync-keys.js";
import type { SyncContext } from "./sync-context.js";
import { SyncError } from "./sync-error.js";

/**
 * Claims a platform object for `ref` (ARCHITECTURE.md, "Ownership"). Another source's object is a
 * permanent, visible conflict, never a tug of war. When the owner is an entity of the same source
 * that is being deprovisioned (deleted and created again under the same name), the claim waits
 * (a blocked, not a failed, sync); a record left by an entity that no longer exists is taken over.
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
  }
  throw new SyncError(`the platform object ${platformKey} is owned by source ${previous.source}`, {
    code: "ownership_conflict",
    permanent: true,
    operation,
  });
}
