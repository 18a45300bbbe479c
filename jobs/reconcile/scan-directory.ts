import type { AppliedGroup, AppliedEmbedGroup } from "../../src/mapping/plan-types.js";
import type { EmbedGroup } from "../../src/platform/platform-types.js";
import { classifyUnseen } from "../../src/reconcile/classify-user.js";
import type { EntityKind, EntityRef } from "../../src/scim/scim-types.js";
import { caseFold } from "../../src/scim/case-fold.js";
import { refKey } from "../../src/scim/scim-types.js";
import { isPlatformFailure } from "../../src/sync/sync-error.js";
import { embedKey } from "../../src/sync/sync-keys.js";
import type { RunContext } from "./run-context.js";
import { classifyOwnedEmbedGroup, classifyOwnedWorkspaceGroup } from "./scan-platform-groups.js";
import { classifyOwnedUsers, desiredOf } from "./scan-platform-users.js";

/**
 * Streams the directory's ids of one kind and finds those the platform listing did not contain
 * (SMISMEMBER against the run's seen set): never synced (missing) or owned but gone
 * (deletedBehind). Users are only compared for workspace sources: an embed-tenant source's users
 * are embed users, reached through its groups.
 *
 * The identity provider does not stop while a run streams: a user or group whose sync created it
 * on the platform after the listing had passed the page it lands on is there all the same. So an
 * unseen entity with a platform id is read once more on the platform before it is called deleted
 * behind the bridge's back; found, it is classified as if listed. Every one whose sync recorded
 * it after the run started (or records none yet) is read; of the others (a listing that shifted
 * under deletions skips one now and then), at most `maxUnseenRereads` a run: a platform wiped
 * behind the bridge would otherwise cost one read per user. The rest are taken as the listing found
 * them (deletedBehind): their repair is a resync, which reads the platform first and writes only
 * what differs, so one that is there after all is not created again. One whose repair could
 * deprovision someone when it is there after all (a user the source wants inactive, an embed
 * group) is always read: the guard counts what its classification deprovisions (mayDeprovision).
 */
export async function scanDirectory(ctx: RunContext, kind: EntityKind): Promise<void> {
  const { directory, redis, state } = ctx.deps;
  const source = ctx.run.source;
  const seenKey = kind === "user" ? ctx.keys.seenUsers : ctx.keys.seenGroups;
  // Ids only: pages of 1000 (one SMISMEMBER each); unseen ones are rare and read individually.
  for await (const ids of directory.scanIds(source, kind, 1000)) {
    if (ids.length === 0) continue;
    await ctx.stillHeld();
    const seen = await redis.smismember(seenKey, ...ids);
    const unseen = ids.filter((_id, index) => seen[index] !== 1);
    if (unseen.length === 0) continue;
    const platformIds =
      kind === "user"
        ? await state.getUserPlatformIds(source, unseen)
        : await Promise.all(
            unseen.map(async (id) => {
              const applied = await state.getApplied<AppliedGroup | AppliedEmbedGroup>({ source, kind, id });
              return applied?.platformId ?? null;
            }),
          );
    const recent = await syncedDuringRun(ctx, kind, unseen, platformIds);
    const inactiveUnknown: string[] = [];
    for (let start = 0; start < unseen.length; start += LOOKS_AT_ONCE) {
      await Promise.all(
        unseen.slice(start, start + LOOKS_AT_ONCE).map(async (id, offset) => {
          const ref = { source, kind, id };
          const desired =
            kind === "user"
              ? desiredOf(await directory.snapshotUser(source, id))
              : desiredOf(await directory.snapshotGroup(source, id));
          const platformId = platformIds[start + offset] ?? undefined;
          if (kind === "user" && platformId && desired.state === "present") ctx.ownedUsers += 1;
          if (
            desired.state === "present" &&
            platformId &&
            (recent[start + offset] || mayDeprovision(ctx, kind, desired.resource) || ctx.takeReread()) &&
            (await classifyLanded(ctx, ref, platformId))
          )
            return;
          const result = classifyUnseen({ desired, platformId });
          // Inactive at the source and not on the platform, never synced or gone behind the
          // bridge's back: the repair's create may adopt an active platform user of that userName
          // and deactivate it.
          if (kind === "user" && desired.state === "present") {
            const user = desired.resource as { active?: unknown; userName?: unknown };
            if (user.active === false && typeof user.userName === "string")
              inactiveUnknown.push(user.userName);
          }
          ctx.record(result, { kind, id, ...(platformId ? { platformId } : {}) }, refKey(ref));
        }),
      );
    }
    await countAdoptedDeactivations(ctx, inactiveUnknown);
    await ctx.flush();
  }
}

