import type { AppliedEmbedGroup, AppliedEmbedMember } from "../mapping/plan-types.js";
import type { EmbedUserInput } from "../platform/platform-types.js";
import type { MemberWrites } from "./group-refusals.js";
import type { SyncContext } from "./sync-context.js";

/**
 * An embed group's members as the platform knows them: embed users identified by externalId (the
 * user's SCIM externalId, or its userName when it has none), added and removed in chunks, and the
 * group's record once a chunk landed.
 */

/**
 * The embed users that should be the group's members, from what is recorded of its members' users
 * (`infos`, null for a user not synced yet): its active members, with their email and displayName.
 * A deactivated user leaves every group of the tenant.
 */
export function desiredEmbedMembers(infos: ReadonlyArray<AppliedEmbedMember | null>): EmbedUserInput[] {
  const members: EmbedUserInput[] = [];
  for (const info of infos) {
    if (!info?.active) continue;
    members.push({
      externalId: info.externalId,
      ...(info.email ? { email: info.email } : {}),
      ...(info.displayName ? { displayName: info.displayName } : {}),
    });
  }
  return members;
}

/** How an embed group's member chunk (externalIds) is added or removed, and recorded once it landed. */
export function embedMemberWrites(
  ctx: SyncContext,
  tenant: string,
  platformId: string,
  desiredMembers: readonly EmbedUserInput[],
): { add: MemberWrites<AppliedEmbedGroup>; remove: MemberWrites<AppliedEmbedGroup> } {
  const byExternalId = new Map(desiredMembers.map((u) => [u.externalId, u]));
  return {
    add: {
      send: (ids) =>
        ctx.platform.addEmbedGroupMembers(
          tenant,
          platformId,
          ids.map((externalId) => byExternalId.get(externalId) ?? { externalId }),
        ),
      landed: (group, ids) => {
        const sent = new Set(ids);
        return {
          ...group,
          members: [...new Set([...group.members, ...ids])],
          profiles: [
            ...(group.profiles ?? []).filter((p) => !sent.has(p.externalId)),
            ...ids.map((externalId) => byExternalId.get(externalId) ?? { externalId }),
          ],
        };
      },
    },
    remove: {
      send: (ids) => ctx.platform.removeEmbedGroupMembers(tenant, platformId, ids),
      landed: (group, ids) => {
        const gone = new Set(ids);
        return {
          ...group,
          members: group.members.filter((id) => !gone.has(id)),
          ...(group.profiles ? { profiles: group.profiles.filter((p) => !gone.has(p.externalId)) } : {}),
        };
      },
    },
  };
}
