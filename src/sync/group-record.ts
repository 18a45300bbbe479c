import type { AppliedGroup } from "../mapping/plan-types.js";
import type { PlatformScimGroup } from "../platform/platform-types.js";
import type { Json, PatchOperation } from "../scim/scim-types.js";

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

/** Applies a PATCH's member ops to the recorded member list. */
export function applyOps(applied: AppliedGroup, operations: PatchOperation[]): AppliedGroup {
  const members = new Set(applied.members);
  let displayName = applied.displayName;
  for (const op of operations) {
    if (op.path === "displayName" && typeof op.value === "string") displayName = op.value;
    else if (op.op === "add" && op.path === "members" && Array.isArray(op.value)) {
      for (const m of op.value as Json[]) {
        if (m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string")
          members.add(m["value"]);
      }
    } else if (op.op === "remove" && op.path?.startsWith("members[")) {
      const id = /value eq "(.*)"\]$/.exec(op.path)?.[1];
      if (id !== undefined) members.delete(JSON.parse(`"${id}"`) as string);
    }
  }
  return { ...applied, displayName, members: [...members] };
}