/**
 * Whether the repair of an unseen entity not read again (deletedBehind: a resync, which reads the
 * platform and applies what differs) could deprovision someone the deprovisioning guard never
 * counted (invariant 8), when the entity is there after all (a listing that skipped it): a user the
 * source wants inactive and that is active there is deactivated; an embed group's members are
 * neither counted as kept nor as taken out (an embed user left in no group of its tenant). Such
 * entities are always read again, whatever the cap, and classified as listed.
 */
function mayDeprovision(ctx: RunContext, kind: EntityKind, resource: unknown): boolean {
  if (kind === "group") return !ctx.isWorkspace;
  return (resource as { active?: unknown } | undefined)?.active === false;
}

/** How far another process's clock may lag behind this one's (sync times against the run's start). */
const CLOCK_SKEW_MS = 60_000;

/**
 * Which of the unseen entities (those with a platform id) a sync recorded after the run started,
 * or has recorded no finished sync for yet (one creating it right now records its platform id
 * first): those may have landed on the platform after the listing passed their page.
 */
async function syncedDuringRun(
  ctx: RunContext,
  kind: EntityKind,
  ids: readonly string[],
  platformIds: ReadonlyArray<string | null | undefined>,
): Promise<boolean[]> {
  const lastSyncedAt = ctx.deps.state.lastSyncedAt?.bind(ctx.deps.state);
  const withId = ids.flatMap((id, index) => (platformIds[index] ? [{ id, index }] : []));
  const recent = ids.map(() => true);
  if (!lastSyncedAt || withId.length === 0) return recent;
  const since = Date.parse(ctx.run.startedAt ?? "") - CLOCK_SKEW_MS;
  const at = await lastSyncedAt(withId.map(({ id }) => ({ source: ctx.run.source, kind, id })));
  withId.forEach(({ index }, i) => {
    const synced = at[i];
    recent[index] = synced === null || synced === undefined || !(synced < since);
  });
  return recent;
}

/** Unseen entities looked at together (each costs a platform read when it has a platform id). */
const LOOKS_AT_ONCE = 100;

/**
 * An unseen entity's platform object read once more: when it is there after all (created or
 * adopted by a sync after the listing had passed its page, or skipped by a listing that shifted
 * under deletions), it is classified as the listing would have classified it, and true is
 * answered. An embed group found has its members read as the listing's do: those it keeps count as
 * kept by the deprovisioning guard (a member the run takes out of another group is not deprovisioned).
 */
async function classifyLanded(ctx: RunContext, ref: EntityRef, platformId: string): Promise<boolean> {
  const { platform, state } = ctx.deps;
  // Only an object this entity owns (as the listing's classification requires).
  const owned = async (scope: "user" | "group") =>
    (await state.ownersOf(scope, [platformId]))[0] === refKey(ref);
  if (ref.kind === "user") {
    const user = await platform.getUser(platformId);
    if (!user || !(await owned("user"))) return false;
    await classifyOwnedUsers(ctx, [{ user, ref }]);
    return true;
  }
  if (ctx.isWorkspace) {
    const group = await platform.getGroup(platformId);
    if (!group || !(await owned("group"))) return false;
    await classifyOwnedWorkspaceGroup(ctx, group, ref);
    return true;
  }
  const tenant = (await state.getApplied<AppliedEmbedGroup>(ref))?.tenant;
  if (!tenant) return false;
  let group: EmbedGroup | null;
  try {
    group = await platform.getEmbedGroup(tenant, platformId);
  } catch (err) {
    // A tenant gone with its groups (see unlessGone in scan-platform-groups.ts).
    if (isPlatformFailure(err, "not_found")) return false;
    throw err;
  }
  if (!group || (await state.ownersOf("embed", [embedKey(tenant, platformId)]))[0] !== refKey(ref))
    return false;
  await classifyOwnedEmbedGroup(ctx, tenant, group, ref);
  return true;
}

/**
 * Users inactive at the source that are not on the platform (no platform id: never synced, or the
 * sync state was lost; or their platform user gone behind the bridge's back, and maybe created
 * again there): their sync creates them, meets a 409 from an unowned active platform user of that userName,
 * adopts it and deactivates it (sync-user.ts). Each is a planned deprovisioning (invariant 8),
 * unless orphans are deactivated anyway (then the orphan count has it already).
 */
async function countAdoptedDeactivations(ctx: RunContext, userNames: string[]): Promise<void> {
  if (userNames.length === 0 || !ctx.isWorkspace) return;
  if (ctx.deps.config.reconcile.orphans === "deactivate") return;
  const found = await ctx.deps.redis.smismember(ctx.keys.adoptable, ...userNames.map(caseFold));
  ctx.report.plannedDeprovisions += found.filter((hit) => hit === 1).length;
}
