import type { SourceConfig } from "../config/config-schema.js";
import type { UserRecord } from "../directory/directory-types.js";
import {
  type AppliedEmbedMember,
  type AppliedUser,
  type LifecycleState,
  type UserStep,
  answered,
} from "../mapping/plan-types.js";
import { valuesUnderRuleNames } from "../mapping/attribute-values.js";
import { embedMemberId } from "../mapping/plan-embed-group.js";
import { planUser, withManagerTranslation } from "../mapping/plan-user.js";
import { type ManagerTranslation, type UserProfile, toUserProfile } from "../mapping/user-profile.js";
import { WritesStopped, beforeWrite } from "../platform/client/unanswered-writes.js";
import type { PlatformScimUser } from "../platform/platform-types.js";
import { caseFold } from "../scim/case-fold.js";
import { type EntityRef, type JsonObject, type PatchOperation, refKey } from "../scim/scim-types.js";
import { waitForLateCreate } from "./late-writes.js";
import { lookUpManager } from "./manager-lookup.js";
import {
  beginCreate,
  checkNoCreateUnderWay,
  claimOwnership,
  isAnotherCreate,
  settleCreate,
  settleRenameRefusal,
} from "./ownership.js";
import type { SyncContext, SyncOutcome, SyncProgress } from "./sync-context.js";
import { SyncError, classifyFailure, isPlatformFailure } from "./sync-error.js";

const MAX_ROUNDS = 4;

/** Syncs one user: workspace users to platform users; embed-source users to their member record. */
export async function syncUser(
  ctx: SyncContext,
  ref: EntityRef,
  options: { resync: boolean },
  progress: SyncProgress,
): Promise<SyncOutcome> {
  const source = ctx.config.sources[ref.source];
  if (!source)
    throw new SyncError(`unknown source ${ref.source}`, { code: "unknown_source", permanent: true });
  const [snap, read] = await Promise.all([
    ctx.directory.snapshotUser(ref.source, ref.id),
    source.target === "workspace" ? ctx.state.getAppliedUser<AppliedUser>(ref) : null,
  ]);
  if (!snap) return { result: "absent", generation: 0, warnings: [] };
  progress.generation = snap.generation;
  if (source.target !== "workspace" || !read) return syncEmbedUser(ctx, ref, snap.desired, snap.generation);
  return syncWorkspaceUser(ctx, ref, source, snap.desired, snap.generation, options.resync, read);
}

async function syncEmbedUser(
  ctx: SyncContext,
  ref: EntityRef,
  desired: UserRecord | null,
  generation: number,
): Promise<SyncOutcome> {
  if (desired === null) {
    // The directory already took the user out of its groups (they are dirty and drop it).
    await ctx.state.forget(ref);
    await ctx.directory.purgeTombstone(ref, generation);
    return { result: "purged", generation, warnings: [] };
  }
  const user = desired.resource;
  const [current] = await ctx.state.getEmbedMembers(ref.source, [ref.id]);
  const member: AppliedEmbedMember = {
    externalId: embedMemberId(user, current?.externalId),
    active: user.active !== false,
  };
  const profile = toUserProfile(user);
  const email = profile.emails?.find((e) => e.primary)?.value ?? profile.emails?.[0]?.value;
  if (email) member.email = email;
  if (profile.displayName) member.displayName = profile.displayName;
  if (JSON.stringify(current) !== JSON.stringify(member)) {
    // Its groups decide embed membership (active, externalId): sync them again. The record says
    // so until they are marked, so a crash in between repeats the marking.
    await ctx.state.setEmbedMember(ref.source, ref.id, { ...member, notifyGroups: true });
    await markGroupsDirty(ctx, ref);
    await ctx.state.setEmbedMember(ref.source, ref.id, member);
  }
  return { result: "clean", generation, warnings: [] };
}

