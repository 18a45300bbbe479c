import type { EmbedUserInput } from "../platform/platform-types.js";
import { caseFold } from "../scim/case-fold.js";
import { chunk, type AppliedEmbedGroup, type EmbedGroupStep, type Plan } from "./plan-types.js";

/** `name` maxLength of the platform's embed groups (platform-api.yaml, createEmbedGroup): characters. */
export const EMBED_GROUP_NAME_MAX = 200;

/** The number of characters (Unicode code points) of `text`. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * The externalId an embed-source user is known by on the platform (docs/ARCHITECTURE.md): its SCIM
 * externalId, or its userName when it has none. A userName changed in case only is the same name
 * (RFC 7643 §4.1.1: userName is caseExact false), so the user keeps the id it is known by
 * (`recorded`): the platform keeps the person's one embed user, as a workspace user renamed in case
 * only keeps its platform user, instead of getting a second one. Pure.
 */
export function embedMemberId(
  user: { externalId?: unknown; userName?: unknown },
  recorded: string | undefined,
): string {
  if (typeof user.externalId === "string" && user.externalId) return user.externalId;
  const userName = String(user.userName ?? "");
  return recorded !== undefined && caseFold(recorded) === caseFold(userName) ? recorded : userName;
}

/**
 * Whether a present member's embed user must be sent again: the source has an email or displayName
 * for it other than the one it was last sent with (`recorded`). Nothing recorded: trusted as it is.
 * A value the source no longer has is not a difference: the contract has no way to clear one. Pure.
 */
export function embedProfileDiffers(desired: EmbedUserInput, recorded: EmbedUserInput | undefined): boolean {
  if (!recorded) return false;
  return (
    (desired.email !== undefined && desired.email !== recorded.email) ||
    (desired.displayName !== undefined && desired.displayName !== recorded.displayName)
  );
}

export type EmbedTarget = { embedTenant: string } | { embedTenantFromGroup: { pattern: string } };

/**
 * The embed tenant a group belongs to: the fixed tenant, or the first capture group of the
 * source's pattern applied to the group's displayName, lower-cased. null when it does not match.
 */
export function resolveEmbedTenant(target: EmbedTarget, displayName: string): string | null {
  if ("embedTenant" in target) return target.embedTenant;
  const m = new RegExp(target.embedTenantFromGroup.pattern).exec(displayName);
  const tenant = m?.[1]?.toLowerCase();
  if (!tenant || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(tenant)) return null;
  return tenant;
}

export interface EmbedGroupPlanInput {
  /** null when the group is deleted at the source. */
  desired: { tenant: string; name: string } | null;
  /** Embed users that should be members (active members that have an externalId). */
  desiredMembers: EmbedUserInput[];
  applied: AppliedEmbedGroup | null;
}

/**
 * Plans the sync of one group of an embed-tenant source: create/adopt by name, member diff by
 * externalId (removals, then additions), rename (last), delete. A group whose tenant changed is
 * deleted in the old tenant and created in the new one.
 */
export function planEmbedGroup(input: EmbedGroupPlanInput): Plan<EmbedGroupStep> {
  const { desired, desiredMembers, applied } = input;
  if (desired === null || (applied?.platformId && applied.tenant !== desired.tenant)) {
    if (applied?.platformId) return { steps: [{ type: "deleteEmbedGroup" }], problems: [] };
    if (applied?.pendingName && applied.tenant && desired === null) {
      return {
        steps: [{ type: "findLostEmbedGroup", tenant: applied.tenant, name: applied.pendingName }],
        problems: [],
      };
    }
    if (desired === null) return { steps: [{ type: "forget" }], problems: [] };
  }
  if (!applied?.platformId) {
    if (
      applied?.pendingName &&
      applied.tenant &&
      (applied.tenant !== desired.tenant || applied.pendingName !== desired.name)
    ) {
      // A create under the old name (or tenant) may have landed (its answer lost): find it first.
      return {
        steps: [{ type: "findLostEmbedGroup", tenant: applied.tenant, name: applied.pendingName }],
        problems: [],
      };
    }
    return {
      steps: [{ type: "createEmbedGroup", tenant: desired.tenant, name: desired.name }],
      problems: [],
    };
  }
  // Removals first, then additions, then the rename: a write the platform refuses must not hold
  // back the ones before it, and a removal (access taken away) matters most.
  const steps: EmbedGroupStep[] = [];
  const byId = new Map(desiredMembers.map((u) => [u.externalId, u]));
  const has = new Set(applied.members);
  const recorded = new Map((applied.profiles ?? []).map((p) => [p.externalId, p]));
  // A present member whose embed user holds other values is added again: the member add is the
  // contract's one write that carries an embed user's email and displayName.
  const toAdd = [...byId.values()].filter(
    (u) => !has.has(u.externalId) || embedProfileDiffers(u, recorded.get(u.externalId)),
  );
  const toRemove = applied.members.filter((id) => !byId.has(id));
  for (const externalIds of chunk(toRemove)) steps.push({ type: "removeEmbedMembers", externalIds });
  for (const users of chunk(toAdd)) steps.push({ type: "addEmbedMembers", users });
  if (applied.name !== desired.name) steps.push({ type: "renameEmbedGroup", name: desired.name });
  return { steps, problems: [] };
}
