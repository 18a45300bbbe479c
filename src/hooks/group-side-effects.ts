import type { DirectoryStore } from "../directory/directory-types.js";
import { PreconditionFailedError } from "../errors.js";
import { advanceMarks, type EntityClock, entityClock } from "./event-ordering.js";
import type { HookStateStore } from "./hook-state-store.js";

/** A group linked to Okta (its externalId is the Okta group id) as it was before a user write. */
export interface LinkedGroup {
  groupId: string;
  oktaGroupId: string;
  clock: EntityClock;
}

/** The Okta-linked groups among `groupIds`, with their current clocks. */
export async function linkedGroups(
  directory: DirectoryStore,
  source: string,
  groupIds: string[],
): Promise<LinkedGroup[]> {
  const out: LinkedGroup[] = [];
  for (const groupId of groupIds) {
    const group = await directory.getGroup(source, groupId);
    const oktaGroupId = group?.resource.externalId;
    if (group && typeof oktaGroupId === "string" && oktaGroupId !== "") {
      out.push({ groupId, oktaGroupId, clock: entityClock(groupId, group.meta) });
    }
  }
  return out;
}

/**
 * Deleting a user takes it out of its groups, which changes those groups' versions. That write is
 * the hooks' own, not another intake path's: fold it into the groups' marks so that membership
 * events of other users in the same delivery are not taken for stale.
 */
export async function absorbGroupWrites(
  directory: DirectoryStore,
  state: HookStateStore,
  source: string,
  before: LinkedGroup[],
): Promise<void> {
  for (const { groupId, oktaGroupId, clock } of before) {
    // Marks first, then the group: a membership write by another process in between bumps the
    // marks' revision and this fold is not stored (the next event then sees a foreign write).
    for (let attempt = 0; attempt < 3; attempt++) {
      const marks = await state.getMarks(source, "group", oktaGroupId, []);
      const after = await directory.getGroup(source, groupId);
      if (!after) break;
      const next = advanceMarks(marks, clock, entityClock(groupId, after.meta).version, [], 0);
      try {
        await state.setMarksIf(source, "group", oktaGroupId, marks, next);
        break;
      } catch (err) {
        if (!(err instanceof PreconditionFailedError)) throw err;
      }
    }
  }
}