async function syncWorkspaceUser(
  ctx: SyncContext,
  ref: EntityRef,
  source: SourceConfig,
  record: UserRecord | null,
  generation: number,
  resync: boolean,
  read: { applied: AppliedUser | null; lifecyclePending: boolean },
): Promise<SyncOutcome> {
  const desired = record?.resource ?? null;
  // A queued lifecycle change may already have reached the platform (its bulk call's answer lost,
  // or the flusher killed), or reach it while this sync runs: the platform's state is unknown. The
  // plan queues the state wanted now, never drops it as "already there"; and what this sync records
  // says "unknown", never the state it read: written after the flusher settled the change, that
  // would stand for good if this sync died before queueing its own (a reactivation planned nothing
  // after it: the user stayed inactive). The flusher's settle fills it in. (Read with the record
  // at one instant: a change settled between two reads would be in neither.)
  const pendingFor = read.lifecyclePending ? read.applied?.platformId : undefined;
  const unknownWhilePending = (user: AppliedUser): AppliedUser =>
    pendingFor === undefined || user.platformId !== pendingFor || user.lifecycle === "deleted"
      ? user
      : lifecycleUnknown(user);
  let applied = read.applied && unknownWhilePending(read.applied);
  // A deleted user whose record says its platform user is already inactive (onDelete: deactivate)
  // plans no write, and forgetting it ends the bridge's hold on that platform user: one turned on
  // again behind the bridge's back would stay active, owned by no source, and reconciliation only
  // reports it (an orphan). So the deletion looks at the platform first, as a resync does.
  const lastLook = desired === null && source.onDelete === "deactivate" && applied?.lifecycle === "inactive";
  if (applied?.platformId && (resync || applied.inDoubt || lastLook)) {
    // A resync, writes whose answers never came, or a deletion's last look: what the platform holds now decides.
    const { inDoubt, ...known } = applied;
    applied = unknownWhilePending(
      await readPlatformUser(ctx, applied.platformId, known, Object.keys(source.attributes)),
    );
    if (inDoubt) {
      if (known.notifyGroups) applied.notifyGroups = true;
      await ctx.state.putApplied(ref, applied);
    }
  }

  // The manager as known now (again once it landed), with the translation the record holds then.
  const lookUpDesiredManager = (user: JsonObject) =>
    lookUpManager(ctx, ref.source, user, async () => applied?.managerTranslation);
  let manager = desired ? await lookUpDesiredManager(desired) : undefined;
  const warnings: SyncOutcome["warnings"] = [];
  // A rename refused while its name's holder was moving away, and free by the time it was looked
  // up: sent again once in this sync (a second refusal of a name nobody holds stands).
  let resentFreedName = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const plan = planUser({ desired, applied, source, manager });
    warnings.splice(0, warnings.length, ...plan.problems);
    const first = plan.steps[0];
    if (!first) {
      await dropStaleLifecycle(ctx, applied);
      applied = await afterPlatformId(ctx, ref, record, applied);
      applied = await recordManagerTranslation(ctx, ref, applied, plan.managerTranslation);
      const wait = await managerWait(ctx, ref, plan.waitingForManager);
      if (wait === "wait") throw waitingForManager(plan.waitingForManager);
      if (wait === "landed" && desired) {
        manager = await lookUpDesiredManager(desired);
        continue;
      }
      return { result: "clean", generation, platformId: applied?.platformId, warnings };
    }
    if (first.type === "createUser") {
      applied = await createOrAdoptUser(ctx, ref, first.body, first.userName, applied);
      continue;
    }
    if (first.type === "findLostUser") {
      // Creates whose answers never came may still land: look once they all could have.
      await waitForLateCreate(ctx, ref, "createUser");
      const seen = await ctx.platform.findUserByUserName(first.userName);
      const found = seen && !(await isAnotherCreate(ctx, "user", first.userName, ref)) ? seen : null;
      const owner = found ? await ctx.state.claimOwner("user", found.id, ref) : null;
      // Found: its platform id is new to the groups and the users that wait for it, as after a create.
      applied =
        found && owner === refKey(ref)
          ? { ...(await fromPlatformUser(ctx, found, Object.keys(source.attributes))), notifyGroups: true }
          : null;
      if (applied) await ctx.state.putApplied(ref, applied);
      // Found or not, that create has settled (a create planned next holds the name again).
      await settleCreate(ctx, "user", first.userName, ref);
      continue;
    }
    if (first.type === "forget") {
      // A deleted user's write that may still land (its deprovisioning's, say) keeps the user and
      // its claim on the platform user until it could have landed: an entity created again under
      // the same userName adopts that platform user only then (lifecycle-flusher.ts, settleApplied).
      if (desired === null) await waitForLateCreate(ctx, ref, "bulkUsers");
      await forgetUser(ctx, ref, applied, generation);
      return { result: "purged", generation, warnings };
    }

    const platformId = applied?.platformId;
    if (!applied || !platformId) throw new Error("planner produced updates without a platform id");
    // A write of this user that timed out may still land (late). A create: while the user holds
    // its name the platform refuses it, but once a delete or a rename frees the name it would land
    // as a second, active platform user that no source owns. Any write, on a deleted user: after
    // its deprovisioning the user is forgotten and the late-write check finds nothing to put right
    // (a late ACTIVATE would leave it active). Such a change waits until no write can land late.
    if (desired === null || freesUserName(plan.steps, applied)) {
      await waitForLateCreate(ctx, ref, desired === null ? "bulkUsers" : "createUser");
    }
    if (!plan.steps.some((s) => s.type === "patchUser")) {
      // The profile is already as planned, and so its manager translation (a user created with
      // its manager's platform id): recorded before any lifecycle change is queued.
      applied = (await recordManagerTranslation(ctx, ref, applied, plan.managerTranslation)) ?? applied;
    }
    let vanished = false;
    // The steps as sent: a profile PATCH refused for its userName alone is sent again without it.
    const steps = [...plan.steps];
    const lastWriteOf = () => steps.findLastIndex((s) => s.type === "patchUser" || s.type === "setAttribute");
    let lastWrite = lastWriteOf();
    if (lastWrite >= 0) {
      // Until these writes are answered, they may land unseen (answer lost, crash): say so first.
      applied = { ...applied, inDoubt: true };
      await ctx.state.putApplied(ref, applied);
    }
    // A write the platform refuses for good (a userName another user holds, an attribute of another
    // type) does not hold back the others: the rest are still sent, then the refusal is raised.
    let refused: unknown;
    // A write that failed otherwise (transient, or waiting for a name): raised after the lifecycle.
    let failed: unknown;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as UserStep;
      try {
        if (step.type === "patchUser") {
          await ctx.platform.patchUser(platformId, step.operations);
          applied = plan.profile
            ? withManagerTranslation(
                { ...applied, profile: profileAfter(plan.profile, applied, step.operations) },
                plan.managerTranslation,
              )
            : applied;
          await ctx.state.putApplied(ref, i === lastWrite ? answered(applied) : applied);
        } else if (step.type === "setAttribute") {
          await setAttributeValue(ctx, platformId, step, source.attributes[step.name]?.displayName);
          applied = { ...applied, attributes: { ...applied.attributes, [step.name]: step.value } };
          await ctx.state.putApplied(ref, i === lastWrite ? answered(applied) : applied);
        }
      } catch (err) {
        if (err instanceof WritesStopped) throw err; // this sync is to write nothing more
        if (isPlatformFailure(err, "not_found")) {
          vanished = true; // deleted behind our back: create it again (or forget a tombstone)
          break;
        }
        if (!classifyFailure(err).permanent) {
          failed = err;
          break;
        }
        if (isPlatformFailure(err, "conflict") && desired) {
          let freed: boolean;
          try {
            freed = (await settleUserRename(ctx, ref, desired, applied)) === "freed";
          } catch (blocked) {
            failed = blocked;
            break;
          }
          if (freed && !resentFreedName) {
            resentFreedName = true;
            i--;
            continue;
          }
        }
        refused ??= err;
        // RFC 7644 §3.12: a 409 on a PATCH is about the userName (the one unique attribute), and
        // the platform refuses the whole PATCH: the rest of the profile (displayName, emails, the
        // enterprise fields) is sent again on its own, not held back by the name's conflict.
        const rest = isPlatformFailure(err, "conflict") ? withoutUserName(step) : undefined;
        if (rest) {
          steps.splice(i + 1, 0, rest);
          lastWrite = lastWriteOf();
          continue;
        }
        // The refusal is an answer: the write did not land.
        if (i === lastWrite) {
          applied = answered(applied);
          await ctx.state.putApplied(ref, applied);
        }
      }
    }
    if (vanished) {
      applied = { ...applied, lifecycle: "deleted" };
      await ctx.state.putApplied(ref, applied);
      if (desired === null) {
        await forgetUser(ctx, ref, applied, generation);
        return { result: "purged", generation, warnings };
      }
      continue;
    }
    // Whether this sync ends blocked is known before its lifecycle change is queued: the flush may
    // settle that change before the sync has recorded its status, and must not mark it clean then.
    const wait =
      failed === undefined && !refused ? await managerWait(ctx, ref, plan.waitingForManager) : "none";
    if (wait === "landed" && desired) {
      manager = await lookUpDesiredManager(desired);
      continue;
    }
    const blocked = wait === "wait" || (failed !== undefined && classifyFailure(failed).blocked === true);
    // The lifecycle change is queued after the writes, whatever became of them: a refused or failing
    // write must not keep a deactivated user active. After, not before: the flusher records the
    // applied lifecycle once the bulk call is answered, and a write recorded later would put the
    // record the sync read back over it.
    const lifecycle = plan.steps.find((s) => s.type === "lifecycle");
    if (lifecycle) {
      // A queued change is a platform write deferred to the flusher: a run that may no longer own
      // its job (frozen past its lock, the entity synced, even purged, by another run since) must
      // not queue one (an ACTIVATE of a user deleted at the source meanwhile would stand for good).
      await beforeWrite();
      const now = Date.now();
      await ctx.state.putLifecycle({
        platformId,
        ref,
        action: lifecycle.action,
        generation,
        final: lifecycle.final,
        attempts: 0,
        since: now,
        queuedAt: now,
        ...(blocked ? { blocked: true as const } : {}),
      });
      await ctx.scheduleLifecycle();
      // Settled from now on at any time: what this sync still records (its groups' hand-off) says
      // "unknown" too, never the state before the change (a write over the settle: a user created
      // inactive, activated, then deactivated at the source planned nothing and stayed active).
      applied = lifecycleUnknown(applied);
    }
    if (failed !== undefined) throw failed;
    if (refused) {
      // The user is on the platform all the same: its groups may add it now.
      await afterPlatformId(ctx, ref, record, applied);
      throw refused;
    }
    applied = answered(applied);
    if (!lifecycle) await dropStaleLifecycle(ctx, applied);
    applied = await afterPlatformId(ctx, ref, record, applied);
    if (wait === "wait") throw waitingForManager(plan.waitingForManager);
    return { result: lifecycle ? "lifecycle" : "clean", generation, platformId, warnings };
  }
  throw new SyncError("the user did not converge after several rounds", {
    code: "not_converging",
    permanent: false,
  });
}

