import type { AppliedEmbedGroup, AppliedEmbedMember } from "../../src/mapping/plan-types.js";
import { resolveEmbedTenant } from "../../src/mapping/plan-embed-group.js";
import { platformGroupName } from "../../src/mapping/plan-group.js";
import type { GroupRecord } from "../../src/directory/directory-types.js";
import { classifyPlatformGroup } from "../../src/reconcile/classify-group.js";
import { type EntityRef, refKey } from "../../src/scim/scim-types.js";
import type { EmbedGroup, PlatformScimGroup } from "../../src/platform/platform-types.js";
import { isPlatformFailure } from "../../src/sync/sync-error.js";
import { embedKey } from "../../src/sync/sync-keys.js";
import { redisDirtyReader } from "./deprovision-under-way.js";
import { type RunContext, batches, readAhead } from "./run-context.js";
import { desiredOf, ownerOf } from "./scan-platform-users.js";

async function expectedWorkspaceMembers(ctx: RunContext, record: GroupRecord | null): Promise<string[]> {
  const ids = (record?.members ?? []).map((member) => member.value);
  const pids = await ctx.deps.state.getUserPlatformIds(ctx.run.source, ids);
  return pids.filter((pid): pid is string => typeof pid === "string");
}

async function expectedEmbedMembers(ctx: RunContext, record: GroupRecord | null): Promise<string[]> {
  const ids = (record?.members ?? []).map((member) => member.value);
  const infos = await ctx.deps.state.getEmbedMembers(ctx.run.source, ids);
  // A deactivated user leaves every group of the tenant (ARCHITECTURE.md, embed-tenant sources).
  return infos
    .filter((info): info is AppliedEmbedMember => info?.active === true)
    .map((info) => info.externalId);
}

/**
 * Workspace sources: streams the platform's groups (with members) page by page and classifies
 * the ones this source owns: name and membership, compared with the desired state mapped as the
 * planner maps it (platform user ids of the members that have one).
 */
export async function scanWorkspaceGroups(ctx: RunContext): Promise<void> {
  const { platform, state } = ctx.deps;
  const source = ctx.run.source;
  for await (const page of readAhead(batches(platform.listGroups({ pageSize: 100 }), ctx.pageSize))) {
    await ctx.stillHeld();
    const owners = await state.ownersOf(
      "group",
      page.map((group) => group.id),
    );
    const mine: Array<{ group: (typeof page)[number]; ref: EntityRef }> = [];
    page.forEach((group, index) => {
      const owner = ownerOf(owners[index], source);
      if (typeof owner === "object") mine.push({ group, ref: owner });
    });
    if (mine.length === 0) continue;
    await ctx.addToSets([{ name: "seenGroups", members: mine.map((entry) => entry.ref.id) }]);
    await Promise.all(mine.map(({ group, ref }) => classifyOwnedWorkspaceGroup(ctx, group, ref)));
    await ctx.flush();
  }
}

/**
 * Classifies one platform group this source owns (listed, or read again: scan-directory.ts): name
 * and membership against the desired state, mapped as the planner maps it.
 */
export async function classifyOwnedWorkspaceGroup(
  ctx: RunContext,
  group: PlatformScimGroup,
  ref: EntityRef,
): Promise<void> {
  const snapshot = await ctx.deps.directory.snapshotGroup(ctx.run.source, ref.id);
  const record = snapshot?.desired ?? null;
  const actual = Array.isArray(group.members)
    ? group.members.flatMap((member) =>
        member && typeof member === "object" && !Array.isArray(member) && typeof member.value === "string"
          ? [member.value]
          : [],
      )
    : [];
  const result = classifyPlatformGroup({
    owner: "this",
    desired: desiredOf(snapshot),
    platformName: group.displayName,
    expectedName: record ? platformGroupName(ctx.source.groupPrefix, record.resource.displayName) : undefined,
    expectedMembers: record ? await expectedWorkspaceMembers(ctx, record) : undefined,
    actualMembers: actual,
  });
  ctx.record(result, { kind: "group", id: ref.id, platformId: group.id }, refKey(ref));
}

/** The tenants an embed-tenant source can own groups in. */
async function* tenantsOf(ctx: RunContext): AsyncIterable<string> {
  const target = ctx.source.target;
  if (target === "workspace") return;
  if ("embedTenant" in target) {
    yield target.embedTenant;
    return;
  }
  for await (const tenant of ctx.deps.platform.listEmbedTenants()) yield tenant.name;
}

/**
 * The items of a platform list whose owner (a tenant, an embed group) may be gone: a tenant comes
 * into being with its first group and goes with a delete, and the contract gives no answer for the
 * lists of a missing one (the emulator answers 404, another platform may answer an empty list).
 * Gone lists as empty.
 */
