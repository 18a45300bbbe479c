import type { GroupRecord } from "../directory/directory-types.js";
import {
  addMembersOperations,
  addedMemberIds,
  planGroup,
  platformGroupName,
  removeMembersOperations,
  removedMemberIds,
} from "../mapping/plan-group.js";
import { type AppliedGroup, answered } from "../mapping/plan-types.js";
import { caseFold } from "../scim/case-fold.js";
import { type EntityRef, type PatchOperation, SCHEMA_GROUP, refKey } from "../scim/scim-types.js";
import { applyOps, fromPlatformGroup, memberValues } from "./group-record.js";
import {
  type NarrowedChunk,
  type Narrowing,
  type Refusals,
  heldButOut,
  leaveOutVanished,
  leftOut,
  narrowChunk,
  throwRefusals,
  withRefusals,
  workspaceRefusedNames,
} from "./group-refusals.js";
import { syncEmbedGroup } from "./sync-embed-group.js";
import { waitForLateCreate } from "./late-writes.js";
import {
  beginCreate,
  checkNoCreateUnderWay,
  claimOwnership,
  isAnotherCreate,
  settleCreate,
  settleRenameRefusal,
} from "./ownership.js";
import type { SyncContext, SyncOutcome, SyncProgress } from "./sync-context.js";
import { SyncError, isPlatformFailure } from "./sync-error.js";

const MAX_ROUNDS = 4;

/** Syncs one group: platform SCIM group (workspace source) or embed-tenant group. */
export async function syncGroup(
  ctx: SyncContext,
  ref: EntityRef,
  options: { resync: boolean },
  progress: SyncProgress,
): Promise<SyncOutcome> {
  const source = ctx.config.sources[ref.source];
  if (!source)
    throw new SyncError(`unknown source ${ref.source}`, { code: "unknown_source", permanent: true });
  const snap = await ctx.directory.snapshotGroup(ref.source, ref.id);
  if (!snap) return { result: "absent", generation: 0, warnings: [] };
  progress.generation = snap.generation;
  if (source.target !== "workspace") {
    return syncEmbedGroup(
      ctx,
      ref,
      source.target,
      source.groupPrefix,
      snap.desired,
      snap.generation,
      options.resync,
    );
  }
  return syncWorkspaceGroup(ctx, ref, source.groupPrefix, snap.desired, snap.generation, options.resync);
}

