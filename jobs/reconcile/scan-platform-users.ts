import type { SyncSnapshot } from "../../src/directory/directory-types.js";
import type { AppliedUser } from "../../src/mapping/plan-types.js";
import type { PlatformScimUser } from "../../src/platform/platform-types.js";
import { resolveManager } from "../../src/mapping/user-profile.js";
import { diffAttributeValues } from "../../src/reconcile/attribute-values.js";
import { sliceOf } from "../../src/reconcile/attribute-slices.js";
import { type DesiredState, classifyPlatformUser } from "../../src/reconcile/classify-user.js";
import { caseFold } from "../../src/scim/case-fold.js";
import { type EntityRef, parseRefKey, refKey } from "../../src/scim/scim-types.js";
import { lookUpManager } from "../../src/sync/manager-lookup.js";
import { type RunContext, batches, readAhead } from "./run-context.js";

/** What the directory says about an entity, as the classifiers take it. */
export function desiredOf<R extends { resource: unknown }>(
  snapshot: SyncSnapshot<R> | null,
): DesiredState<R["resource"]> {
  if (!snapshot) return { state: "unknown" };
  if (!snapshot.desired) return { state: "tombstone" };
  return { state: "present", resource: snapshot.desired.resource };
}

/** The owner of a platform object, from its refKey: this source's entity, another source's, or none. */
export function ownerOf(ownerKey: string | null | undefined, source: string): EntityRef | "other" | "none" {
  if (!ownerKey) return "none";
  try {
    const ref = parseRefKey(ownerKey);
    return ref.source === source ? ref : "other";
  } catch {
    return "other";
  }
}

/**
 * Streams the platform's workspace users page by page. Each page: one owner lookup, then the
 * owned users' desired state (and attribute values, when the source maps any), classified and
 * recorded; ids seen go to a Redis set so that the directory pass finds what the platform lacks.
 * Orphans are found here for every source.
 */
export async function scanPlatformUsers(ctx: RunContext): Promise<void> {
  const { platform, state } = ctx.deps;
  const source = ctx.run.source;
  const policy = { onDelete: ctx.source.onDelete, orphans: ctx.deps.config.reconcile.orphans };
  for await (const page of readAhead(batches(platform.listUsers({ pageSize: 100 }), ctx.pageSize))) {
    await ctx.stillHeld();
    const owners = await state.ownersOf(
      "user",
      page.map((user) => user.id),
    );
    const mine: Array<{ user: (typeof page)[number]; ref: EntityRef }> = [];
    const adoptable: string[] = [];
    page.forEach((user, index) => {
      const owner = ownerOf(owners[index], source);
      if (owner === "other") return;
      if (owner === "none") {
        if (user.active !== false && typeof user.userName === "string")
          adoptable.push(caseFold(user.userName));
        const result = classifyPlatformUser({
          platform: user,
          owner: "none",
          desired: { state: "unknown" },
          ...policy,
        });
        ctx.record(result, { kind: "user", platformId: user.id });
        return;
      }
      mine.push({ user, ref: owner });
    });
    if (adoptable.length > 0 && ctx.isWorkspace) {
      await ctx.addToSets([{ name: "adoptable", members: adoptable }]);
    }
    // A list that moves under the walk (newest first: each create shifts it on) answers a user
    // again on a later page: counted twice, it would dilute the guard's share (invariant 8).
    const fresh = await notSeenYet(ctx, mine);
    if (fresh.length > 0) {
      ctx.ownedUsers += fresh.length;
      await ctx.addToSets([{ name: "seenUsers", members: fresh.map((entry) => entry.ref.id) }]);
      await classifyOwnedUsers(ctx, fresh);
    }
    await ctx.flush();
  }
}

/** The owned users of a page not listed before in this run (the run's seen set), each once. */
async function notSeenYet<T extends { ref: EntityRef }>(ctx: RunContext, mine: T[]): Promise<T[]> {
  if (mine.length === 0) return mine;
  const seen = await ctx.deps.redis.smismember(ctx.keys.seenUsers, ...mine.map((entry) => entry.ref.id));
  const ids = new Set<string>();
  return mine.filter((entry, index) => {
    if (seen[index] === 1 || ids.has(entry.ref.id)) return false;
    ids.add(entry.ref.id);
    return true;
  });
}

/**
 * Classifies platform users this source owns (listed, or read again: scan-directory.ts) against
 * their desired state, attribute values included when the source maps any (this run's slice).
 */
export async function classifyOwnedUsers(
  ctx: RunContext,
  mine: ReadonlyArray<{ user: PlatformScimUser; ref: EntityRef }>,
): Promise<void> {
  const { platform, directory } = ctx.deps;
  const source = ctx.run.source;
  const policy = { onDelete: ctx.source.onDelete, orphans: ctx.deps.config.reconcile.orphans };
  const withAttributes = Object.keys(ctx.source.attributes).length > 0;
  await Promise.all(
    mine.map(async ({ user, ref }) => {
      const desired = desiredOf(await directory.snapshotUser(source, ref.id));
      const lookup =
        desired.state === "present"
          ? await lookUpManager(ctx.deps, source, desired.resource, async () => {
              // A value no longer a user of this source: the translation the platform keeps is no drift.
              return (await ctx.deps.state.getApplied<AppliedUser>(ref))?.managerTranslation;
            })
          : undefined;
      const classified = classifyPlatformUser({
        platform: user,
        owner: "this",
        desired,
        ...policy,
        manager: { lookup },
      });
      // A deprovisioning the identity provider asked for a moment ago is its sync's, not the run's.
      const result =
        classified.deprovision && (await ctx.deprovisionUnderWay(ref, user.id, desired))
          ? { ...classified, deprovision: false }
          : classified;
      const entry = { kind: "user" as const, id: ref.id, platformId: user.id };
      ctx.record(result, entry, refKey(ref));
      if (!withAttributes || desired.state !== "present") return;
      const { slice, slices } = ctx.attributeSlice;
      if (slices > 1 && sliceOf(ref.id, slices) !== slice) return;
      const values = await platform.getUserAttributeValues(user.id);
      if (!values) return;
      const manager = resolveManager(desired.resource, lookup);
      const differing = diffAttributeValues(
        desired.resource,
        ctx.source.attributes,
        values,
        manager ? { manager: { value: manager.value } } : {},
      );
      if (differing.length === 0) return;
      ctx.record(
        {
          findings: [{ cls: "attributeValues", detail: `attributes: ${differing.join(", ")}` }],
          repair: "sync",
          deprovision: false,
        },
        entry,
        refKey(ref),
      );
    }),
  );
}
