import type { EntityRef, PatchOperation } from "../scim/scim-types.js";
import { CHUNK_SIZE, chunk, type AppliedGroup, type GroupStep, type Plan } from "./plan-types.js";

export interface GroupPlanInput {
  /** The platform group name (prefix + displayName), or null when deleted at the source. */
  desiredName: string | null;
  /** Platform user ids of the members that already have one (others are added when they land). */
  desiredMembers: string[];
  applied: AppliedGroup | null;
  /**
   * Platform user ids whose removal the platform refused for good in this sync: not removed again
   * (they stay in the group, and the refusal is the group's dead letter). Default none.
   */
  heldMembers?: ReadonlySet<string>;
}

export function platformGroupName(prefix: string, displayName: string): string {
  return `${prefix}${displayName}`;
}

/**
 * Plans the sync of one group of a workspace source. Membership changes by PATCH add/remove of
 * the difference (RFC 7644 §3.5.2.1 add, §3.5.2.2 remove with a value filter), at most 100 members
 * a call, never by replacing the whole list: removals, then additions, then a rename in its own
 * PATCH last. Deleting a group never touches its members.
 */
export function planGroup(input: GroupPlanInput): Plan<GroupStep> {
  const { desiredName, desiredMembers, applied, heldMembers } = input;
  if (desiredName === null) {
    if (applied?.platformId) return { steps: [{ type: "deleteGroup" }], problems: [] };
    if (applied?.pendingDisplayName) {
      return { steps: [{ type: "findLostGroup", displayName: applied.pendingDisplayName }], problems: [] };
    }
    return { steps: [{ type: "forget" }], problems: [] };
  }
  const want = [...new Set(desiredMembers)];
  if (!applied?.platformId) {
    if (applied?.pendingDisplayName && applied.pendingDisplayName !== desiredName) {
      // A create under the old name may have landed (its answer lost): find it first. Compared
      // exactly: the contract does not say a group's displayName is unique regardless of case, so
      // on a platform that keeps "Eng" and "eng" apart a create under the new case would leave the
      // lost one behind.
      return { steps: [{ type: "findLostGroup", displayName: applied.pendingDisplayName }], problems: [] };
    }
    return {
      steps: [{ type: "createGroup", displayName: desiredName, members: want.slice(0, CHUNK_SIZE) }],
      problems: [],
    };
  }
  const has = new Set(applied.members);
  const wantSet = new Set(want);
  const toAdd = want.filter((id) => !has.has(id));
  const toRemove = applied.members.filter((id) => !wantSet.has(id) && !heldMembers?.has(id));
  // Removals first, then additions, then the rename in a PATCH of its own: a write the platform
  // refuses (a name another source's group holds, a member it does not know) must not hold back
  // the ones before it, and a removal (access taken away) matters most.
  const calls: PatchOperation[][] = [];
  for (const ids of chunk(toRemove)) calls.push(removeMembersOperations(ids));
  for (const ids of chunk(toAdd)) calls.push(addMembersOperations(ids));
  if (applied.displayName !== desiredName) {
    calls.push([{ op: "replace", path: "displayName", value: desiredName }]);
  }
  return { steps: calls.map((operations) => ({ type: "patchGroup", operations })), problems: [] };
}

/** The PATCH operations that remove these platform user ids from a group (a value filter each). */
export function removeMembersOperations(ids: readonly string[]): PatchOperation[] {
  return ids.map((id) => ({ op: "remove", path: `members[value eq ${JSON.stringify(id)}]` }));
}

/** The PATCH operation that adds these platform user ids to a group. */
export function addMembersOperations(ids: readonly string[]): PatchOperation[] {
  return [{ op: "add", path: "members", value: ids.map((value) => ({ value })) }];
}

/** The platform user ids a group PATCH adds (`op: add, path: members`, as planGroup sends them). */
export function addedMemberIds(operations: readonly PatchOperation[]): string[] {
  return operations.flatMap((operation) => {
    if (operation.op !== "add" || operation.path !== "members" || !Array.isArray(operation.value)) return [];
    return operation.value.flatMap((m) =>
      m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string" ? [m["value"]] : [],
    );
  });
}

/** Platform user ids a PATCH removes (`members[value eq "<id>"]`, as planGroup writes them). */
export function removedMemberIds(operations: readonly PatchOperation[]): string[] {
  return operations.flatMap((operation) => {
    const m =
      operation.op === "remove"
        ? /^members\[value eq ("(?:[^"\\]|\\.)*")\]$/.exec(operation.path ?? "")
        : null;
    return m ? [JSON.parse(m[1] as string) as string] : [];
  });
}

/**
 * What becomes of an add the platform refused with 400 (the contract: "a member value that is not
 * a platform user id answers 400"), once each added member was looked up on the platform:
 * - "leaveOut": some are no platform user (deleted behind the bridge's back while their users'
 *   records still hold the id). They are left out of this round, so the others get in now, and
 *   their users are synced again (which creates them again and then re-syncs the group).
 * - "stands": every added member is a platform user: the refusal is about something else, and it
 *   stands (the job's fate decides whether it is retried).
 */
export type RefusedAddFate = { type: "leaveOut"; platformIds: string[] } | { type: "stands" };

export function refusedAddFate(
  added: readonly string[],
  isPlatformUser: (platformId: string) => boolean,
): RefusedAddFate {
  const vanished = [...new Set(added.filter((id) => !isPlatformUser(id)))];
  return vanished.length > 0 ? { type: "leaveOut", platformIds: vanished } : { type: "stands" };
}

/**
 * The directory users (of `source`) whose recorded platform id is one of `platformIds`;
 * `memberIds[i]` is recorded under `pids[i]` (null: no platform user yet).
 */
export function usersOfPlatformIds(
  source: string,
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
  platformIds: readonly string[],
): EntityRef[] {
  const wanted = new Set(platformIds);
  return memberIds.flatMap((id, i) => {
    const pid = pids[i];
    return typeof pid === "string" && wanted.has(pid) ? [{ source, kind: "user" as const, id }] : [];
  });
}
