import type { AppliedGroup, AppliedEmbedGroup } from "../../src/mapping/plan-types.js";
import { classifyUnseen } from "../../src/reconcile/classify-user.js";
import type { EntityKind } from "../../src/scim/scim-types.js";
import { caseFold } from "../../src/scim/case-fold.js";
import { refKey } from "../../src/scim/scim-types.js";
import type { RunContext } from "./run-context.js";
import { desiredOf } from "./scan-platform-users.js";

/**
 * Streams the directory's ids of one kind and finds those the platform listing did not contain
 * (SMISMEMBER against the run's seen set): never synced (missing) or owned but gone
 * (deletedBehind). Users are only compared for workspace sources: an embed-tenant source's users
 * are embed users, reached through its groups.
 */
export async function scanDirectory(ctx: RunContext, kind: EntityKind): Promise<void> {
  const { directory, redis, state } = ctx.deps;
  const source = ctx.run.source;
  const seenKey = kind === "user" ? ctx.keys.seenUsers : ctx.keys.seenGroups;
  // Ids only: pages of 1000 (one SMISMEMBER each); unseen ones are rare and read individually.
  for await (const ids of directory.scanIds(source, kind, 1000)) {
    if (ids.length === 0) continue;
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
    const inactiveUnknown: string[] = [];
    await Promise.all(
      unseen.map(async (id, index) => {
        const desired =
          kind === "user"
            ? desiredOf(await directory.snapshotUser(source, id))
            : desiredOf(await directory.snapshotGroup(source, id));
        const platformId = platformIds[index] ?? undefined;
        const result = classifyUnseen({ desired, platformId });
        if (kind === "user" && platformId && desired.state === "present") ctx.ownedUsers += 1;
        if (kind === "user" && !platformId && desired.state === "present") {
          const user = desired.resource as { active?: unknown; userName?: unknown };
          if (user.active === false && typeof user.userName === "string") inactiveUnknown.push(user.userName);
        }
        ctx.record(result, { kind, id, ...(platformId ? { platformId } : {}) }, refKey({ source, kind, id }));
      }),
    );
    await countAdoptedDeactivations(ctx, inactiveUnknown);
    await ctx.flush();
  }
}

/**
 * Users inactive at the source that have no platform id (never synced, or the sync state was lost):
 * their sync creates them, meets a 409 from an unowned active platform user of that userName,
 * adopts it and deactivates it (sync-user.ts). Each is a planned deprovisioning (invariant 8),
 * unless orphans are deactivated anyway (then the orphan count has it already).
 */
async function countAdoptedDeactivations(ctx: RunContext, userNames: string[]): Promise<void> {
  if (userNames.length === 0 || !ctx.isWorkspace) return;
  if (ctx.deps.config.reconcile.orphans === "deactivate") return;
  const found = await ctx.deps.redis.smismember(ctx.keys.adoptable, ...userNames.map(caseFold));
  ctx.report.plannedDeprovisions += found.filter((hit) => hit === 1).length;
}