async function syncWorkspaceGroup(
  ctx: SyncContext,
  ref: EntityRef,
  prefix: string,
  record: GroupRecord | null,
  generation: number,
  resync: boolean,
): Promise<SyncOutcome> {
  const desiredName = record ? platformGroupName(prefix, record.resource.displayName) : null;
  const memberIds = (record?.members ?? []).map((m) => m.value);
  const pids = await ctx.state.getUserPlatformIds(ref.source, memberIds);
  /** Recorded platform ids found gone on the platform: left out until their users are created again. */
  const vanished = new Set<string>();
  /** Members whose add or removal the platform refused for good in this sync: its dead letter. */
  const refused: Refusals = { added: new Set(), removed: new Set() };
  const names = workspaceRefusedNames(ctx, ref, memberIds, pids);
  const desiredMembers = () =>
    pids.filter((p): p is string => typeof p === "string" && !vanished.has(p) && !refused.added.has(p));
  /**
   * Rounds that a refusal narrowed: members left out (deleted on the platform, or their add refused
   * for good), a removal held (refused for good), the create sent without members. They spend no
   * round of the budget: each one takes members out of what the sync sends for good (the create's,
   * once), so they are bounded by the group's members. The budget bounds everything else.
   */
  let narrowed = 0;
  /** The create was refused for good although each member is a platform user: sent without them. */
  let bareCreate = false;
  /** Whether a refused chunk of adds, of removals, is narrowed to its culprits (Narrowing). */
  const narrowing: Narrowing = { add: true, remove: true };

  let applied = await ctx.state.getApplied<AppliedGroup>(ref);
  if (applied?.platformId && (resync || applied.inDoubt)) {
    // A resync, or PATCHes whose answers never came: what the platform holds now decides.
    const inDoubt = applied.inDoubt;
    const current = await ctx.platform.getGroup(applied.platformId);
    // Gone behind our back: the entity owns that platform id no more (invariant 6).
    if (!current) await ctx.state.releaseOwner("group", applied.platformId, ref);
    applied = current ? fromPlatformGroup(current) : null;
    if (inDoubt && applied) await ctx.state.putApplied(ref, applied);
  }
  let reread = false;
  // A rename refused while its name's holder was moving away, and free by the time it was looked
  // up: planned and sent again once (a second refusal of a name nobody holds stands).
  let resentFreedName = false;
  for (let round = 0; round < MAX_ROUNDS + narrowed; round++) {
    // A member whose add was refused, found in the group since (an adopted group an admin made by
    // hand, say): the refusal is moot, and the directory says they belong, so they are wanted
    // again (left out of the wanted members, they would be planned for removal).
    for (const id of applied?.members ?? []) refused.added.delete(id);
    const plan = planGroup({
      desiredName,
      desiredMembers: desiredMembers(),
      applied,
      heldMembers: refused.removed,
    });
    const first = plan.steps[0];
    if (!first) {
      await throwRefusals(ctx, ref, refused, names);
      return { result: "clean", generation, platformId: applied?.platformId, warnings: leftOut(vanished) };
    }
    switch (first.type) {
      case "createGroup":
        try {
          const members = bareCreate ? [] : first.members;
          applied = await createOrAdoptGroup(ctx, ref, first.displayName, members, applied);
        } catch (err) {
          // Created with members, the group is refused whole for one that is no platform user.
          const refusedForGood = isPlatformFailure(err, "bad_request") && !bareCreate;
          const left = refusedForGood ? await leaveOutVanished(ctx, ref, first.members, memberIds, pids) : [];
          if (left.length > 0) {
            for (const id of left) vanished.add(id);
          } else if (refusedForGood && first.members.length > 0) {
            // Every one of them is a platform user: the group is created without members, and they
            // are added in chunks next, where a refused one holds back its chunk alone (below).
            bareCreate = true;
          } else {
            throw err;
          }
          narrowed += 1;
        }
        continue;
      case "findLostGroup": {
        // Creates whose answers never came may still land: look once they all could have.
        await waitForLateCreate(ctx, ref, "createGroup");
        const seen = await ctx.platform.findGroupByDisplayName(first.displayName);
        const found = seen && !(await isAnotherCreate(ctx, "group", first.displayName, ref)) ? seen : null;
        const owner = found ? await ctx.state.claimOwner("group", found.id, ref) : null;
        // The lookup leaves members out; a group that lives on (renamed) needs them to diff.
        const full = found && owner === refKey(ref) ? await ctx.platform.getGroup(found.id) : null;
        applied = full ? fromPlatformGroup(full) : null;
        if (applied) await ctx.state.putApplied(ref, applied);
        // Found or not, that create has settled (a create planned next holds the name again).
        await settleCreate(ctx, "group", first.displayName, ref);
        continue;
      }
      case "deleteGroup":
        // A create of this group that timed out may still land (late) once the name is free: the
        // delete waits until no write of it can land late (as a rename does, below).
        await waitForLateCreate(ctx, ref, "createGroup");
        // An admin gave the group up meanwhile (its letter discarded: its tombstone purged after this
        // sync read it, AdminService.releaseTombstone): its platform group is no source's any more
        // and stays. The sync of the absent entity forgets what is recorded of it (forgetAbsent).
        if ((await ctx.directory.snapshotGroup(ref.source, ref.id)) === null) {
          return { result: "absent", generation: 0, warnings: [] };
        }
        // Deleting a group never touches its members (they are users of their own).
        if (applied?.platformId) await ctx.platform.deleteGroup(applied.platformId);
        return forgetGroup(ctx, ref, applied, generation);
      case "forget":
        return forgetGroup(ctx, ref, applied, generation);
      case "patchGroup": {
        const platformId = applied?.platformId;
        if (!applied || !platformId) throw new Error("planner produced a PATCH without a platform id");
        // Until the PATCHes are answered, they may land unseen (answer lost, crash): say so first.
        applied = { ...applied, inDoubt: true };
        await ctx.state.putApplied(ref, applied);
        const patches = plan.steps.filter((step) => step.type === "patchGroup");
        /** The PATCH on the wire when one fails: a refused removal is worth one more look. */
        let sending: (typeof patches)[number]["operations"] | undefined;
        try {
          for (const [i, step] of patches.entries()) {
            sending = step.operations;
            // The rename frees the old name: a create of it that timed out could land after it, as a
            // second group no source owns. It waits (after the members' PATCHes) until none can.
            if (step.operations.some((operation) => operation.path === "displayName")) {
              await waitForLateCreate(ctx, ref, "createGroup");
            }
            await ctx.platform.patchGroup(platformId, step.operations);
            applied = applyOps(applied, step.operations);
            if (i === patches.length - 1) applied = answered(applied);
            await ctx.state.putApplied(ref, applied);
          }
        } catch (err) {
          /** What ends this PATCH sequence: the refusal, or a failure met while narrowing it. */
          let failure: unknown = err;
          const removing = sending?.some((operation) => operation.op === "remove") ?? false;
          const adding = sending ? addedMemberIds(sending) : [];
          const removed = sending ? removedMemberIds(sending) : [];
          if (isPlatformFailure(err, "bad_request") && removing && !reread) {
            // A strict platform refuses to remove a member that is no longer there (RFC 7644
            // §3.5.2.2, 400 noTarget): taken out behind our back, with its user deleted, or by a
            // repeat of a PATCH whose answer was lost. Diff again against what it holds now, once.
            // A refused add is not diffed again: its members are looked up instead (below).
            reread = true;
            const current = await ctx.platform.getGroup(platformId);
            // Gone behind our back: created again next; the id gone is owned no more (invariant 6).
            if (!current) await ctx.state.releaseOwner("group", platformId, ref);
            applied = current ? fromPlatformGroup(current) : null;
            if (applied) await ctx.state.putApplied(ref, applied);
            continue;
          }
          /** A refused chunk of adds or removals narrowed to its culprits (narrowChunk), who join its refusals. */
          const before = applied;
          const narrowInto = async (
            members: readonly string[],
            operationsOf: (ids: readonly string[]) => PatchOperation[],
            kind: keyof Narrowing,
          ): Promise<NarrowedChunk<AppliedGroup>> => {
            const into = kind === "add" ? refused.added : refused.removed;
            const chunkOf = await narrowChunk(ctx, ref, before, members, narrowing[kind], {
              send: (ids) => ctx.platform.patchGroup(platformId, operationsOf(ids)),
              landed: (group, ids) => applyOps(group, operationsOf(ids)),
            });
            applied = chunkOf.applied;
            if (chunkOf.landedNothing) narrowing[kind] = false;
            refused.error ??= err;
            for (const id of chunkOf.refused) into.add(id);
            return chunkOf;
          };
          let chunkOf: NarrowedChunk<AppliedGroup> | undefined;
          if (isPlatformFailure(err, "bad_request") && removed.length > 0) {
            // Refused again against what the platform holds now: the refusal stands for these
            // members alone, narrowed to the ones the platform really refuses (the others' removal
            // is sent in halves). They stay in the group (the record says so), the group's other
            // changes are planned again without their removal, and the refusal ends the sync once
            // those are sent (its dead letter). A retry sends only this removal.
            chunkOf = await narrowInto(removed, removeMembersOperations, "remove");
            if (chunkOf.failure === undefined && chunkOf.refused.length > 0) {
              // A piece whose removal landed with its answer lost, repeated by the client, is
              // refused by a strict platform (400 noTarget): its members were taken for culprits
              // although they are out. What the platform holds says who is still in: only they
              // are held, and the record becomes it.
              const current = await ctx.platform.getGroup(platformId);
              if (current) {
                applied = fromPlatformGroup(current);
                for (const id of heldButOut(refused.removed, applied)) refused.removed.delete(id);
              }
            }
          } else if (isPlatformFailure(err, "bad_request") && adding.length > 0) {
            // A refused add holds back every member of its PATCH. When some of them are no
            // platform user (deleted behind our back), the others are sent now and the vanished
            // ones' users created again. When every one of them is a platform user, the refusal
            // stands: the job's fate retries it only when the desired state has moved.
            const left = await leaveOutVanished(ctx, ref, adding, memberIds, pids);
            if (left.length > 0) {
              for (const id of left) vanished.add(id);
              chunkOf = { applied, refused: [], landedNothing: false };
            } else {
              // Every one of them is a platform user: the refusal stands for the members the
              // platform really refuses, found by sending the chunk again in halves (the others of
              // the chunk get in now). The group's other changes (later chunks, the rename) must
              // not wait on them: they are planned again without them, and the refusal ends the
              // sync once they are sent (its dead letter). The record holds what landed, so a
              // retry adds only these.
              chunkOf = await narrowInto(adding, addMembersOperations, "add");
            }
          }
          if (chunkOf) {
            narrowed += 1;
            if (chunkOf.failure === undefined) {
              // The refusal is an answer: nothing of that PATCH landed, and none was sent after it.
              applied = answered(applied);
              await ctx.state.putApplied(ref, applied);
              continue;
            }
            failure = chunkOf.failure;
          }
          if (isPlatformFailure(failure, "conflict") && desiredName !== null) {
            // 409 on a rename: wait if the name is being freed inside this source.
            const holder = await ctx.platform.findGroupByDisplayName(desiredName);
            const current = caseFold(String(applied.displayName ?? ""));
            const verdict = await settleRenameRefusal(ctx, ref, {
              scope: "group",
              holderKey: holder?.id,
              ownKey: platformId,
              operation: "patchGroup",
              swapsWithUs: (other) =>
                caseFold(platformGroupName(prefix, String(other["displayName"]))) === current,
            });
            if (verdict === "freed" && !resentFreedName) {
              resentFreedName = true;
              applied = answered(applied);
              await ctx.state.putApplied(ref, applied);
              continue;
            }
          }
          if (!isPlatformFailure(failure, "not_found")) {
            throw await withRefusals(ctx, ref, failure, refused, names);
          }
          // Deleted behind our back: create it again; the id gone is owned no more (invariant 6).
          await ctx.state.releaseOwner("group", platformId, ref);
          applied = null;
          // A held removal is moot in a group created again: those members are not in it.
          refused.removed.clear();
          if (refused.added.size === 0) refused.error = undefined;
          continue;
        }
        await throwRefusals(ctx, ref, refused, names);
        return { result: "clean", generation, platformId, warnings: leftOut(vanished) };
      }
    }
  }
  throw new SyncError("the group did not converge after several rounds", {
    code: "not_converging",
    permanent: false,
  });
}

