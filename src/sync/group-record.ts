import { addedMemberIds, removedMemberIds } from "../mapping/plan-group.js";
import type { AppliedGroup } from "../mapping/plan-types.js";
import type { PlatformScimGroup } from "../platform/platform-types.js";
import type { PatchOperation } from "../scim/scim-types.js";

/**
 * A workspace group's record (AppliedGroup) as the platform answers it, and as a PATCH the sync
 * sent changes it (sync-group.ts, group-refusals.ts).
 */

export function memberValues(group: PlatformScimGroup): string[] {
  const members = group["members"];
  if (!Array.isArray(members)) return [];
  return members.flatMap((m) =>
    m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string" ? [m["value"]] : [],
  );
}

export function fromPlatformGroup(group: PlatformScimGroup): AppliedGroup {
  return { platformId: group.id, displayName: group.displayName, members: memberValues(group) };
}

/**
 * Applies a PATCH's ops to the recorded group, one operation after the other: its member adds and
 * removals (as planGroup writes them: addedMemberIds, removedMemberIds) and a rename.
 */
export function applyOps(applied: AppliedGroup, operations: PatchOperation[]): AppliedGroup {
  const members = new Set(applied.members);
  let displayName = applied.displayName;
  for (const op of operations) {
    if (op.path === "displayName" && typeof op.value === "string") displayName = op.value;
    for (const id of addedMemberIds([op])) members.add(id);
    for (const id of removedMemberIds([op])) members.delete(id);
  }
  return { ...applied, displayName, members: [...members] };
}