async function* unlessGone<T>(items: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* items;
  } catch (err) {
    if (!isPlatformFailure(err, "not_found")) throw err;
  }
}

/**
 * Embed-tenant sources: streams each tenant's embed groups and classifies the owned ones: name,
 * tenant, and members (embed users by externalId: the source's active members).
 */
export async function scanEmbedGroups(ctx: RunContext): Promise<void> {
  const { platform, state } = ctx.deps;
  const source = ctx.run.source;
  if (ctx.source.target === "workspace") return;
  for await (const tenant of tenantsOf(ctx)) {
    for await (const page of readAhead(batches(unlessGone(platform.listEmbedGroups(tenant)), ctx.pageSize))) {
      await ctx.stillHeld();
      const owners = await state.ownersOf(
        "embed",
        page.map((group) => embedKey(tenant, group.id)),
      );
      const mine: Array<{ group: (typeof page)[number]; ref: EntityRef }> = [];
      page.forEach((group, index) => {
        const owner = ownerOf(owners[index], source);
        if (typeof owner === "object") mine.push({ group, ref: owner });
      });
      if (mine.length === 0) continue;
      await ctx.addToSets([{ name: "seenGroups", members: mine.map((entry) => entry.ref.id) }]);
      for (const { group, ref } of mine) await classifyOwnedEmbedGroup(ctx, tenant, group, ref);
      await ctx.flush();
    }
  }
}

/**
 * Classifies one embed group of `tenant` this source owns (listed, or read again:
 * scan-directory.ts): name, tenant and members against the desired state, and records for the
 * deprovisioning guard what its repair does to its members (recordEmbedMembership).
 */
export async function classifyOwnedEmbedGroup(
  ctx: RunContext,
  tenant: string,
  group: EmbedGroup,
  ref: EntityRef,
): Promise<void> {
  if (ctx.source.target === "workspace") return;
  const { read, snapshot } = await readOwnedEmbedGroup(ctx, tenant, group.id, ref);
  const { actual, expected, wantTenant } = read;
  const record = snapshot?.desired ?? null;
  await recordEmbedMembership(ctx, read);
  const result = classifyPlatformGroup({
    owner: "this",
    desired: desiredOf(snapshot),
    platformName: group.name,
    // A group whose tenant changed at the source counts as changed (the sync moves it).
    expectedName: record
      ? wantTenant === tenant
        ? platformGroupName(ctx.source.groupPrefix, record.resource.displayName)
        : `(in tenant ${wantTenant ?? "none"})`
      : undefined,
    expectedMembers: expected,
    actualMembers: record ? actual : undefined,
  });
  ctx.record(result, { kind: "group", id: ref.id, platformId: group.id }, refKey(ref));
}

/**
 * The members a group's pending sync takes out of it by itself: with the group dirty (a change of
 * the identity provider, such as a member turned off, not applied yet), those its sync last put in
 * it, in this tenant. Its sync compares the desired members with those, so any of them not wanted
 * any more leaves whatever the run does; the guard does not count them (deprovision-under-way.ts).
 * A member put in behind the bridge's back is not among them: taking it out is the run's own.
 */
async function removalsUnderWay(
  ctx: RunContext,
  ref: EntityRef,
  tenant: string,
): Promise<ReadonlySet<string>> {
  const [dirty] = await redisDirtyReader(ctx.deps.redis, ctx.deps.config.redis.prefix)([refKey(ref)]);
  if (!dirty) return new Set();
  const applied = await ctx.deps.state.getApplied<AppliedEmbedGroup>(ref);
  return new Set(applied?.tenant === tenant ? applied.members : []);
}

/** A tenant's embed user, as the guard's sets hold it (tenant names have no "/"). */
function embedUserKey(tenant: string, externalId: string): string {
  return `${tenant}/${externalId}`;
}

/** One owned embed group as the guard reads it: its members now, and what its desired state wants. */
interface EmbedGroupRead {
  tenant: string;
  actual: string[];
  desired: "present" | "tombstone" | "unknown";
  wantTenant: string | null;
  expected: string[] | undefined;
  /** Members the group's own pending sync takes out anyway (removalsUnderWay): not the run's. */
  underWay?: ReadonlySet<string>;
}

/**
 * What the repair of one owned embed group does to its members: those it leaves in it or puts in
 * it (`kept`), and those it takes out (`removed`: members not expected, and every member of a group
 * deleted at the source or moved to another tenant, but not those its own pending sync takes out).
 * A group unknown to the directory is not repaired: its members stay. Pure.
 */
