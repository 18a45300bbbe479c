/**
 * What an Okta user event changes in a directory user (pure). Okta's targets carry the user's id
 * (-> externalId), login (`alternateId` -> userName) and displayName; lifecycle events carry the
 * state: activate/unsuspend/reactivate -> active true, deactivate/suspend -> active false. A create
 * carries no status: an Okta user is created STAGED (or PROVISIONED/ACTIVE, and then Okta logs a
 * `user.lifecycle.activate` too), so a create leaves the user inactive until an activation says
 * otherwise: a staged pre-hire never gets an active platform account.
 */
import { createHash } from "node:crypto";
import { cleanName, toCanonicalUser } from "../scim/canonical-resource.js";
import { SCHEMA_USER, type ScimUser } from "../scim/scim-types.js";
import { maySameEntity } from "./external-id.js";
import { ASPECT_DEACTIVATED, ASPECT_LIFECYCLE, ASPECT_PROFILE, type HookMarks } from "./event-ordering.js";
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

/**
 * The aspect whose last change decides whether an event is stale for a user the directory does not
 * hold (on a held user, a create's profile and lifecycle are decided each on its own: see
 * applyingAspects).
 */
export function decidingAspect(op: UserLifecycleOp): string {
  return op === "create" || op === "profile" ? ASPECT_PROFILE : ASPECT_LIFECYCLE;
}

/**
 * The aspects whose marks a user event reads: its own, and those newUserActive decides from (a
 * create or an activation of an unknown user creates it).
 */
export function aspectsRead(op: UserLifecycleOp): string[] {
  return [...new Set([...aspectsOf(op), ASPECT_LIFECYCLE, ASPECT_DEACTIVATED])];
}

/**
 * The values of a user's aspects that the hooks compare to tell whether a write from another path
 * changed them (event-ordering.ts, seen values): the lifecycle is `active`; the profile is a digest
 * of what a create or profile event sets (userName, displayName, externalId). A SCIM write of other
 * attributes (title, emails, ...) changes neither.
 */
export function userAspectValues(user: ScimUser | Omit<ScimUser, "id">): Record<string, string> {
  const profile = JSON.stringify([user.userName ?? null, user.displayName ?? null, user.externalId ?? null]);
  return {
    [ASPECT_LIFECYCLE]: String(user.active),
    [ASPECT_PROFILE]: createHash("sha1").update(profile).digest("base64url").slice(0, 16),
  };
}

/**
 * What an event does to a user the directory does not hold (docs/webhooks.md): a create and an
 * activation create it; a profile update, a deactivation and a deletion create nothing ("unknown").
 */
export function createsUser(op: UserLifecycleOp): op is "create" | "activate" {
  return op === "create" || op === "activate";
}

/**
 * `active` of a user created from an event (`cause`: a create, an activation, or a membership add,
 * published at `published`). A create makes it inactive (staged). Otherwise it is true, unless the latest lifecycle event received for the Okta id
 * is a deactivation that found no user (ASPECT_DEACTIVATED, see event-ordering.ts) and that
 * deactivation is the newer one: published after the create or activation (a tie goes to the
 * deactivation), or, for a membership add, which says nothing about the lifecycle, whenever it was
 * published. A deactivation remembered from before the user's last recorded deletion (`deletedAt`)
 * is about the user that was deleted, not about this one.
 */
export function newUserActive(
  cause: "create" | "activate" | "membership",
  published: number,
  marks: HookMarks,
  deletedAt: number | null,
): boolean {
  // A create says nothing of the status: staged until an activation (see the top of this file).
  if (cause === "create") return false;
  const deactivated = marks.aspects[ASPECT_DEACTIVATED];
  if (deactivated === undefined) return true;
  // A later lifecycle event superseded it (an activation that created the user since).
  if (deactivated < (marks.aspects[ASPECT_LIFECYCLE] ?? 0)) return true;
  if (deletedAt !== null && deactivated <= deletedAt) return true;
  return cause === "membership" ? false : published > deactivated;
}

/**
 * Whether a stored user or group (of externalId `storedExternalId`) may be the Okta entity `oktaId`:
 * it has no externalId (another
 * client created it; it is adopted) or this one. One of another externalId found by login or by
 * group name is a different person or group (the rule of signed events' `user.upserted`).
 */
export function mayBeOktaEntity(storedExternalId: unknown, oktaId: string): boolean {
  return maySameEntity(oktaId, storedExternalId);
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
 * nothing; `aspects` are the parts it applies to (those it is not stale on; default all of the
 * event's). A create applied to the lifecycle makes the user inactive (staged: the activation that
 * follows makes it active). Create and profile events refresh userName and displayName and set
 * externalId when the user has none (a user another client created without one, matched by login: it is adopted; one of
 * another externalId is never passed here, see mayBeOktaEntity, and would keep its own). The login
 * gets the userName hygiene of every intake path (cleanName: trimmed; control characters throw
 * BadRequestError), and a changed user is re-canonicalised as a SCIM PATCH is.
 */
export function nextUserResource(
  current: ScimUser | Omit<ScimUser, "id">,
  op: Exclude<UserLifecycleOp, "delete">,
  target: OktaUserTarget,
  aspects: readonly string[] = aspectsOf(op),
): Omit<ScimUser, "id"> | null {
  const next = withoutId(current);
  let changed = false;
  if (op === "activate" || op === "deactivate" || (op === "create" && aspects.includes(ASPECT_LIFECYCLE))) {
    const active = op === "activate";
    if (next.active !== active) {
      next.active = active;
      changed = true;
    }
  }
  if (op === "activate" || op === "deactivate" || !aspects.includes(ASPECT_PROFILE)) {
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
