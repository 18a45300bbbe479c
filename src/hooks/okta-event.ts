/**
 * Okta Event Hook deliveries, normalised into the few actions the bridge applies.
 *
 * A delivery is `{eventType: "com.okta.event_hook", data: {events: [LogEvent...]}}`; each event
 * is a System Log event with `uuid`, `published`, `eventType`, `outcome` and a `target` array whose
 * entries are found by their `type` (`User`, `UserGroup`), never by their position.
 */
import { BadRequestError } from "../errors.js";

/** What a lifecycle event does to a user. */
export type UserLifecycleOp = "create" | "activate" | "deactivate" | "delete" | "profile";

export const OKTA_USER_EVENTS: Readonly<Record<string, UserLifecycleOp>> = {
  "user.lifecycle.create": "create",
  "user.lifecycle.activate": "activate",
  "user.lifecycle.reactivate": "activate",
  "user.lifecycle.unsuspend": "activate",
  "user.lifecycle.deactivate": "deactivate",
  "user.lifecycle.suspend": "deactivate",
  "user.lifecycle.delete.initiated": "delete",
  "user.lifecycle.delete.completed": "delete",
  "user.account.update_profile": "profile",
};

export const OKTA_MEMBERSHIP_EVENTS: Readonly<Record<string, "add" | "remove">> = {
  "group.user_membership.add": "add",
  "group.user_membership.remove": "remove",
};

/** What a group event does to the group. */
export type GroupOp = "delete" | "rename";

/**
 * What a group event does. A deletion deletes the group (Okta emits no membership removals when it
 * deletes a group); a profile update renames it (its target carries the group's name after the
 * change). `group.lifecycle.create` is not applied: a group is created with its first member (a
 * membership add).
 */
export const OKTA_GROUP_EVENTS: Readonly<Record<string, GroupOp>> = {
  "group.lifecycle.delete": "delete",
  "group.profile.update": "rename",
};

export interface OktaUserTarget {
  /** The Okta user id: the directory user's externalId. */
  oktaId: string;
  /** The Okta login (`alternateId`): the directory user's userName. */
  login?: string;
  displayName?: string;
}

export interface OktaGroupTarget {
  oktaId: string;
  displayName?: string;
}

interface EventBase {
  /** The event's `uuid` (deduplication key); absent only in malformed events. */
  uuid?: string;
  eventType: string;
  /** `published`, epoch ms. */
  published: number;
}

export type OktaAction =
  | (EventBase & { kind: "user"; op: UserLifecycleOp; user: OktaUserTarget })
  | (EventBase & { kind: "membership"; op: "add" | "remove"; user: OktaUserTarget; group: OktaGroupTarget })
  | (EventBase & { kind: "group"; op: GroupOp; group: OktaGroupTarget })
  /** Known type without the targets it needs (e.g. a preview delivery with `target: null`). */
  | (EventBase & { kind: "no-target" })
  /** The event records a failed attempt (`outcome.result` is not SUCCESS): nothing happened in Okta. */
  | (EventBase & { kind: "not-success" })
  | (EventBase & { kind: "unknown" })
  /** Not a readable event (no eventType or no valid `published`). */
  | { kind: "malformed"; uuid?: string; eventType: string; published: number };

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The first target of the given `type` (Okta orders targets differently across event types). */
export function findTarget(targets: unknown, type: string): Obj | undefined {
  if (!Array.isArray(targets)) return undefined;
  return targets.find((t): t is Obj => isObj(t) && t.type === type && str(t.id) !== undefined);
}

function userTarget(t: Obj): OktaUserTarget {
  return { oktaId: t.id as string, login: str(t.alternateId), displayName: str(t.displayName) };
}

/**
 * A group target. Its name is `displayName`, unless the target carries Okta's `changeDetails` with
 * the name after the change (`changeDetails.to.name`), which is then preferred.
 */
function groupTarget(t: Obj): OktaGroupTarget {
  const to = isObj(t.changeDetails) && isObj(t.changeDetails.to) ? t.changeDetails.to : undefined;
  return { oktaId: t.id as string, displayName: str(to?.name) ?? str(t.displayName) };
}

/** Normalises one System Log event. */
export function toOktaAction(event: unknown): OktaAction {
  if (!isObj(event)) return { kind: "malformed", eventType: "", published: 0 };
  const uuid = str(event.uuid);
  const eventType = str(event.eventType) ?? "";
  const published = typeof event.published === "string" ? Date.parse(event.published) : Number.NaN;
  if (!eventType || Number.isNaN(published)) return { kind: "malformed", uuid, eventType, published: 0 };
  const base: EventBase = { uuid, eventType, published };

  const userOp = OKTA_USER_EVENTS[eventType];
  const memberOp = OKTA_MEMBERSHIP_EVENTS[eventType];
  const groupOp = OKTA_GROUP_EVENTS[eventType];
  if (userOp === undefined && memberOp === undefined && groupOp === undefined)
    return { ...base, kind: "unknown" };

  const result = isObj(event.outcome) ? event.outcome.result : undefined;
  if (result !== undefined && result !== null && result !== "SUCCESS")
    return { ...base, kind: "not-success" };

  if (groupOp !== undefined) {
    const found = findTarget(event.target, "UserGroup");
    if (!found) return { ...base, kind: "no-target" };
    const group = groupTarget(found);
    // A rename needs the new name.
    if (groupOp === "rename" && group.displayName === undefined) return { ...base, kind: "no-target" };
    return { ...base, kind: "group", op: groupOp, group };
  }

  const user = findTarget(event.target, "User");
  if (!user) return { ...base, kind: "no-target" };
  if (userOp !== undefined) return { ...base, kind: "user", op: userOp, user: userTarget(user) };

  const group = findTarget(event.target, "UserGroup");
  if (!group || memberOp === undefined) return { ...base, kind: "no-target" };
  return {
    ...base,
    kind: "membership",
    op: memberOp,
    user: userTarget(user),
    group: groupTarget(group),
  };
}

/** Reads a delivery body; throws BadRequestError when it is not an Event Hook delivery at all. */
export function parseOktaDelivery(body: unknown): OktaAction[] {
  if (!isObj(body) || !isObj(body.data) || !Array.isArray(body.data.events)) {
    throw new BadRequestError(
      "not an Okta Event Hook delivery: expected data.events to be an array",
      "invalidSyntax",
    );
  }
  return body.data.events.map(toOktaAction);
}
