import { BadRequestError } from "../errors.js";
import { caseFold, legacyFold } from "../scim/case-fold.js";
import { externalIdText } from "../scim/external-id-text.js";
import { type EntityKind, type JsonObject, parseRefKey, type ScimMeta } from "../scim/scim-types.js";
import type { DirtyEntry } from "./directory-types.js";

/**
 * Pure conversions between SCIM resources and what the directory stores (no I/O).
 */

/** Server-computed or write-only attributes never stored in a document (RFC 7643 §3.1, §4.1.1). */
const USER_DROPPED = new Set(["id", "meta", "groups", "password"]);
const GROUP_DROPPED = new Set(["id", "meta", "members"]);

export interface StoredDoc {
  doc: JsonObject;
  /**
   * userName or displayName case-folded (caseFold: lower case, NFC), unique per source and kind
   * (RFC 7643 §4.1.1 caseExact=false).
   */
  nameKey: string;
  /**
   * The name's key as the indexes held it before they were case-folded with NFC (legacyFold), when
   * it differs from nameKey: still checked for uniqueness, so a name stored before is not taken twice.
   */
  legacyNameKey?: string;
  /** externalId as sent, "" when absent (caseExact=true, RFC 7643 §3.1). */
  externalId: string;
  /** Distinct email values, case-folded (caseFold; users only). */
  emails: string[];
}

function strip(resource: JsonObject, dropped: Set<string>): JsonObject {
  const doc: JsonObject = {};
  for (const [key, value] of Object.entries(resource)) {
    if (!dropped.has(key) && value !== undefined) doc[key] = value;
  }
  return doc;
}

/** The externalId the index holds: "" for none, whitespace-only included (externalIdText). */
function externalIdOf(doc: JsonObject): string {
  return externalIdText(doc.externalId) ?? "";
}

export function storedUser(resource: JsonObject): StoredDoc {
  const doc = strip(resource, USER_DROPPED);
  const userName = doc.userName;
  if (typeof userName !== "string" || userName.length === 0) {
    throw new BadRequestError("userName is required", "invalidValue");
  }
  const emails = new Set<string>();
  if (Array.isArray(doc.emails)) {
    for (const email of doc.emails) {
      if (email && typeof email === "object" && !Array.isArray(email) && typeof email.value === "string") {
        if (email.value.length > 0) emails.add(caseFold(email.value));
      }
    }
  }
  return {
    doc,
    nameKey: caseFold(userName),
    legacyNameKey: legacyFold(userName),
    externalId: externalIdOf(doc),
    emails: [...emails],
  };
}

export function storedGroup(resource: JsonObject): StoredDoc {
  const doc = strip(resource, GROUP_DROPPED);
  const displayName = doc.displayName;
  if (typeof displayName !== "string" || displayName.length === 0) {
    throw new BadRequestError("displayName is required", "invalidValue");
  }
  return {
    doc,
    nameKey: caseFold(displayName),
    legacyNameKey: legacyFold(displayName),
    externalId: externalIdOf(doc),
    emails: [],
  };
}

/** The weak ETag of a generation (RFC 7232 §2.3, RFC 7644 §3.14). */
export function versionOf(generation: number): string {
  return `W/"${generation}"`;
}

/**
 * The generations an If-Match header accepts (RFC 7232 §3.1): "any" for `*`, else the list of
 * generation numbers named by its (weak or strong) entity tags. Weak comparison is used: SCIM
 * versions are weak ETags.
 */
export function ifMatchGenerations(ifMatch: string): "any" | string[] {
  const tags = ifMatch
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
  if (tags.includes("*")) return "any";
  return tags.map((tag) => tag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1"));
}

export interface EntityFields {
  doc: string | null;
  created: string | null;
  modified: string | null;
  gen: string | null;
  tomb: string | null;
}

/** The hash fields read for one entity, in this order. */
export const ENTITY_FIELDS = ["doc", "created", "modified", "gen", "tomb"] as const;

export function toFields(values: (string | null)[]): EntityFields {
  return {
    doc: values[0] ?? null,
    created: values[1] ?? null,
    modified: values[2] ?? null,
    gen: values[3] ?? null,
    tomb: values[4] ?? null,
  };
}

export function metaOf(kind: EntityKind, fields: EntityFields): ScimMeta {
  const generation = Number(fields.gen ?? 0);
  return {
    resourceType: kind === "user" ? "User" : "Group",
    created: fields.created ?? "",
    lastModified: fields.modified ?? fields.created ?? "",
    version: versionOf(generation),
  };
}

/** The resource as returned: the stored document with `id` placed right after `schemas`. */
export function resourceOf(id: string, doc: JsonObject): JsonObject {
  const { schemas, ...rest } = doc;
  return schemas === undefined ? { id, ...rest } : { schemas, id, ...rest };
}

/** Dirty-set entries from a ZRANGE ... WITHSCORES reply; malformed members are reported and skipped. */
export function dirtyEntries(raw: string[], onMalformed: (member: string) => void): DirtyEntry[] {
  const entries: DirtyEntry[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const member = raw[i] ?? "";
    try {
      entries.push({ ref: parseRefKey(member), since: Number(raw[i + 1]) });
    } catch {
      onMalformed(member);
    }
  }
  return entries;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** True when two stored documents hold the same data, whatever the order of their keys. */
export function sameDocument(a: JsonObject, b: JsonObject): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** True when a membership change could change the member list. */
export function changesMembers(
  change: { replace?: string[]; add?: string[]; remove?: string[] } | undefined,
): boolean {
  return (
    change !== undefined &&
    (change.replace !== undefined || (change.add?.length ?? 0) > 0 || (change.remove?.length ?? 0) > 0)
  );
}
