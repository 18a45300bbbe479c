/**
 * What an Okta user event changes in a directory user (pure). Okta's targets carry the user's id
 * (-> externalId), login (`alternateId` -> userName) and displayName; lifecycle events carry the
 * state: activate/unsuspend/reactivate -> active true, deactivate/suspend -> active false.
 */
import { cleanName, toCanonicalUser } from "../scim/canonical-resource.js";
import { SCHEMA_USER, type ScimUser } from "../scim/scim-types.js";
import { ASPECT_LIFECYCLE, ASPECT_PROFILE } from "./event-ordering.js";
import type { OktaUserTarget, UserLifecycleOp } from "./okta-event.js";

/** The independent parts of a user an operation changes (see event-ordering.ts). */
export function aspectsOf(op: UserLifecycleOp): string[] {
  switch (op) {
    case "create":
      return [ASPECT_LIFECYCLE, ASPECT_PROFILE];
    case "profile":
      return [ASPECT_PROFILE];
    default:
      return [ASPECT_LIFECYCLE];
  }
}

/** The aspect whose last change decides whether an event on an existing user is stale. */
export function decidingAspect(op: UserLifecycleOp): string {
  return op === "create" || op === "profile" ? ASPECT_PROFILE : ASPECT_LIFECYCLE;
}

/** `active` of a user first seen in an event of this kind. */
export function initialActive(op: UserLifecycleOp): boolean {
  return op !== "deactivate";
}

/**
 * A new directory user from an Okta target (login required: it becomes the userName), built by
 * the same toCanonicalUser as a SCIM POST: a login with control characters throws
 * BadRequestError (the event is rejected), surrounding whitespace is trimmed.
 */
export function newUserFromTarget(target: OktaUserTarget, active: boolean): Omit<ScimUser, "id"> | null {
  if (!target.login) return null;
  const user: Omit<ScimUser, "id"> = {
    schemas: [SCHEMA_USER],
    userName: target.login,
    externalId: target.oktaId,
    active,
  };
  if (target.displayName) user.displayName = target.displayName;
  return toCanonicalUser(user);
}

function withoutId(resource: ScimUser | Omit<ScimUser, "id">): Omit<ScimUser, "id"> {
  const { id: _id, ...rest } = resource as ScimUser;
  return rest;
}

/**
 * The next state of an existing user after an Okta event, or null when the event changes
 * nothing. Create and profile events refresh userName and displayName and set externalId when the
 * user has none (a user matched by login keeps the externalId another client gave it). The login
 * gets the userName hygiene of every intake path (cleanName: trimmed; control characters throw
 * BadRequestError), and a changed user is re-canonicalised as a SCIM PATCH is.
 */
export function nextUserResource(
  current: ScimUser | Omit<ScimUser, "id">,
  op: Exclude<UserLifecycleOp, "delete">,
  target: OktaUserTarget,
): Omit<ScimUser, "id"> | null {
  const next = withoutId(current);
  let changed = false;
  if (op === "activate" || op === "deactivate") {
    const active = op === "activate";
    if (next.active !== active) {
      next.active = active;
      changed = true;
    }
    return changed ? next : null;
  }
  const login = target.login ? cleanName(target.login, "userName") : undefined;
  if (login && next.userName !== login) {
    next.userName = login;
    changed = true;
  }
  if (target.displayName && next.displayName !== target.displayName) {
    next.displayName = target.displayName;
    changed = true;
  }
  if (next.externalId === undefined || next.externalId === null || next.externalId === "") {
    next.externalId = target.oktaId;
    changed = true;
  }
  return changed ? toCanonicalUser(next, current) : null;
}
