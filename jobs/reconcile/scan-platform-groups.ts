import type { AppliedEmbedMember } from "../../src/mapping/plan-types.js";
import { resolveEmbedTenant } from "../../src/mapping/plan-embed-group.js";
import { platformGroupName } from "../../src/mapping/plan-group.js";
import type { GroupRecord } from "../../src/directory/directory-types.js";
import { classifyPlatformGroup } from "../../src/reconcile/classify-group.js";
import { type EntityRef, refKey } from "../../src/scim/scim-types.js";
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
  const { platform, state, directory, redis } = ctx.deps;
  const source = ctx.run.source;
  for await (const page of readAhead(batches(platform.listGroups({ pageSize: 100 }), ctx.pageSize))) {
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
    await redis.sadd(ctx.keys.seenGroups, ...mine.map((entry) => entry.ref.id));
    await Promise.all(
      mine.map(async ({ group, ref }) => {
        const snapshot = await directory.snapshotGroup(source, ref.id);
        const record = snapshot?.desired ?? null;
        const actual = Array.isArray(group.members)
          ? group.members.flatMap((member) =>
              member &&
              typeof member === "object" &&
              !Array.isArray(member) &&
              typeof member.value === "string"
                ? [member.value]
                : [],
            )
          : [];
        const result = classifyPlatformGroup({
          owner: "this",
          desired: desiredOf(snapshot),
          platformName: group.displayName,
          expectedName: record
            ? platformGroupName(ctx.source.groupPrefix, record.resource.displayName)
            : undefined,
          expectedMembers: record ? await expectedWorkspaceMembers(ctx, record) : undefined,
          actualMembers: actual,
        });
        ctx.record(result, { kind: "group", id: ref.id, platformId: group.id }, refKey(ref));
      }),
    );
    await ctx.flush();
  }
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
 * Embed-tenant sources: streams each tenant's embed groups and classifies the owned ones: name,
 * tenant, and members (embed users by externalId: the source's active members).
 */
export async function scanEmbedGroups(ctx: RunContext): Promise<void> {
  const { platform, state, directory, redis } = ctx.deps;
  const source = ctx.run.source;
  const target = ctx.source.target;
  if (target === "workspace") return;
  for await (const tenant of tenantsOf(ctx)) {
    for await (const page of readAhead(batches(platform.listEmbedGroups(tenant), ctx.pageSize))) {
      const owners = await state.ownersOf(
        "embed",
        page.map((group) => `${tenant}/${group.id}`),
      );
      const mine: Array<{ group: (typeof page)[number]; ref: EntityRef }> = [];
      page.forEach((group, index) => {
        const owner = ownerOf(owners[index], source);
        if (typeof owner === "object") mine.push({ group, ref: owner });
      });
      if (mine.length === 0) continue;
      await redis.sadd(ctx.keys.seenGroups, ...mine.map((entry) => entry.ref.id));
      for (const { group, ref } of mine) {
        const snapshot = await directory.snapshotGroup(source, ref.id);
        const record = snapshot?.desired ?? null;
        const wantTenant = record ? resolveEmbedTenant(target, record.resource.displayName) : null;
        const actual: string[] = [];
        if (record)
          for await (const member of platform.listEmbedGroupMembers(tenant, group.id))
            actual.push(member.externalId);
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
          expectedMembers: record ? await expectedEmbedMembers(ctx, record) : undefined,
          actualMembers: record ? actual : undefined,
        });
        ctx.record(result, { kind: "group", id: ref.id, platformId: group.id }, refKey(ref));
      }
      await ctx.flush();
    }
  }
}