/**
 * Whether the steps free the userName the platform user holds: a DELETE, or a userName changed
 * other than in case (the platform compares userNames without regard to case).
 */
function freesUserName(steps: readonly UserStep[], applied: AppliedUser): boolean {
  const current = caseFold(String(applied.profile?.userName ?? ""));
  return steps.some(
    (step) =>
      (step.type === "lifecycle" && step.action === "DELETE") ||
      (step.type === "patchUser" &&
        step.operations.some(
          (operation) => operation.path === "userName" && caseFold(String(operation.value)) !== current,
        )),
  );
}

/** A profile PATCH without its userName operation; undefined when it has none or nothing else. */
function withoutUserName(step: UserStep): UserStep | undefined {
  if (step.type !== "patchUser") return undefined;
  const operations = step.operations.filter((operation) => operation.path !== "userName");
  if (operations.length === 0 || operations.length === step.operations.length) return undefined;
  return { type: "patchUser", operations };
}

/**
 * The profile the platform user holds once a PATCH of the plan is answered: the plan's, but the
 * userName it had when the PATCH did not send one (the rest of a PATCH whose userName was refused).
 */
function profileAfter(
  planned: UserProfile,
  applied: AppliedUser,
  operations: readonly PatchOperation[],
): UserProfile {
  if (operations.some((operation) => operation.path === "userName") || !applied.profile) return planned;
  return { ...planned, userName: applied.profile.userName };
}

