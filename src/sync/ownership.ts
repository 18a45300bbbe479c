import { snapshotEntity } from "../directory/snapshot-entity.js";
import type { AppliedEmbedGroup, AppliedGroup, AppliedUser } from "../mapping/plan-types.js";
import { caseFold } from "../scim/case-fold.js";
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
    const snap = await snapshotEntity(ctx.directory, previous);
    if (snap === null) {
      await ctx.state.takeOverOwner(scope, platformKey, owner, ref);
      return;
    }
    if (snap.desired === null && (await deprovisioningFailed(ctx, previous))) {
      // Its deprovisioning failed for good: nothing moves it until an admin acts (its dead letter).
      // Waiting would hold this entity pending, and the bridge busy, for ever: a visible conflict.
      throw new SyncError(
        "the platform object still belongs to a deleted entity whose deprovisioning failed for good (its dead letter): retry or resync that one first, or discard its letter to let the platform object go",
        { code: "ownership_conflict", permanent: true, operation },
      );
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

/**
 * Whether a deleted entity (a tombstone) is a dead letter: its deprovisioning failed for good, and
 * it holds its platform object (and name) until an admin retries or discards the letter (a discard
 * purges the tombstone: AdminService.releaseTombstone).
 */
async function deprovisioningFailed(ctx: SyncContext, ref: EntityRef): Promise<boolean> {
  return (await ctx.state.getStatus(ref))?.state === "dead";
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
  const snap = await snapshotEntity(ctx.directory, holder);
  if (snap === null) return;
  // A deleted holder moves away once deprovisioned; not one whose deprovisioning failed for good.
  const moving =
    snap.desired === null
      ? !(await deprovisioningFailed(ctx, holder))
      : !swapsWithUs(snap.desired.resource as Record<string, unknown>) &&
        (await hasUnappliedChange(ctx, holder, snap.generation));
  if (!moving) return;
  throw new SyncError("the new name is still held by an entity of this source that is moving away", {
    code: "waiting_for_previous_owner",
    permanent: false,
    blocked: true,
    operation,
  });
}

/** A rename's 409 as the sync settles it (settleRenameRefusal). */
export interface RenameRefusal {
  scope: OwnerScope;
  /** The owner-map key of the platform object holding the new name now; undefined: nobody holds it. */
  holderKey: string | undefined;
  /** The owner-map key of this entity's own platform object. */
  ownKey: string;
  operation: string;
  /** Whether the holder's desired resource wants the name this entity's platform object has. */
  swapsWithUs: (holderResource: Record<string, unknown>) => boolean;
}

/**
 * RFC 7644 §3.12: a platform 409 on a rename, once the sync has looked up who holds the new name.
 * `freed` when nobody holds it any more: its holder moved away (renamed, or deleted) between the
 * refusal and the look-up, so the caller may send the rename again (once per sync: a second refusal
 * of a name nobody holds stands). Throws a blocked SyncError while the holder is an entity of this
 * source moving away from the name (waitForNameHolder). Otherwise `stands`: the conflict is real
 * (another source's object, a swap, a holder not moving, or this entity's own object).
 */
export async function settleRenameRefusal(
  ctx: SyncContext,
  ref: EntityRef,
  refusal: RenameRefusal,
): Promise<"freed" | "stands"> {
  const { holderKey, ownKey, scope, operation, swapsWithUs } = refusal;
  if (holderKey === undefined) return "freed";
  if (holderKey !== ownKey) await waitForNameHolder(ctx, scope, holderKey, ref, operation, swapsWithUs);
  return "stands";
}

/**
 * The owner-map field of a name whose create is under way. Platform keys are ids, so a field of
 * this form never meets one; an embed group's name is keyed with its tenant (`<tenant>/<name>`).
 */
function creatingField(name: string): string {
  return `creating:${caseFold(name)}`;
}

/** The name (as creatingField keys it) a recorded create is still under way for: intent, no answer. */
function nameBeingCreated(applied: AppliedUser & AppliedGroup & AppliedEmbedGroup): string | undefined {
  if (applied.platformId) return undefined;
  const name =
    applied.pendingUserName ??
    applied.pendingDisplayName ??
    (applied.pendingName === undefined ? undefined : `${applied.tenant ?? ""}/${applied.pendingName}`);
  return name === undefined ? undefined : caseFold(name);
}

/**
 * The entity (not `ref`) whose create of `name` is still under way: it holds the name and its
 * applied record still names it with no platform id. A hold whose create settled without letting
 * go (a crash between the two) is no longer one.
 */
async function otherCreateUnderWay(
  ctx: SyncContext,
  scope: OwnerScope,
  name: string,
  ref: EntityRef,
): Promise<string | null> {
  const holder = await ctx.state.ownerOf(scope, creatingField(name));
  if (!holder || holder === refKey(ref)) return null;
  const applied = await ctx.state.getApplied<AppliedUser & AppliedGroup & AppliedEmbedGroup>(
    parseRefKey(holder),
  );
  return applied && nameBeingCreated(applied) === caseFold(name) ? holder : null;
}

/**
 * A create of `name` is under way for `ref`, and its answer may be lost (the platform applied it,
 * the answer never came): `ref` holds the name until the create settles (settleCreate). Another
 * entity that then meets the platform object of that name (a 409 on its own create, or a lookup
 * for a create of its own that was lost) does not adopt what this create made. The first entity
 * to create a name holds it; a hold left by a create that settled is taken over.
 */
export async function beginCreate(
  ctx: SyncContext,
  scope: OwnerScope,
  name: string,
  ref: EntityRef,
): Promise<void> {
  const field = creatingField(name);
  const holder = await ctx.state.claimOwner(scope, field, ref);
  if (holder === refKey(ref)) return;
  if ((await otherCreateUnderWay(ctx, scope, name, ref)) === null) {
    await ctx.state.takeOverOwner(scope, field, holder, ref);
  }
}

/**
 * The create of `name` by `ref` settled (answered, adopted, or looked for as lost): the hold goes.
 * A create refused (a 4xx) keeps it: an earlier attempt whose answer was lost may have landed, and
 * the entity's next sync looks for it (findLost) before anything else, which settles it.
 */
export async function settleCreate(
  ctx: Pick<SyncContext, "state">,
  scope: OwnerScope,
  name: string,
  ref: EntityRef,
): Promise<void> {
  await ctx.state.releaseOwner(scope, creatingField(name), ref);
}

/**
 * Whether the platform object named `name`, found by `ref`'s lookup for a create of its own whose
 * answer was lost, may be another entity's create instead (its answer lost too): then it is not
 * `ref`'s to adopt, and `ref`'s own create did not land (the platform holds one object per name).
 */
export async function isAnotherCreate(
  ctx: SyncContext,
  scope: OwnerScope,
  name: string,
  ref: EntityRef,
): Promise<boolean> {
  return (await otherCreateUnderWay(ctx, scope, name, ref)) !== null;
}

/**
 * Before `ref` adopts the platform object named `name` (its create met a 409): when another
 * entity's create of that name is still under way, the object may be what that create made
 * (ARCHITECTURE.md "Lost answers", "Ownership", invariant 5). Another source's create makes this a
 * permanent, visible conflict, as when that source already owns the object; one of this source
 * (an entity deleted or renamed since: names are unique within a source) is waited for, unless it
 * is a dead letter (it would hold the name until an admin acts: a visible conflict too). A hold
 * whose create settled without letting go (a crash between the two) is taken over.
 */
export async function checkNoCreateUnderWay(
  ctx: SyncContext,
  scope: OwnerScope,
  name: string,
  ref: EntityRef,
  operation: string,
): Promise<void> {
  const holder = await otherCreateUnderWay(ctx, scope, name, ref);
  if (holder === null) {
    await beginCreate(ctx, scope, name, ref);
    return;
  }
  const other = parseRefKey(holder);
  if (other.source === ref.source && (await ctx.state.getStatus(other))?.state !== "dead") {
    throw new SyncError("the platform object of this name may be another entity's create of this source", {
      code: "waiting_for_previous_owner",
      permanent: false,
      blocked: true,
      operation,
    });
  }
  throw new SyncError(`the platform object of this name is being created by source ${other.source}`, {
    code: "ownership_conflict",
    permanent: true,
    operation,
  });
}
