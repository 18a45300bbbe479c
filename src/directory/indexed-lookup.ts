import { SCHEMA_GROUP, SCHEMA_USER, type EntityKind } from "../scim/scim-types.js";
import type { FilterNode } from "../scim/filter-types.js";

/** An `eq` filter the directory answers from an index instead of a scan. */
export type IndexedLookup =
  | { attribute: "id"; value: string }
  | { attribute: "name"; value: string }
  | { attribute: "externalId"; value: string }
  | { attribute: "email"; value: string };

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
 * An index lookup that narrows a conjunction (`id eq "g" and members eq "u"`, `userName eq "x" and
 * active eq true`): every match of the whole filter is among its results, so the caller reads
 * those candidates and applies the whole filter to them instead of scanning. null when no operand
 * of a top-level `and` chain is an indexed `eq`.
 */
export function narrowingLookup(kind: EntityKind, filter: FilterNode | undefined): IndexedLookup | null {
  if (filter?.type !== "and") return null;
  return (
    indexedLookup(kind, filter.left) ??
    narrowingLookup(kind, filter.left) ??
    indexedLookup(kind, filter.right) ??
    narrowingLookup(kind, filter.right)
  );
}
