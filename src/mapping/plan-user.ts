import type { SourceConfig } from "../config/config-schema.js";
import type { BulkUserAction } from "../platform/platform-types.js";
import { caseFold } from "../scim/case-fold.js";
import type { ScimUser } from "../scim/scim-types.js";
import { desiredAttributeValues } from "./attribute-values.js";
import { sameAttributeValue } from "./coerce-attribute-value.js";
import type { AppliedUser, LifecycleState, Plan, UserPlan, UserStep } from "./plan-types.js";
import {
  type ManagerLookup,
  type ManagerTranslation,
  diffUserProfile,
  managerTranslationOf,
  profileAsSynced,
  resolveManager,
  toPlatformUserBody,
  type UserProfile,
} from "./user-profile.js";

export interface UserPlanInput {
  /** null = deleted at the source (tombstone). */
  desired: ScimUser | null;
  applied: AppliedUser | null;
  source: Pick<SourceConfig, "onDelete" | "attributes">;
  /**
   * What the executor looked up about the desired user's enterprise manager.value (a user of
   * this source, and its platform id). Without it the value is forwarded as it is.
   */
  manager?: ManagerLookup;
}

function lifecycleAction(from: LifecycleState | undefined, to: LifecycleState): BulkUserAction | null {
  if (from === to) return null;
  if (to === "deleted") return "DELETE";
  if (from === "deleted") return null; // a deleted platform user cannot come back by lifecycle
  return to === "active" ? "ACTIVATE" : "DEACTIVATE";
}

/**
 * Plans the sync of one user of a workspace source: create (adopt on conflict), PATCH of what
 * changed, attribute values, and lifecycle through the bulk endpoint. A converged user plans
 * nothing. When the plan starts with a create or a lost-user lookup, the executor runs that step
 * and plans again with what it learnt.
 *
 * The manager is translated to the platform's id (RFC 7643 §4.3) in the profile and in attribute
 * values alike; one that has no platform id yet is left out and the plan says so
 * (`waitingForManager`).
 */
export function planUser(input: UserPlanInput): UserPlan {
  const { desired, applied, source } = input;
  if (desired === null) return planDeletedUser(applied, source.onDelete);

  const manager = resolveManager(desired, input.manager);
  const profile = profileAsSynced(desired, input.manager);
  const plan = planPresentUser(desired, applied, source, profile, manager);
  const translation = managerTranslationOf(desired, input.manager);
  return {
    ...plan,
    profile,
    ...(manager?.waitingFor ? { waitingForManager: manager.waitingFor } : {}),
    ...(translation ? { managerTranslation: translation } : {}),
  };
}

/**
 * The applied record with the manager translation its profile now holds (the plan's, once the
 * plan's profile is applied or found applied): the same object when nothing changes. Pure.
 */
export function withManagerTranslation(
  applied: AppliedUser,
  translation: ManagerTranslation | undefined,
): AppliedUser {
  const had = applied.managerTranslation;
  if (had?.from === translation?.from && had?.to === translation?.to) return applied;
  const { managerTranslation: _old, ...rest } = applied;
  return translation ? { ...rest, managerTranslation: translation } : rest;
}

function planPresentUser(
  desired: ScimUser,
  applied: AppliedUser | null,
  source: UserPlanInput["source"],
  profile: UserProfile,
  manager: { value: string | undefined } | undefined,
): Plan<UserStep> {
  if (!applied?.platformId) {
    if (applied?.pendingUserName && caseFold(applied.pendingUserName) !== caseFold(profile.userName)) {
      // A create under the old userName may have landed (its answer lost): find it before
      // creating under the new one, or the old one stays on the platform as an orphan.
      return { steps: [{ type: "findLostUser", userName: applied.pendingUserName }], problems: [] };
    }
    return {
      steps: [
        { type: "createUser", body: toPlatformUserBody(profile, desired.active), userName: profile.userName },
      ],
      problems: [],
    };
  }
  if (applied.lifecycle === "deleted") {
    // The platform user is gone (deleted behind us, or by policy): create it again.
    return {
      steps: [
        { type: "createUser", body: toPlatformUserBody(profile, desired.active), userName: profile.userName },
      ],
      problems: [],
    };
  }

  const steps: UserStep[] = [];
  const operations = diffUserProfile(applied.profile ?? { userName: "" }, profile);
  if (operations.length > 0) steps.push({ type: "patchUser", operations });

  const { values, problems } = desiredAttributeValues(
    desired,
    source.attributes,
    manager ? { manager: { value: manager.value } } : {},
  );
  for (const [name, want] of Object.entries(values)) {
    const has = applied.attributes[name];
    if (has === undefined && want.value === null) continue;
    if (!sameAttributeValue(has, want.value)) {
      steps.push({ type: "setAttribute", name, attributeType: want.type, value: want.value });
    }
  }
  // Last: the executor queues it after the writes, whatever became of them (sync-user.ts).
  const action = lifecycleAction(applied.lifecycle, desired.active ? "active" : "inactive");
  if (action) steps.push({ type: "lifecycle", action, final: false });
  return { steps, problems };
}

function planDeletedUser(applied: AppliedUser | null, onDelete: "deactivate" | "delete"): Plan<UserStep> {
  if (!applied) return { steps: [{ type: "forget" }], problems: [] };
  if (!applied.platformId) {
    if (applied.pendingUserName) {
      return { steps: [{ type: "findLostUser", userName: applied.pendingUserName }], problems: [] };
    }
    return { steps: [{ type: "forget" }], problems: [] };
  }
  const target: LifecycleState = onDelete === "delete" ? "deleted" : "inactive";
  const action = lifecycleAction(applied.lifecycle, target);
  if (action) return { steps: [{ type: "lifecycle", action, final: true }], problems: [] };
  return { steps: [{ type: "forget" }], problems: [] };
}
