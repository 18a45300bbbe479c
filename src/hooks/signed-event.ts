/**
 * Signed change events (`/hooks/<source>/events`): the body is one event `{"type", "data"}` or
 * `{"events": [...]}`. Parsing validates every item first (SCIM resources with the same
 * canonicalisers as SCIM writes) and reports every bad item by its index, so that a rejected
 * delivery stores nothing.
 */
import { statesAttribute } from "../scim/canonical-resource.js";
import { BadRequestError, isAppError } from "../errors.js";
import type { ScimGroup, ScimUser } from "../scim/scim-types.js";

/** How a group member names a user: by externalId, userName, or the bridge's own id. */
export type MemberRef = { externalId: string } | { userName: string } | { value: string };

export type UserKey = { externalId?: string; userName?: string };
export type GroupKey = { externalId?: string; displayName?: string };

export type SignedEvent =
  | { type: "ping" }
  /**
   * `activeOmitted`: the data does not state `active` (no such key in any case, or null). A user it replaces then keeps its state,
   * as with a SCIM PUT (RFC 7644 §3.5.1: an omitted attribute is not asserted); a new one is active.
   */
  | { type: "user.upserted"; user: Omit<ScimUser, "id">; activeOmitted: boolean }
  | { type: "user.deleted"; key: UserKey }
  /**
   * `membersOmitted`: the data has no `members` (or null). A group it replaces then keeps its
   * members (a rename-only upsert must not empty the group); `[]` empties it; a new one has none.
   */
  | { type: "group.upserted"; group: Omit<ScimGroup, "id">; members: MemberRef[]; membersOmitted: boolean }
  | { type: "group.deleted"; key: GroupKey };

export const SIGNED_EVENT_TYPES = [
  "ping",
  "user.upserted",
  "user.deleted",
  "group.upserted",
  "group.deleted",
];

/** Validate and canonicalise SCIM-shaped resources; throw (BadRequestError) on invalid input. */
export interface Canonicalisers {
  user(body: unknown): Omit<ScimUser, "id">;
  group(body: unknown): Omit<ScimGroup, "id">;
}

export interface ItemError {
  index: number;
  message: string;
}

/** Thrown when any item of a delivery is invalid; `details.items` names each one. */
export class InvalidDeliveryError extends BadRequestError {
  constructor(readonly items: ItemError[]) {
    super(
      `${items.length} event${items.length === 1 ? "" : "s"} of the delivery ${items.length === 1 ? "is" : "are"} invalid; nothing was applied`,
      "invalidValue",
      { items },
    );
  }
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.trim().length > 0 ? value : undefined;
}

function messageOf(err: unknown): string {
  if (isAppError(err) || err instanceof Error) return err.message;
  return String(err);
}

function userKey(data: Obj): UserKey {
  const key: UserKey = {};
  const externalId = nonEmpty(data.externalId);
  const userName = nonEmpty(data.userName);
  if (externalId) key.externalId = externalId;
  if (userName) key.userName = userName;
  if (!externalId && !userName) throw new Error("data needs externalId or userName");
  return key;
}

function groupKey(data: Obj): GroupKey {
  const key: GroupKey = {};
  const externalId = nonEmpty(data.externalId);
  const displayName = nonEmpty(data.displayName);
  if (externalId) key.externalId = externalId;
  if (displayName) key.displayName = displayName;
  if (!externalId && !displayName) throw new Error("data needs externalId or displayName");
  return key;
}

function memberRef(member: unknown, i: number): MemberRef {
  if (isObj(member)) {
    const externalId = nonEmpty(member.externalId);
    if (externalId) return { externalId };
    const userName = nonEmpty(member.userName);
    if (userName) return { userName };
    const value = nonEmpty(member.value);
    if (value) return { value };
  }
  throw new Error(`members[${i}] must name a user by externalId, userName or value`);
}

/** Parses one item; throws with a readable message when it is invalid. */
export function parseSignedEvent(item: unknown, canon: Canonicalisers): SignedEvent {
  if (!isObj(item)) throw new Error("an event must be an object");
  const type = item.type;
  if (typeof type !== "string" || !SIGNED_EVENT_TYPES.includes(type)) {
    throw new Error(
      `unknown event type ${JSON.stringify(type)}; expected one of ${SIGNED_EVENT_TYPES.join(", ")}`,
    );
  }
  if (type === "ping") return { type };
  const data = item.data;
  if (!isObj(data)) throw new Error(`${type} needs a data object`);
  switch (type) {
    case "user.upserted":
      return {
        type,
        user: canon.user(data),
        activeOmitted: !statesAttribute(data, "active", "User"),
      };
    case "user.deleted":
      return { type, key: userKey(data) };
    case "group.deleted":
      return { type, key: groupKey(data) };
    default: {
      const { members, ...rest } = data;
      if (members !== undefined && members !== null && !Array.isArray(members)) {
        throw new Error("members must be an array");
      }
      const refs = (Array.isArray(members) ? members : []).map(memberRef);
      return {
        type: "group.upserted",
        group: canon.group(rest),
        members: refs,
        membersOmitted: members === undefined || members === null,
      };
    }
  }
}

export interface ParsedItems {
  /** Every item of the delivery as sent (one event, or the `events` list). */
  items: readonly unknown[];
  /** The items that parsed, with their index in the delivery. */
  parsed: Array<{ index: number; event: SignedEvent }>;
  errors: ItemError[];
}

/** Parses every item of a delivery; throws BadRequestError only when it is not a delivery at all. */
export function parseSignedItems(body: unknown, canon: Canonicalisers): ParsedItems {
  if (!isObj(body)) throw new BadRequestError("the body must be a JSON object", "invalidSyntax");
  let items: unknown[];
  if ("events" in body) {
    if (!Array.isArray(body.events)) throw new BadRequestError("events must be an array", "invalidSyntax");
    items = body.events;
  } else {
    items = [body];
  }
  const result: ParsedItems = { items, parsed: [], errors: [] };
  items.forEach((item, index) => {
    try {
      result.parsed.push({ index, event: parseSignedEvent(item, canon) });
    } catch (err) {
      result.errors.push({ index, message: messageOf(err) });
    }
  });
  return result;
}

/**
 * Parses a whole delivery. Throws InvalidDeliveryError (every bad item by index) or
 * BadRequestError (not a delivery at all).
 */
export function parseSignedDelivery(body: unknown, canon: Canonicalisers): SignedEvent[] {
  const { parsed, errors } = parseSignedItems(body, canon);
  if (errors.length > 0) throw new InvalidDeliveryError(errors);
  return parsed.map((p) => p.event);
}
