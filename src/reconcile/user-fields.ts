import {
  type ManagerLookup,
  diffUserProfile,
  profileAsSynced,
  toUserProfile,
} from "../mapping/user-profile.js";
import type { JsonObject } from "../scim/scim-types.js";

/**
 * Names of the profile attributes whose platform value differs from the desired one, decided the
 * way the planner decides a resync (the same profile mapping and diff: src/mapping/user-profile).
 *
 * `manager`: what the caller looked up about the desired manager, as the sync looks it up
 * (sync-user.ts): the manager is then compared as the sync sends it (RFC 7643 §4.3: the manager's
 * platform id; left out while it has none, a dead letter included, so that no repair is asked for
 * that the sync would not make; the platform id last translated to for a value no longer a user of
 * the source (ManagerLookup `kept`); any other value as it is). Without it (`options` left out) the
 * manager is not compared: it names a bridge id on one side and a platform id on the other.
 */
export function diffUserFields(
  desired: JsonObject,
  platform: JsonObject,
  options?: { manager: ManagerLookup | undefined },
): string[] {
  const want = options ? profileAsSynced(desired, options.manager) : toUserProfile(desired);
  const have = toUserProfile(platform);
  if (!options) {
    delete want.manager;
    delete have.manager;
  }
  return diffUserProfile(have, want).map((op) => op.path ?? "");
}
