import type { GroupRecord } from "../directory/directory-types.js";
import { narrowRefusal, narrowingCalls } from "../mapping/narrow-refusal.js";
import {
  addMembersOperations,
  addedMemberIds,
  planGroup,
  platformGroupName,
  refusedAddFate,
  removeMembersOperations,
  removedMemberIds,
  usersOfPlatformIds,
} from "../mapping/plan-group.js";
import { type AppliedGroup, answered, chunk } from "../mapping/plan-types.js";
import type { PlatformScimGroup } from "../platform/platform-types.js";
import { caseFold } from "../scim/case-fold.js";
import {
  type EntityRef,
  type Json,
  type PatchOperation,
  SCHEMA_GROUP,
  parseRefKey,
  refKey,
} from "../scim/scim-types.js";
import { syncEmbedGroup } from "./sync-embed-group.js";
import { waitForLateCreate } from "./late-writes.js";
import {
  beginCreate,
  checkNoCreateUnderWay,
  claimOwnership,
  isAnotherCreate,
  settleCreate,
  waitForNameHolder,
} from "./ownership.js";
import type { SyncContext, SyncOutcome, SyncProgress } from "./sync-context.js";
import {
  SyncError,
  classifyFailure,
  isPlatformFailure,
  refusedMembersError,
  refusedRemovalsError,
} from "./sync-error.js";

const MAX_ROUNDS = 4;
/** Platform users looked up at a time when a refused add is checked member by member. */
const LOOKUP_CONCURRENCY = 10;

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

function memberValues(group: PlatformScimGroup): string[] {
  const members = group["members"];
  if (!Array.isArray(members)) return [];
  return members.flatMap((m) =>
    m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string" ? [m["value"]] : [],
  );
}

function fromPlatformGroup(group: PlatformScimGroup): AppliedGroup {
  return { platformId: group.id, displayName: group.displayName, members: memberValues(group) };
}

/** Applies a PATCH's member ops to the recorded member list. */
function applyOps(applied: AppliedGroup, operations: PatchOperation[]): AppliedGroup {
  const members = new Set(applied.members);
  let displayName = applied.displayName;
  for (const op of operations) {
    if (op.path === "displayName" && typeof op.value === "string") displayName = op.value;
    else if (op.op === "add" && op.path === "members" && Array.isArray(op.value)) {
      for (const m of op.value as Json[]) {
        if (m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string")
          members.add(m["value"]);
      }
    } else if (op.op === "remove" && op.path?.startsWith("members[")) {
      const id = /value eq "(.*)"\]$/.exec(op.path)?.[1];
      if (id !== undefined) members.delete(JSON.parse(`"${id}"`) as string);
    }
  }
  return { ...applied, displayName, members: [...members] };
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
  /**
   * Whether a refused chunk is narrowed to its culprits (narrowChunk). Once a narrowing landed
   * nothing, the refusal is the group's (a member limit, say), not a member's: later chunks are
   * refused whole, without spending calls on halves.
   */
  let narrowing = true;

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
  for (let round = 0; round < MAX_ROUNDS + narrowed; round++) {
    const plan = planGroup({
      desiredName,
      desiredMembers: desiredMembers(),
      applied,
      heldMembers: refused.removed,
    });
    const first = plan.steps[0];
    if (!first) {
      await throwRefusals(ctx, ref, refused, memberIds, pids);
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
          if (isPlatformFailure(err, "bad_request") && removed.length > 0) {
            // Refused again against what the platform holds now: the refusal stands for these
            // members alone, narrowed to the ones the platform really refuses (the others' removal
            // is sent in halves). They stay in the group (the record says so), the group's other
            // changes are planned again without their removal, and the refusal ends the sync once
            // those are sent (its dead letter). A retry sends only this removal.
            const chunkOf = await narrowChunk(
              ctx,
              ref,
              platformId,
              applied,
              removed,
              narrowing,
              removeMembersOperations,
            );
            applied = chunkOf.applied;
            if (chunkOf.landedNothing) narrowing = false;
            refused.error ??= err;
            for (const id of chunkOf.refused) refused.removed.add(id);
            narrowed += 1;
            if (chunkOf.failure === undefined) {
              applied = answered(applied);
              await ctx.state.putApplied(ref, applied);
              continue;
            }
            failure = chunkOf.failure;
          } else if (isPlatformFailure(err, "bad_request") && adding.length > 0) {
            // A refused add holds back every member of its PATCH. When some of them are no
            // platform user (deleted behind our back), the others are sent now and the vanished
            // ones' users created again. When every one of them is a platform user, the refusal
            // stands: the job's fate retries it only when the desired state has moved.
            const left = await leaveOutVanished(ctx, ref, adding, memberIds, pids);
            let chunkOf: NarrowedChunk = { applied, refused: [], landedNothing: false };
            if (left.length > 0) {
              for (const id of left) vanished.add(id);
            } else {
              // Every one of them is a platform user: the refusal stands for the members the
              // platform really refuses, found by sending the chunk again in halves (the others of
              // the chunk get in now). The group's other changes (later chunks, the rename) must
              // not wait on them: they are planned again without them, and the refusal ends the
              // sync once they are sent (its dead letter). The record holds what landed, so a
              // retry adds only these.
              chunkOf = await narrowChunk(
                ctx,
                ref,
                platformId,
                applied,
                adding,
                narrowing,
                addMembersOperations,
              );
              applied = chunkOf.applied;
              if (chunkOf.landedNothing) narrowing = false;
              refused.error ??= err;
              for (const id of chunkOf.refused) refused.added.add(id);
            }
            narrowed += 1;
            if (chunkOf.failure === undefined) {
              // The refusal is an answer: nothing of that PATCH landed, and none was sent after it.
              applied = answered(applied);
              await ctx.state.putApplied(ref, applied);
              continue;
            }
            failure = chunkOf.failure;
          } else if (isPlatformFailure(err, "bad_request") && removing && adding.length === 0) {
            // Refused again after a fresh look at the group: the removal stands refused. Its dead
            // letter names the members it would have taken out (the bridge's ids).
            throw await refusedRemovals(ctx, ref, removedMemberIds(sending ?? []), err);
          }
          if (isPlatformFailure(failure, "conflict") && desiredName !== null) {
            // 409 on a rename: wait if the name is being freed inside this source.
            const holder = await ctx.platform.findGroupByDisplayName(desiredName);
            if (holder && holder.id !== platformId)
              await waitForNameHolder(
                ctx,
                "group",
                holder.id,
                ref,
                "patchGroup",
                (other) =>
                  caseFold(platformGroupName(prefix, String(other["displayName"]))) ===
                  caseFold(String(applied?.displayName ?? "")),
              );
          }
          if (!isPlatformFailure(failure, "not_found")) {
            throw await withRefusals(ctx, ref, failure, refused, memberIds, pids);
          }
          // Deleted behind our back: create it again; the id gone is owned no more (invariant 6).
          await ctx.state.releaseOwner("group", platformId, ref);
          applied = null;
          // A held removal is moot in a group created again: those members are not in it.
          refused.removed.clear();
          if (refused.added.size === 0) refused.error = undefined;
          continue;
        }
        await throwRefusals(ctx, ref, refused, memberIds, pids);
        return { result: "clean", generation, platformId, warnings: leftOut(vanished) };
      }
    }
  }
  throw new SyncError("the group did not converge after several rounds", {
    code: "not_converging",
    permanent: false,
  });
}

