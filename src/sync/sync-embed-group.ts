import type { GroupRecord } from "../directory/directory-types.js";
import {
  EMBED_GROUP_NAME_MAX,
  type EmbedTarget,
  characterCount,
  planEmbedGroup,
  resolveEmbedTenant,
} from "../mapping/plan-embed-group.js";
import { type AppliedEmbedGroup, answered } from "../mapping/plan-types.js";
import type { EmbedGroup, EmbedUser, EmbedUserInput } from "../platform/platform-types.js";
import { type EntityRef, refKey } from "../scim/scim-types.js";
import {
  beginCreate,
  checkNoCreateUnderWay,
  claimOwnership,
  isAnotherCreate,
  settleCreate,
  settleRenameRefusal,
} from "./ownership.js";
import { waitForLateCreate } from "./late-writes.js";
import type { SyncContext, SyncOutcome } from "./sync-context.js";
import { desiredEmbedMembers, embedMemberWrites } from "./embed-member-writes.js";
import {
  type Narrowing,
  type Refusals,
  embedRefusedNames,
  narrowChunk,
  throwRefusals,
  withRefusals,
} from "./group-refusals.js";
import { SyncError, isPlatformFailure } from "./sync-error.js";
import { embedKey } from "./sync-keys.js";

const MAX_ROUNDS = 4;

/**
 * Syncs one group of an embed-tenant source: an embed group named after it in its tenant, whose
 * members are the group's active users, identified by externalId (or userName).
 */
