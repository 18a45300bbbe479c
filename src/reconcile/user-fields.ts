import { diffUserProfile, toUserProfile } from "../mapping/user-profile.js";
import type { JsonObject } from "../scim/scim-types.js";

/**
 * Names of the profile attributes whose platform value differs from the desired one, decided the
 * way the planner decides a resync (the same profile mapping and diff: src/mapping/user-profile).
 * `manager` is left out: it names a bridge id on one side and a platform id on the other.
 */
export function diffUserFields(desired: JsonObject, platform: JsonObject): string[] {
  const want = toUserProfile(desired);
  const have = toUserProfile(platform);
  delete want.manager;
  delete have.manager;
  return diffUserProfile(have, want).map((op) => op.path ?? "");
}