interface NarrowedChunk {
  /** The group's record with the pieces that landed (in doubt while the sync's PATCHes run). */
  applied: AppliedGroup;
  /** The members the platform refused: alone, or a piece left whole once the calls ran out. */
  refused: string[];
  /** The chunk was narrowed and not one piece of it landed: the refusal is not a member's. */
  landedNothing: boolean;
  /** A failure other than a refusal met while narrowing (what landed before it is recorded). */
  failure?: unknown;
}

/**
 * Narrows a member chunk the platform refused for good (400/422) to its culprits: its halves are
 * sent again (narrowRefusal: at most narrowingCalls(size) calls, all in the round of the refusal,
 * none when `narrow` is false), each piece that lands is recorded, and the members still refused
 * are returned. A failure that is not a refusal ends the narrowing and is returned, to be met as
 * the PATCH's own failure would be (a 404: the group created again).
 */
async function narrowChunk(
  ctx: SyncContext,
  ref: EntityRef,
  platformId: string,
  applied: AppliedGroup,
  members: readonly string[],
  narrow: boolean,
  operationsOf: (ids: readonly string[]) => PatchOperation[],
): Promise<NarrowedChunk> {
  let current = applied;
  const send = async (piece: string[]): Promise<"landed" | "refused"> => {
    const operations = operationsOf(piece);
    try {
      await ctx.platform.patchGroup(platformId, operations);
    } catch (err) {
      if (isPlatformFailure(err, "bad_request")) return "refused";
      throw err;
    }
    current = applyOps(current, operations);
    await ctx.state.putApplied(ref, current);
    return "landed";
  };
  try {
    const narrowed = await narrowRefusal(members, send, narrow ? narrowingCalls(members.length) : 0);
    if (narrowed.calls > 0) {
      ctx.logger.warn(
        { ref, members: members.length, refused: narrowed.refused.length, calls: narrowed.calls },
        "group members refused for good: the refused chunk was sent again in halves, the others landed",
      );
    }
    return {
      applied: current,
      refused: narrowed.refused,
      landedNothing: narrowed.calls > 0 && narrowed.landed.length === 0,
    };
  } catch (failure) {
    return { applied: current, refused: [], landedNothing: false, failure };
  }
}

/** The refused removal of `platformIds` from the group, naming their users by the bridge's ids. */
async function refusedRemovals(
  ctx: SyncContext,
  ref: EntityRef,
  platformIds: readonly string[],
  refusal: unknown,
): Promise<SyncError> {
  return refusedRemovalsError(platformIds.length, refusal, (await usersOwning(ctx, ref, platformIds)).users);
}