export async function syncEmbedGroup(
  ctx: SyncContext,
  ref: EntityRef,
  target: EmbedTarget,
  prefix: string,
  record: GroupRecord | null,
  generation: number,
  resync: boolean,
): Promise<SyncOutcome> {
  let desired: { tenant: string; name: string } | null = null;
  /**
   * The group's name cannot name an embed group (it gives no tenant, or it is too long): only the
   * membership of its existing embed group is synced, then this is raised.
   */
  let badName: (() => SyncError) | undefined;
  if (record) {
    const tenant = resolveEmbedTenant(target, record.resource.displayName);
    if (!tenant) badName = noEmbedTenant;
    else desired = { tenant, name: `${prefix}${record.resource.displayName}` };
  }
  // The platform contract caps embed group names (createEmbedGroup: name maxLength 200, code points).
  if (desired && characterCount(desired.name) > EMBED_GROUP_NAME_MAX) {
    badName = nameTooLong;
    desired = null;
  }
  const memberIds = (record?.members ?? []).map((m) => m.value);
  const infos = await ctx.state.getEmbedMembers(ref.source, memberIds);
  // A deactivated user leaves every group of the tenant.
  const desiredMembers = desiredEmbedMembers(infos);

  const names = embedRefusedNames(
    ctx,
    ref,
    memberIds,
    infos.map((info) => info?.externalId),
  );
  /** Whether a refused chunk of adds, of removals, is narrowed to its culprits (Narrowing). */
  const narrowing: Narrowing = { add: true, remove: true };

  let applied = await ctx.state.getApplied<AppliedEmbedGroup>(ref);
  // A group renamed to a name that gives no tenant (or one too long): no embed group can be named after it, and
  // deleting the one it has would drop its members' access on a mere rename. A rename that cannot
  // be applied must not keep members in, though: the existing embed group (its current tenant and
  // name) keeps following the group's membership (a deactivated or deleted user still leaves it),
  // and the error is raised after that, so it stays visible (a dead letter).
  if (badName && !(applied?.platformId && applied.tenant)) throw badName();
  if (applied?.platformId && applied.tenant && (resync || applied.inDoubt)) {
    // A resync, or writes whose answers never came: what the platform holds now decides.
    const inDoubt = applied.inDoubt;
    const was = embedKey(applied.tenant, applied.platformId);
    applied = await readEmbedGroup(ctx, applied.tenant, applied.platformId);
    // Gone behind our back (its tenant with it, maybe): owned no more (invariant 6).
    if (!applied) await ctx.state.releaseOwner("embed", was, ref);
    if (inDoubt && applied) await ctx.state.putApplied(ref, applied);
  }
  if (badName) {
    if (!applied?.platformId || !applied.tenant || applied.name === undefined) throw badName();
    desired = { tenant: applied.tenant, name: applied.name };
  }

  // A rename refused while its name's holder was moving away, and free by the time it was looked
  // up: planned and sent again once (a second refusal of a name nobody holds stands).
  let resentFreedName = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const plan = planEmbedGroup({ desired, desiredMembers, applied });
    const first = plan.steps[0];
    if (!first) {
      if (badName) throw badName();
      return { result: "clean", generation, platformId: applied?.platformId, warnings: [] };
    }
    // Without a tenant the embed group is never created (again) nor looked for: gone is gone.
    if (badName && first.type !== "addEmbedMembers" && first.type !== "removeEmbedMembers") {
      throw badName();
    }
    if (first.type === "createEmbedGroup") {
      applied = await createOrAdoptEmbedGroup(ctx, ref, first.tenant, first.name, applied);
      continue;
    }
    if (first.type === "findLostEmbedGroup") {
      const seen = await findByName(ctx, first.tenant, first.name);
      const another = seen && (await isAnotherCreate(ctx, "embed", `${first.tenant}/${first.name}`, ref));
      const found = another ? null : seen;
      const owner = found ? await ctx.state.claimOwner("embed", embedKey(first.tenant, found.id), ref) : null;
      applied = found && owner === refKey(ref) ? await readEmbedGroup(ctx, first.tenant, found.id) : null;
      if (applied) await ctx.state.putApplied(ref, applied);
      // Found or not, that create has settled (a create planned next holds the name again).
      await settleCreate(ctx, "embed", `${first.tenant}/${first.name}`, ref);
      continue;
    }
    if (first.type === "deleteEmbedGroup") {
      // A create of it that timed out may still land (late) once the name is free in the tenant:
      // the delete waits until no write of it can land late (as a rename does, below).
      await waitForLateCreate(ctx, ref, "createEmbedGroup");
      // A deleted group an admin gave up meanwhile (its letter discarded: its tombstone purged after
      // this sync read it, AdminService.releaseTombstone): its embed group is no source's any more
      // and stays, as a workspace group's does (sync-group.ts). The sync of the absent entity
      // forgets what is recorded of it (forgetAbsent).
      if (desired === null && (await ctx.directory.snapshotGroup(ref.source, ref.id)) === null) {
        return { result: "absent", generation: 0, warnings: [] };
      }
      if (applied?.platformId && applied.tenant) {
        await ctx.platform.deleteEmbedGroup(applied.tenant, applied.platformId);
        await ctx.state.releaseOwner("embed", embedKey(applied.tenant, applied.platformId), ref);
      }
      if (desired === null) return forgetEmbedGroup(ctx, ref, generation);
      applied = null; // moved to another tenant: create it there
      await ctx.state.putApplied(ref, { members: [] });
      continue;
    }
    if (first.type === "forget") return forgetEmbedGroup(ctx, ref, generation);

    const { platformId, tenant } = applied ?? {};
    if (!applied || !platformId || !tenant)
      throw new Error("planner produced updates without an embed group");
    // Until these writes are answered, they may land unseen (answer lost, crash): say so first.
    applied = { ...applied, inDoubt: true };
    await ctx.state.putApplied(ref, applied);
    let current: AppliedEmbedGroup = applied;
    /**
     * Members whose add or removal the platform refused for good in this round: the steps after
     * their chunk are sent, then the refusal ends the sync (its dead letter). A group created again
     * (a 404) starts a round of its own: its members are sent to it again.
     */
    const refused: Refusals = { added: new Set(), removed: new Set() };
    const writes = embedMemberWrites(ctx, tenant, platformId, desiredMembers);
    /** Sends a member chunk; refused for good, it is narrowed to its culprits, who join its refusals. */
    const sendChunk = async (ids: string[], kind: keyof Narrowing) => {
      const write = writes[kind];
      const into = kind === "add" ? refused.added : refused.removed;
      try {
        await write.send(ids);
        current = write.landed(current, ids);
      } catch (err) {
        if (!isPlatformFailure(err, "bad_request")) throw err;
        const chunkOf = await narrowChunk(ctx, ref, current, ids, narrowing[kind], write);
        current = chunkOf.applied;
        if (chunkOf.landedNothing) narrowing[kind] = false;
        refused.error ??= err;
        for (const id of chunkOf.refused) into.add(id);
        if (chunkOf.failure !== undefined) throw chunkOf.failure;
      }
    };
    try {
      for (const [i, step] of plan.steps.entries()) {
        if (step.type === "renameEmbedGroup") {
          await waitForLateCreate(ctx, ref, "createEmbedGroup");
          await ctx.platform.updateEmbedGroup(tenant, platformId, { name: step.name });
          current = { ...current, name: step.name };
        } else if (step.type === "addEmbedMembers") {
          // Refused for good: the members the platform really refuses are found by sending the
          // chunk again in halves (the others get in now), and the later chunks and the rename do
          // not wait on them. The record leaves them out, so a retry adds only them.
          await sendChunk(
            step.users.map((u) => u.externalId),
            "add",
          );
        } else if (step.type === "removeEmbedMembers") {
          // Refused for good: narrowed the same way. The ones refused stay in the group (the record
          // says so), the group's other changes are sent, and a retry sends only their removal.
          await sendChunk(step.externalIds, "remove");
        }
        if (i === plan.steps.length - 1) current = answered(current);
        await ctx.state.putApplied(ref, current);
      }
    } catch (err) {
      applied = current;
      if (isPlatformFailure(err, "conflict") && desired && !badName) {
        // 409 on a rename: wait (blocked, not a dead letter) while another group of this source
        // that holds the name is moving away from it (renamed or deleted, not applied yet); a
        // true swap, or a holder of another source or of none, stays the visible conflict.
        const holder = await findByName(ctx, tenant, desired.name);
        const currentName = `${tenant}/${current.name ?? ""}`;
        const verdict = await settleRenameRefusal(ctx, ref, {
          scope: "embed",
          holderKey: holder ? embedKey(tenant, holder.id) : undefined,
          ownKey: embedKey(tenant, platformId),
          operation: "updateEmbedGroup",
          swapsWithUs: (other) => embedNameOf(target, prefix, other) === currentName,
        });
        if (verdict === "freed" && !resentFreedName) {
          resentFreedName = true;
          applied = answered(current);
          await ctx.state.putApplied(ref, applied);
          continue;
        }
      }
      // A failure for good says the refusals met before it too (withRefusals).
      if (!isPlatformFailure(err, "not_found")) throw await withRefusals(ctx, ref, err, refused, names);
      // Gone behind our back (its tenant with it, maybe): owned no more (invariant 6).
      await ctx.state.releaseOwner("embed", embedKey(tenant, platformId), ref);
      applied = null;
      continue;
    }
    if (badName) throw await withRefusals(ctx, ref, badName(), refused, names);
    // Named by the bridge's user ids: an externalId may be a userName (personal data).
    await throwRefusals(ctx, ref, refused, names);
    return { result: "clean", generation, platformId, warnings: [] };
  }
  throw new SyncError("the embed group did not converge after several rounds", {
    code: "not_converging",
    permanent: false,
  });
}