/**
 * Records the manager translation a user's profile holds once it is as planned (the plan's), when
 * the record does not say so yet: a user created or adopted with it, or recorded before
 * translations were.
 */
async function recordManagerTranslation(
  ctx: SyncContext,
  ref: EntityRef,
  applied: AppliedUser | null,
  translation: ManagerTranslation | undefined,
): Promise<AppliedUser | null> {
  if (!applied?.platformId) return applied;
  const recorded = withManagerTranslation(applied, translation);
  if (recorded !== applied) await ctx.state.putApplied(ref, recorded);
  return recorded;
}

/**
 * What the user does about a manager that has no platform user yet:
 * - "wait": the rest is applied, and the user stays dirty (no attempt is spent) until the sweeper
 *   syncs it again;
 * - "none": the manager's own sync failed for good (a dead letter) and will not give it one by
 *   waiting: the user is left without it, as synced, and noted among the manager's dependents, so
 *   that the manager's create or adoption syncs it again;
 * - "landed": the manager got its platform user meanwhile (after the lookup, before the note):
 *   plan again with it.
 */
async function managerWait(
  ctx: SyncContext,
  ref: EntityRef,
  managerId: string | undefined,
): Promise<"none" | "wait" | "landed"> {
  if (managerId === undefined) return "none";
  const status = await ctx.state.getStatus({ source: ref.source, kind: "user", id: managerId });
  if (status?.state !== "dead") return "wait";
  // Noted before the platform id is read again, and the manager records its platform id before
  // it reads its dependents (afterPlatformId): one of the two sees the other.
  await ctx.state.noteManagerLeftOut(ref.source, ref.id, managerId);
  const [platformId] = await ctx.state.getUserPlatformIds(ref.source, [managerId]);
  return platformId ? "landed" : "none";
}