/**
 * The bridge's ids of the users of this group's source that own `platformIds` (members refused a
 * removal have left the group at the source: their users are found by the platform ids they own),
 * and the platform ids that no user owns any more (`unknown`: a user deleted at the source is
 * forgotten once deprovisioned, and its platform id released).
 */
async function usersOwning(
  ctx: SyncContext,
  ref: EntityRef,
  platformIds: readonly string[],
): Promise<{ users: string[]; unknown: string[] }> {
  if (platformIds.length === 0) return { users: [], unknown: [] };
  const owners = await ctx.state.ownersOf("user", [...platformIds]);
  const users: string[] = [];
  const unknown: string[] = [];
  owners.forEach((owner, i) => {
    const user = owner === null ? null : parseRefKey(owner);
    if (user === null) unknown.push(platformIds[i] as string);
    else if (user.source === ref.source) users.push(user.id);
  });
  return { users, unknown };
}

interface Refusals {
  /** Platform user ids of the members whose add was refused. */
  added: Set<string>;
  /** Platform user ids of the members whose removal was refused (they are still in the group). */
  removed: Set<string>;
  /** The first refusal: its code is the dead letter's. */
  error?: unknown;
}

/**
 * Ends the sync with the refusal (refusedMembersError: a permanent failure, the group's dead letter,
 * counted and logged by the job) when the platform refused some members' add or removal, naming
 * them by the bridge's user ids. A removal that did not happen leaves someone in a group the source
 * took them out of: said at error level here too (counts only, no personal data), as a human must act.
 */
async function throwRefusals(
  ctx: SyncContext,
  ref: EntityRef,
  refused: Refusals,
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
): Promise<void> {
  // A held removal made moot (the group created again) leaves nothing refused.
  if (refused.error === undefined || refused.added.size + refused.removed.size === 0) return;
  if (refused.removed.size > 0) {
    ctx.logger.error(
      { ref, members: refused.removed.size },
      "group members could not be removed: the platform refused for good, they keep the group's access (dead letter)",
    );
  }
  const added = usersOfPlatformIds(ref.source, memberIds, pids, [...refused.added]).map((user) => user.id);
  const removed = await usersOwning(ctx, ref, [...refused.removed]);
  throw refusedMembersError(
    { added: refused.added.size, removed: refused.removed.size },
    refused.error,
    [...added, ...removed.users],
    removed.unknown,
  );
}

/**
 * A failure that ends the sync for good (a rename's 409, say) after the platform refused some
 * members' add or removal in it: the refusals are said too (the error line of a held removal, and
 * the dead letter's reason), so a member who keeps the group's access is not hidden behind the
 * other failure. The failure's code stays the letter's. A transient failure is left as it is: the
 * retry meets the refusals again.
 */
async function withRefusals(
  ctx: SyncContext,
  ref: EntityRef,
  failure: unknown,
  refused: Refusals,
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
): Promise<unknown> {
  const fate = classifyFailure(failure);
  if (!fate.permanent) return failure;
  try {
    await throwRefusals(ctx, ref, refused, memberIds, pids);
    return failure;
  } catch (letter) {
    const said = letter instanceof Error ? letter.message : String(letter);
    return new SyncError(`${fate.message}; besides, ${said}`, {
      code: fate.code,
      permanent: true,
      operation: fate.operation,
      cause: failure,
    });
  }
}

/**
 * What the group's status says while members deleted on the platform are left out (their users are
 * being created again; the group adds them once they land): visible in the admin API, not silent.
 */
function leftOut(vanished: ReadonlySet<string>): SyncOutcome["warnings"] {
  if (vanished.size === 0) return [];
  return [
    {
      code: "members_recreated",
      message: `${vanished.size} member(s) were deleted on the platform behind the bridge's back: left out until their users are created again, then added`,
    },
  ];
}

/**
 * After a create or an add refused with 400: looks each added member up on the platform (a few at
 * a time). Those that are no platform user are returned, to be left out of this sync, and their
 * directory users are synced again in resync mode: the user's sync reads the platform instead of
 * its record, finds the user gone and creates it again; its new platform id then marks its groups
 * dirty (sync-user.ts, afterPlatformId), and this group adds it. None returned: the refusal stands.
 */
async function leaveOutVanished(
  ctx: SyncContext,
  ref: EntityRef,
  added: readonly string[],
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
): Promise<string[]> {
  const missing = new Set<string>();
  for (const slice of chunk(added, LOOKUP_CONCURRENCY)) {
    const users = await Promise.all(slice.map((id) => ctx.platform.getUser(id)));
    slice.forEach((id, j) => {
      if (users[j] === null) missing.add(id);
    });
  }
  const fate = refusedAddFate(added, (id) => !missing.has(id));
  if (fate.type === "stands") return [];
  const users = usersOfPlatformIds(ref.source, memberIds, pids, fate.platformIds);
  ctx.logger.warn(
    { ref, vanished: users.length },
    "group add refused: members deleted on the platform are synced again; the others are added now",
  );
  // The resync request first: the sync the mark enqueues must see it.
  await ctx.state.requestResync(users);
  for (const user of users) await ctx.directory.markDirty(user);
  return fate.platformIds;
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