function embedRepairSets(group: EmbedGroupRead): { kept: string[]; removed: string[] } {
  const { tenant, actual } = group;
  const kept: string[] = [];
  const removed: string[] = [];
  const remove = (id: string) => {
    if (!group.underWay?.has(id)) removed.push(embedUserKey(tenant, id));
  };
  if (group.desired === "unknown") {
    kept.push(...actual.map((id) => embedUserKey(tenant, id)));
  } else if (group.desired === "tombstone" || group.expected === undefined) {
    actual.forEach(remove);
  } else {
    const wantTenant = group.wantTenant ?? tenant;
    const expected = new Set(group.expected);
    kept.push(...group.expected.map((id) => embedUserKey(wantTenant, id)));
    for (const id of actual) {
      if (wantTenant !== tenant || !expected.has(id)) remove(id);
    }
  }
  return { kept, removed };
}

/**
 * Reads one owned embed group (`group`: its platform id in `tenant`) as the guard counts it: its
 * members on the platform now, its desired state, the members its sync records as active, and the
 * removals its own pending sync makes.
 */
async function readOwnedEmbedGroup(
  ctx: RunContext,
  tenant: string,
  groupId: string,
  ref: EntityRef,
): Promise<{
  read: EmbedGroupRead;
  snapshot: Awaited<ReturnType<RunContext["deps"]["directory"]["snapshotGroup"]>>;
}> {
  const target = ctx.source.target;
  const snapshot = await ctx.deps.directory.snapshotGroup(ctx.run.source, ref.id);
  const record = snapshot?.desired ?? null;
  const wantTenant =
    record && target !== "workspace" ? resolveEmbedTenant(target, record.resource.displayName) : null;
  const actual: string[] = [];
  for await (const member of unlessGone(ctx.deps.platform.listEmbedGroupMembers(tenant, groupId)))
    actual.push(member.externalId);
  const expected = record ? await expectedEmbedMembers(ctx, record) : undefined;
  const read: EmbedGroupRead = {
    tenant,
    actual,
    desired: desiredOf(snapshot).state,
    wantTenant,
    expected,
    underWay: await removalsUnderWay(ctx, ref, tenant),
  };
  return { read, snapshot };
}

/**
 * The embed users the repair of one owned embed group would take out of it now, read as the scan
 * reads it (a confirmation checks them against those the held run showed: reconcile-runner.ts).
 * None for a group with no platform group recorded.
 */
export async function embedRemovalsNow(ctx: RunContext, ref: EntityRef): Promise<string[]> {
  if (ctx.source.target === "workspace") return [];
  const applied = await ctx.deps.state.getApplied<AppliedEmbedGroup>(ref);
  if (!applied?.tenant || !applied.platformId) return [];
  const { read } = await readOwnedEmbedGroup(ctx, applied.tenant, applied.platformId, ref);
  return embedRepairSets(read).removed;
}

/**
 * Records, for the deprovisioning guard, what the repairs of one owned embed group do to its
 * members (embedRepairSets): the embed users in it now (`embedMembers`), those the repair leaves in
 * it or puts in it (`embedKept`), and those it takes out (`embedRemoved`, and `embedShown`, kept
 * while the run is held: a confirmation takes out of a group no embed user but these).
 */
async function recordEmbedMembership(ctx: RunContext, group: EmbedGroupRead): Promise<void> {
  const { kept, removed } = embedRepairSets(group);
  await ctx.addToSets([
    { name: "embedMembers", members: group.actual.map((id) => embedUserKey(group.tenant, id)) },
    { name: "embedKept", members: kept },
    { name: "embedRemoved", members: removed },
    { name: "embedShown", members: removed },
  ]);
}

/**
 * Invariant 8 for an embed-tenant source, whose users are embed users: an embed user its repairs
 * would take out of every group of the tenant that the source owns (a deactivation, as a
 * deactivated user leaves them all) is one planned deprovisioning, and the users the source owns
 * are the users the sync recorded as its embed users, active or not (as a workspace source owns
 * its inactive platform users too). Counted after both group passes, so that a
 * user taken out of one group but left in (or put in) another is not counted. Adds to the run's
 * counts; workspace orphans it would deactivate (orphans: deactivate) still hold the run.
 */
export async function countEmbedDeprovisions(ctx: RunContext): Promise<void> {
  // One script: the scratch set never outlives it, and a process no longer holding the run's job
  // neither counts nor drops the sets of the one that does.
  const [{ planned, onPlatform }, synced] = await Promise.all([
    ctx.countEmbedRemovals(),
    ctx.deps.state.countEmbedUsers?.(ctx.run.source),
  ]);
  // What scanPlatformUsers planned for an embed-tenant source is workspace orphans: the source owns
  // no workspace user, so their deactivation is held whatever its embed users (as before: share 1).
  const orphanDeactivations = ctx.report.plannedDeprovisions;
  ctx.report.plannedDeprovisions += planned;
  if (orphanDeactivations === 0) ctx.ownedUsers += synced ?? onPlatform;
}