async function createOrAdoptGroup(
  ctx: SyncContext,
  ref: EntityRef,
  displayName: string,
  members: string[],
  applied: AppliedGroup | null,
): Promise<AppliedGroup> {
  await ctx.state.putApplied(ref, {
    members: [],
    ...applied,
    platformId: undefined,
    pendingDisplayName: displayName,
  });
  await beginCreate(ctx, "group", displayName, ref);
  let result: AppliedGroup;
  try {
    const body = { schemas: [SCHEMA_GROUP], displayName, members: members.map((value) => ({ value })) };
    const created = await ctx.platform.createGroup(body);
    await claimOwnership(ctx, "group", created.id, ref, "createGroup");
    // RFC 7644 §3.3: the answer is the group as stored, which may hold fewer members than were
    // sent: those it names are what the next plan diffs against (an answer without them, as sent).
    result = {
      platformId: created.id,
      displayName,
      members: Array.isArray(created["members"]) ? memberValues(created) : members,
    };
  } catch (err) {
    if (!isPlatformFailure(err, "conflict")) throw err;
    // Adopt the platform group of that name, unless it may be another entity's unanswered create.
    await checkNoCreateUnderWay(ctx, "group", displayName, ref, "createGroup");
    const found = await ctx.platform.findGroupByDisplayName(displayName);
    if (!found) {
      throw new SyncError("the platform answered 409 but has no group of that name", {
        code: "platform_inconsistent",
        permanent: false,
        operation: "createGroup",
      });
    }
    await claimOwnership(ctx, "group", found.id, ref, "createGroup");
    const full = await ctx.platform.getGroup(found.id);
    result = fromPlatformGroup(full ?? found);
  }
  await ctx.state.putApplied(ref, result);
  await settleCreate(ctx, "group", displayName, ref);
  return result;
}

async function forgetGroup(
  ctx: SyncContext,
  ref: EntityRef,
  applied: AppliedGroup | null,
  generation: number,
): Promise<SyncOutcome> {
  const owned = applied?.platformId
    ? { scope: "group" as const, platformKey: applied.platformId }
    : undefined;
  await ctx.state.forget(ref, owned);
  await ctx.directory.purgeTombstone(ref, generation);
  return { result: "purged", generation, warnings: [] };
}
