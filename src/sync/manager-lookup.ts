import type { DirectoryStore } from "../directory/directory-types.js";
import {
  type ManagerLookup,
  type ManagerTranslation,
  managerLookupOf,
  managerValueOf,
} from "../mapping/user-profile.js";
import type { JsonObject } from "../scim/scim-types.js";
import type { RedisSyncStateStore } from "./redis-sync-state-store.js";

/** What looking up a manager reads: the manager's platform id, and whether it is a user of the source. */
export interface ManagerLookupReads {
  state: Pick<RedisSyncStateStore, "getUserPlatformIds">;
  directory: Pick<DirectoryStore, "snapshotUser">;
}

/**
 * RFC 7643 §4.3: manager.value is the id of the manager's SCIM resource, the platform's user on the
 * platform. An identity provider sends the bridge id of a user of this source (Entra) or another
 * value (an employee number): which one, and its platform id, decide what the planner sends (the
 * sync) and what counts as drift (reconciliation), both through this one lookup. A value no longer
 * a user of this source (deleted, its keys purged) keeps the user's last translation, which
 * `lastTranslation` gives: read only then.
 */
export async function lookUpManager(
  reads: ManagerLookupReads,
  source: string,
  desired: JsonObject,
  lastTranslation: () => Promise<ManagerTranslation | undefined>,
): Promise<ManagerLookup | undefined> {
  const value = managerValueOf(desired);
  if (value === undefined) return undefined;
  const [platformId] = await reads.state.getUserPlatformIds(source, [value]);
  if (platformId) return managerLookupOf(value, { platformId }, undefined);
  const manager = await reads.directory.snapshotUser(source, value);
  if (manager?.desired) return managerLookupOf(value, { platformId: null }, undefined);
  return managerLookupOf(value, null, await lastTranslation());
}