function waitingForManager(managerId: string | undefined): SyncError {
  return new SyncError(`waiting for the manager ${managerId} to get a platform user`, {
    code: "waiting_for_manager",
    permanent: false,
    blocked: true,
  });
}

/** A user's rename refused 409: who holds the userName now decides (settleRenameRefusal). */
async function settleUserRename(
  ctx: SyncContext,
  ref: EntityRef,
  desired: JsonObject,
  applied: AppliedUser,
): Promise<"freed" | "stands"> {
  const holder = await ctx.platform.findUserByUserName(String(desired["userName"]));
  const current = caseFold(String(applied.profile?.userName ?? ""));
  return settleRenameRefusal(ctx, ref, {
    scope: "user",
    holderKey: holder?.id,
    ownKey: applied.platformId ?? "",
    operation: "patchUser",
    swapsWithUs: (other) => caseFold(String(other["userName"])) === current,
  });
}

/**
 * Upserts one attribute value. A 404 means the user or the definition is gone: a definition
 * deleted behind our back is created again (the cache forgets it); a missing user is "vanished".
 */
async function setAttributeValue(
  ctx: SyncContext,
  userId: string,
  step: Extract<UserStep, { type: "setAttribute" }>,
  displayName: string | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const attributeId = await ctx.attributes.ensure(step.name, step.attributeType, displayName);
    try {
      await ctx.platform.upsertUserAttributeValue({ userId, attributeId, value: step.value });
      return;
    } catch (err) {
      if (!isPlatformFailure(err, "not_found") || attempt > 0) throw err;
      ctx.attributes.invalidate(step.name);
      if (!(await ctx.platform.getUser(userId))) throw err;
    }
  }
}

async function createOrAdoptUser(
  ctx: SyncContext,
  ref: EntityRef,
  body: JsonObject,
  userName: string,
  applied: AppliedUser | null,
): Promise<AppliedUser> {
  // A create with a platform id recorded: that platform user is gone (deleted behind our back or
  // by a bulk call): the entity owns it no more (invariant 6).
  if (applied?.platformId) await ctx.state.releaseOwner("user", applied.platformId, ref);
  // Record the intent first: if the answer is lost, the user is found again by userName.
  await ctx.state.putApplied(ref, {
    attributes: {},
    ...applied,
    platformId: undefined,
    pendingUserName: userName,
  });
  await beginCreate(ctx, "user", userName, ref);
  let result: AppliedUser;
  try {
    const created = await ctx.platform.createUser(body);
    await claimOwnership(ctx, "user", created.id, ref, "createUser");
    result = {
      platformId: created.id,
      profile: toUserProfile(body),
      // RFC 7644 §3.3: the answer is the user as stored (a platform may create it inactive).
      lifecycle:
        (typeof created.active === "boolean" ? created.active : body["active"]) === false
          ? "inactive"
          : "active",
      attributes: {},
    };
  } catch (err) {
    if (!isPlatformFailure(err, "conflict")) throw err;
    // RFC 7644 §3.3: 409 uniqueness. Adopt the platform user with that userName, unless it may be
    // another entity's create whose answer has not come.
    await checkNoCreateUnderWay(ctx, "user", userName, ref, "createUser");
    const found = await ctx.platform.findUserByUserName(userName);
    if (!found) {
      throw new SyncError("the platform answered 409 but has no user of that userName", {
        code: "platform_inconsistent",
        permanent: false,
        operation: "createUser",
      });
    }
    await claimOwnership(ctx, "user", found.id, ref, "createUser");
    // Read again once owned: a change made before the claim (a reconciliation deactivating it as
    // an orphan) is in this read, and one made after it sees the owner (apply-repairs.ts).
    result = await fromPlatformUser(
      ctx,
      (await ctx.platform.getUser(found.id)) ?? found,
      Object.keys(ctx.config.sources[ref.source]?.attributes ?? {}),
    );
  }
  result.notifyGroups = true;
  await ctx.state.putApplied(ref, result);
  await settleCreate(ctx, "user", userName, ref);
  return result;
}