/** `<tenant>/<name>` of the embed group a group of the source (its SCIM resource) maps to; "" for none. */
function embedNameOf(target: EmbedTarget, prefix: string, group: Record<string, unknown>): string {
  const displayName = String(group["displayName"] ?? "");
  const tenant = resolveEmbedTenant(target, displayName);
  return tenant ? `${tenant}/${prefix}${displayName}` : "";
}

function nameTooLong(): SyncError {
  return new SyncError(
    `the embed group name is longer than the platform's ${EMBED_GROUP_NAME_MAX} characters`,
    {
      code: "embed_group_name_too_long",
      permanent: true,
    },
  );
}

function noEmbedTenant(): SyncError {
  return new SyncError("the group's name gives no embed tenant (it does not match the source's pattern)", {
    code: "no_embed_tenant",
    permanent: true,
  });
}

/**
 * The tenant's group of that name. With `orCaseFolded` (after a 409: the platform says the name is
 * taken), a group whose name differs only in case is the answer when none matches exactly: the
 * contract does not say whether the platform compares embed group names with regard to case.
 */
async function findByName(
  ctx: SyncContext,
  tenant: string,
  name: string,
  orCaseFolded = false,
): Promise<EmbedGroup | null> {
  const folded = name.toLowerCase();
  let sameButCase: EmbedGroup | null = null;
  try {
    for await (const group of ctx.platform.listEmbedGroups(tenant)) {
      if (group.name === name) return group;
      if (orCaseFolded && !sameButCase && group.name.toLowerCase() === folded) sameButCase = group;
    }
  } catch (err) {
    // A tenant comes into being with its first group: a lost first create that never landed
    // leaves no tenant, and listing its groups may answer 404 (the contract documents no answer
    // for a missing tenant). No tenant, no group of that name.
    if (!isPlatformFailure(err, "not_found")) throw err;
  }
  return sameButCase;
}

