import type {
  BulkUserAction,
  EmbedUserInput,
  UserAttributeType,
  UserAttributeValueValue,
} from "../platform/platform-types.js";
import type { JsonObject, PatchOperation } from "../scim/scim-types.js";
import type { ManagerTranslation, UserProfile } from "./user-profile.js";

/** Lifecycle state of a platform user as the bridge last applied (or read) it. */
export type LifecycleState = "active" | "inactive" | "deleted";

/** What the bridge last applied to the platform for a user of a workspace source. */
export interface AppliedUser {
  platformId?: string;
  /** The userName of a create that was sent but whose answer may be lost (adopt/deprovision by it). */
  pendingUserName?: string;
  profile?: UserProfile;
  lifecycle?: LifecycleState;
  /** Platform attribute name -> value last applied (null = cleared). */
  attributes: Record<string, UserAttributeValueValue>;
  generation?: number;
  /** Set with a new platform id until the user's groups were marked dirty (crash-safe hand-off). */
  notifyGroups?: boolean;
  /**
   * Set before writes are sent, cleared once they are answered: while set, a write may have landed
   * without the bridge knowing (answer lost, crash), so the next sync reads the platform first.
   */
  inDoubt?: boolean;
  /**
   * The manager translation `profile.manager` was last brought to: the source value (a bridge id of
   * this source) and the platform id sent for it. Kept while the source value is no longer a user
   * of the source (deleted, its keys purged), so the platform keeps that id (user-profile.ts,
   * managerLookupOf). Absent in records written before it existed: the value is then forwarded.
   */
  managerTranslation?: ManagerTranslation;
}

/** What the bridge last recorded for a user of an embed-tenant source (embed users have no own sync). */
export interface AppliedEmbedMember {
  externalId: string;
  active: boolean;
  email?: string;
  displayName?: string;
  /** Set until the user's groups were marked dirty after a change (crash-safe hand-off). */
  notifyGroups?: boolean;
}

export interface AppliedGroup {
  platformId?: string;
  pendingDisplayName?: string;
  displayName?: string;
  /** Platform user ids. */
  members: string[];
  generation?: number;
  /** Writes were sent whose answers are not in yet (see AppliedUser.inDoubt). */
  inDoubt?: boolean;
}

export interface AppliedEmbedGroup {
  platformId?: string;
  tenant?: string;
  pendingName?: string;
  name?: string;
  /** Embed users' externalIds. */
  members: string[];
  /**
   * The email and displayName members' embed users were last sent with (a member add) or read
   * with (the platform's member list), by externalId. A member with none recorded (a record from
   * before they were kept) is trusted as it is; a resync reads them.
   */
  profiles?: EmbedUserInput[];
  generation?: number;
  /** A rename or member change was sent whose answer is not in yet (see AppliedUser.inDoubt). */
  inDoubt?: boolean;
}

export type UserStep =
  | { type: "createUser"; body: JsonObject; userName: string }
  /** A tombstone whose create answer may have been lost: find the platform user by userName. */
  | { type: "findLostUser"; userName: string }
  | { type: "patchUser"; operations: PatchOperation[] }
  | { type: "setAttribute"; name: string; attributeType: UserAttributeType; value: UserAttributeValueValue }
  | { type: "lifecycle"; action: BulkUserAction; final: boolean }
  /** Nothing left on the platform side to do for a deleted entity: drop its records. */
  | { type: "forget" };

export type GroupStep =
  | { type: "createGroup"; displayName: string; members: string[] }
  | { type: "findLostGroup"; displayName: string }
  | { type: "patchGroup"; operations: PatchOperation[] }
  | { type: "deleteGroup" }
  | { type: "forget" };

export type EmbedGroupStep =
  | { type: "createEmbedGroup"; tenant: string; name: string }
  | { type: "findLostEmbedGroup"; tenant: string; name: string }
  | { type: "renameEmbedGroup"; name: string }
  | { type: "addEmbedMembers"; users: EmbedUserInput[] }
  | { type: "removeEmbedMembers"; externalIds: string[] }
  | { type: "deleteEmbedGroup" }
  | { type: "forget" };

/** A problem the planner found that makes the entity impossible to sync until its input changes. */
export interface PlanProblem {
  code: string;
  message: string;
}

export interface Plan<S> {
  steps: S[];
  problems: PlanProblem[];
}

export interface UserPlan extends Plan<UserStep> {
  /**
   * The profile the plan brings the platform user to (manager translated): what the executor
   * records as applied once a patchUser step is answered. Absent for a deleted user.
   */
  profile?: UserProfile;
  /**
   * The desired manager is a user of this source without a platform id yet: it is left out of the
   * plan (profile and attribute values). The executor applies the rest, then syncs the user again
   * later (the value here is the manager's bridge id).
   */
  waitingForManager?: string;
  /**
   * The manager translation `profile` holds (absent when the manager is forwarded as it is, left
   * out, or absent): recorded with the profile (AppliedUser.managerTranslation).
   */
  managerTranslation?: ManagerTranslation;
}

/** The platform limits chunk sizes to 100 (bulk, members, embed members). */
/** An applied record once every write sent for it was answered: no longer in doubt. */
export function answered<T extends { inDoubt?: boolean }>(applied: T): T {
  const { inDoubt: _answered, ...known } = applied;
  return known as T;
}

export const CHUNK_SIZE = 100;

export function chunk<T>(items: readonly T[], size = CHUNK_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
