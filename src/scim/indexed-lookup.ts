import type { FilterNode } from "./filter-types.js";

export type IndexedAttribute = "userName" | "externalId" | "emails.value" | "displayName" | "id";

export interface IndexedLookup {
  attribute: IndexedAttribute;
  value: string;
}

/** Parsed paths (core URN prefix already dropped by the parser) that an index answers. */
const INDEXED: ReadonlyMap<string, IndexedAttribute> = new Map([
  ["userName", "userName"],
  ["externalId", "externalId"],
  ["emails.value", "emails.value"],
  ["emails", "emails.value"],
  ["displayName", "displayName"],
  ["id", "id"],
]);

/**
 * When the whole filter is one `eq` with a string value on an indexed attribute, the directory
 * can answer from its index instead of scanning (the common `userName eq "x"` of Okta and Entra,
 * RFC 7644 §3.4.2.2). `emails eq "x"` and `emails[value eq "x"]` count as `emails.value eq "x"`.
 * Whether the index compares case-insensitively is the index's business: userName, displayName
 * and emails are caseExact false, id and externalId caseExact true (RFC 7643 §3.1, §4.1).
 */
export function indexedLookup(node: FilterNode): IndexedLookup | null {
  if (node.type === "valuePath" && node.path === "emails") {
    const inner = node.filter;
    if (
      inner.type === "compare" &&
      inner.op === "eq" &&
      inner.path === "value" &&
      typeof inner.value === "string"
    ) {
      return { attribute: "emails.value", value: inner.value };
    }
    return null;
  }
  if (node.type !== "compare" || node.op !== "eq" || typeof node.value !== "string") return null;
  const attribute = INDEXED.get(node.path);
  return attribute ? { attribute, value: node.value } : null;
}