async function readEmbedGroup(
  ctx: SyncContext,
  tenant: string,
  id: string,
): Promise<AppliedEmbedGroup | null> {
  const group = await ctx.platform.getEmbedGroup(tenant, id);
  if (!group) return null;
  const members: string[] = [];
  const profiles: EmbedUserInput[] = [];
  try {
    for await (const user of ctx.platform.listEmbedGroupMembers(tenant, id)) {
      members.push(user.externalId);
      profiles.push(embedUserProfile(user));
    }
  } catch (err) {
    // Deleted between the two reads: gone, as if the first had answered 404.
    if (isPlatformFailure(err, "not_found")) return null;
    throw err;
  }
  return { platformId: id, tenant, name: group.name, members, profiles };
}

/** The values an embed user holds that a member add sets (its email and displayName). */
function embedUserProfile(user: EmbedUser): EmbedUserInput {
  return {
    externalId: user.externalId,
    ...(user.email !== undefined ? { email: user.email } : {}),
    ...(user.displayName !== undefined ? { displayName: user.displayName } : {}),
  };
}

async function createOrAdoptEmbedGroup(
  ctx: SyncContext,
  ref: EntityRef,
  tenant: string,
  name: string,
  applied: AppliedEmbedGroup | null,
): Promise<AppliedEmbedGroup> {
  await ctx.state.putApplied(ref, {
    members: [],
    ...applied,
    platformId: undefined,
    tenant,
    pendingName: name,
  });
  // Held per tenant: the same name in two tenants is two groups.
  const held = `${tenant}/${name}`;
  await beginCreate(ctx, "embed", held, ref);
  let result: AppliedEmbedGroup | null;
  try {
    const created = await ctx.platform.createEmbedGroup(tenant, { name });
    await claimOwnership(ctx, "embed", embedKey(tenant, created.id), ref, "createEmbedGroup");
    result = { platformId: created.id, tenant, name, members: [] };
  } catch (err) {
    if (!isPlatformFailure(err, "conflict")) throw err;
    // Adopt the embed group of that name, unless it may be another entity's unanswered create.
    await checkNoCreateUnderWay(ctx, "embed", held, ref, "createEmbedGroup");
    const found = await findByName(ctx, tenant, name, true);
    if (!found) {
      throw new SyncError("the platform answered 409 but has no embed group of that name", {
        code: "platform_inconsistent",
        permanent: false,
        operation: "createEmbedGroup",
      });
    }
    await claimOwnership(ctx, "embed", embedKey(tenant, found.id), ref, "createEmbedGroup");
    result = await readEmbedGroup(ctx, tenant, found.id);
    if (!result)
      throw new SyncError("the embed group vanished", { code: "platform_inconsistent", permanent: false });
  }
  await ctx.state.putApplied(ref, result);
  await settleCreate(ctx, "embed", held, ref);
  return result;
}

async function forgetEmbedGroup(ctx: SyncContext, ref: EntityRef, generation: number): Promise<SyncOutcome> {
  await ctx.state.forget(ref);
  await ctx.directory.purgeTombstone(ref, generation);
  return { result: "purged", generation, warnings: [] };
}
