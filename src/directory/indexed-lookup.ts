import { SCHEMA_GROUP, SCHEMA_USER, type EntityKind } from "../scim/scim-types.js";
import type { FilterNode } from "../scim/filter-types.js";
import { isStoreId } from "./directory-keys.js";

/** An `eq` filter the directory answers from an index instead of a scan. */
export type IndexedLookup =
  | { attribute: "id"; value: string }
  | { attribute: "name"; value: string }
  | { attribute: "externalId"; value: string }
  | { attribute: "email"; value: string }
  /** The entities linked to `value`: a user's groups (a group filter), a group's members (a user filter). */
  | { attribute: "linked"; value: string };

/**
 * Recognises a top-level `attr eq "value"` on an indexed attribute (RFC 7644 §3.4.2.2). Attribute
 * names are case-insensitive and may carry the core schema URN (RFC 7644 §3.10). Users: id,
 * userName, externalId, emails.value (also `emails eq` and `emails[value eq]`); groups: id, displayName, externalId. Anything else -> null
 * (the caller scans).
 */
export function indexedLookup(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  if (!filter) return null;
  const urn = `${kind === "user" ? SCHEMA_USER : SCHEMA_GROUP}:`.toLowerCase();
  const bare = (path: string) => {
    const lower = path.toLowerCase();
    return lower.startsWith(urn) ? lower.slice(urn.length) : lower;
  };
  // `emails[value eq "x"]` is the same lookup as `emails.value eq "x"`.
  if (kind === "user" && filter.type === "valuePath" && bare(filter.path) === "emails") {
    const inner = filter.filter;
    if (inner.type === "compare" && inner.op === "eq" && typeof inner.value === "string") {
      if (inner.path.toLowerCase() === "value") return { attribute: "email", value: inner.value };
    }
    return null;
  }
  if (filter.type !== "compare" || filter.op !== "eq" || typeof filter.value !== "string") return null;
  const path = bare(filter.path);
  const value = filter.value;
  if (path === "id") return { attribute: "id", value };
  if (path === "externalid") return { attribute: "externalId", value };
  if (kind === "user") {
    if (path === "username") return { attribute: "name", value };
    if (path === "emails.value" || path === "emails") return { attribute: "email", value };
  } else if (path === "displayname") {
    return { attribute: "name", value };
  }
  return null;
}

/**
 * An index lookup that narrows a filter (`id eq "g" and members eq "u"`, `userName eq "x" and
 * active eq true`, `members eq "u"`): every match of the whole filter is among its results, so the
 * caller reads those candidates and applies the whole filter to them instead of scanning. null
 * when neither the filter nor an operand of its top-level `and` chain is an indexed `eq` or a
 * member/group link (linkedLookup).
 */
export function narrowingLookup(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  // The entity's own indexes give few candidates (one for id, names, externalId); a link set may give many.
  return uniqueOperand(kind, filter) ?? linkedOperand(kind, filter);
}

function uniqueOperand(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  if (filter?.type !== "and") return null;
  return (
    indexedLookup(kind, filter.left) ??
    indexedLookup(kind, filter.right) ??
    uniqueOperand(kind, filter.left) ??
    uniqueOperand(kind, filter.right)
  );
}

function linkedOperand(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  if (filter?.type !== "and") return linkedLookup(kind, filter);
  return linkedOperand(kind, filter.left) ?? linkedOperand(kind, filter.right);
}

/**
 * `members eq "u"` on groups (also `members.value eq` and `members[value eq]`), `groups eq "g"` on
 * users (also `groups.value eq` and `groups[value eq]`): the directory keeps membership in both
 * directions, so the other side's set holds every candidate. Only for a bridge id as the bridge
 * writes them (lower-case UUID); anything else scans. Narrowing only: the caller still applies the
 * whole filter to each candidate, reading its own link set, so a scan and this agree.
 */
export function linkedLookup(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  if (!filter) return null;
  const link = kind === "group" ? "members" : "groups";
  let value: unknown;
  if (filter.type === "valuePath" && filter.path === link) {
    const inner = filter.filter;
    if (inner.type === "compare" && inner.op === "eq" && inner.path === "value") value = inner.value;
  } else if (filter.type === "compare" && filter.op === "eq") {
    if (filter.path === link || filter.path === `${link}.value`) value = filter.value;
  }
  return typeof value === "string" && isStoreId(value) ? { attribute: "linked", value } : null;
}