/** The record with its lifecycle unknown (a change of it queued: the flusher's settle fills it in). */
function lifecycleUnknown(applied: AppliedUser): AppliedUser {
  const { lifecycle: _unknown, ...rest } = applied;
  return rest;
}

function lifecycleOf(user: PlatformScimUser): LifecycleState {
  return user.active === false ? "inactive" : "active";
}

async function fromPlatformUser(
  ctx: SyncContext,
  user: PlatformScimUser,
  ruleNames: readonly string[],
): Promise<AppliedUser> {
  const values = (await ctx.platform.getUserAttributeValues(user.id)) ?? [];
  // A rule's value may be held under a name that differs from the rule's only in case.
  const attributes: AppliedUser["attributes"] = Object.fromEntries(valuesUnderRuleNames(values, ruleNames));
  return { platformId: user.id, profile: toUserProfile(user), lifecycle: lifecycleOf(user), attributes };
}

/** Resync: what the platform holds now (a user gone behind our back reads as deleted). */
async function readPlatformUser(
  ctx: SyncContext,
  platformId: string,
  applied: AppliedUser,
  ruleNames: readonly string[],
): Promise<AppliedUser> {
  const user = await ctx.platform.getUser(platformId);
  if (!user) return { ...applied, lifecycle: "deleted" };
  // The translation is the bridge's memory of what it sent, not the platform's state: kept.
  const read = await fromPlatformUser(ctx, user, ruleNames);
  return applied.managerTranslation ? { ...read, managerTranslation: applied.managerTranslation } : read;
}

async function dropStaleLifecycle(ctx: SyncContext, applied: AppliedUser | null): Promise<void> {
  if (!applied?.platformId) return;
  if (await ctx.state.getLifecycle(applied.platformId)) await ctx.state.dropLifecycle(applied.platformId);
}

/**
 * When a user first gets its platform id, its groups can now add it, and the users synced without
 * it as their manager can have it: record the id where their syncs read it, then mark them dirty.
 * `notifyGroups` is written together with the platform id and cleared only after this, so a crash
 * in between repeats it instead of losing a member (or a manager).
 */
async function afterPlatformId(
  ctx: SyncContext,
  ref: EntityRef,
  record: UserRecord | null,
  applied: AppliedUser | null,
): Promise<AppliedUser | null> {
  if (!record || !applied?.platformId || !applied.notifyGroups) return applied;
  await ctx.state.setUserPlatformId(ref.source, ref.id, applied.platformId);
  await markGroupsDirty(ctx, ref);
  await markDependentsDirty(ctx, ref);
  const { notifyGroups: _done, ...rest } = applied;
  // Only the flag goes, from the record as it is now: a lifecycle change queued by this sync may
  // have been settled by the flusher meanwhile, and the record this sync holds would undo that
  // (no lifecycle recorded: a later sync queued it again, against invariant 4).
  await ctx.state.updateApplied<AppliedUser>(ref, (current) => {
    if (!current.notifyGroups) return null;
    const { notifyGroups: _flag, ...next } = current;
    return next;
  });
  return rest;
}

/**
 * The users synced without this user as their manager (it was a dead letter then) can have it now:
 * they are synced again. Forgotten only after they are marked, so a crash in between repeats it.
 */
async function markDependentsDirty(ctx: SyncContext, ref: EntityRef): Promise<void> {
  const dependents = await ctx.state.managerDependents(ref.source, ref.id);
  for (const id of dependents) await ctx.directory.markDirty({ source: ref.source, kind: "user", id });
  await ctx.state.dropManagerDependents(ref.source, ref.id, dependents);
}

/**
 * Marks the user's groups dirty, read after the caller recorded what the groups depend on (the
 * platform id, or embed member data): a group that gained the user since this sync's snapshot is
 * included, and a group sync that started earlier runs again (keepLastIfActive).
 */
async function markGroupsDirty(ctx: SyncContext, ref: EntityRef): Promise<void> {
  const current = await ctx.directory.getUser(ref.source, ref.id);
  for (const groupId of current?.groups ?? []) {
    await ctx.directory.markDirty({ source: ref.source, kind: "group", id: groupId });
  }
}

export async function forgetUser(
  ctx: SyncContext,
  ref: EntityRef,
  applied: AppliedUser | null,
  generation: number,
): Promise<boolean> {
  const owned = applied?.platformId ? { scope: "user" as const, platformKey: applied.platformId } : undefined;
  await ctx.state.forget(ref, owned);
  return ctx.directory.purgeTombstone(ref, generation);
}
