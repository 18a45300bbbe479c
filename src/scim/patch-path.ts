import { BadRequestError } from "../errors.js";
import { type AttrDef, type AttrPath, type AttrTable, isCoreUrn, parseAttrPath } from "./attribute-schema.js";
import { parseFilterWithin } from "./filter-parser.js";
import type { FilterNode } from "./filter-types.js";
import type { Json, JsonObject } from "./scim-types.js";

/**
 * A PATCH path (RFC 7644 §3.5.2): `attrPath / valuePath [subAttr]`, e.g. `name.givenName`,
 * `urn:...:enterprise:2.0:User:manager`, `emails[type eq "work"].value`, `members[value eq "id"]`.
 */
export interface PatchPath {
  /** The attribute (its `sub` set for `name.givenName`-style paths without a filter). */
  target: AttrPath;
  filter?: FilterNode;
  /** Sub-attribute after a value filter: `.value` of `emails[type eq "work"].value`. */
  filterSub?: string;
  filterSubDef?: AttrDef;
}

const EMPTY: AttrTable = new Map();

function invalidPath(text: string, why: string): never {
  throw new BadRequestError(`Invalid PATCH path "${text}": ${why}`, "invalidPath");
}

/**
 * A path that is a bare core schema URN (`urn:ietf:params:scim:schemas:core:2.0:User`, either
 * type's, any case, with or without a value filter) is invalidPath, naming the path as sent: RFC
 * 7644 §3.5.2's attrPath ends in an attribute name, and neither Okta nor Entra ID sends such a
 * path (their whole-resource updates have no `path`; that form, also with the attributes under
 * the core URN key, is how to send them). It is not applied as an operation without `path`: a
 * remove of it would remove the whole resource's attributes. Read as an attribute path it split
 * at its last colon into an attribute "User" of a schema "urn:...:core:2.0", and the answer named
 * that URN. A whole extension's URN stays a path (its value an object of the extension's attributes).
 */
export function parsePatchPath(text: string, table: AttrTable): PatchPath {
  const open = text.indexOf("[");
  if (isCoreUrn((open < 0 ? text : text.slice(0, open)).trim())) {
    invalidPath(
      text,
      "a core schema URN names no attribute (RFC 7644 §3.5.2); name an attribute, or omit path",
    );
  }
  if (open < 0) {
    const target = parseAttrPath(text, table);
    if (!target) invalidPath(text, "not an attribute path");
    return { target };
  }
  const close = text.lastIndexOf("]");
  if (close < open) invalidPath(text, 'missing "]"');
  const target = parseAttrPath(text.slice(0, open).trim(), table);
  if (!target || target.sub !== undefined || target.attr === "") {
    invalidPath(text, "a value filter must follow a multi-valued attribute");
  }
  let filter: FilterNode;
  try {
    filter = parseFilterWithin(text.slice(open + 1, close), target.def?.sub ?? EMPTY, true, {
      lenientLiterals: true,
    });
  } catch (err) {
    // RFC 7644 §3.12: a PATCH path filter that does not parse is invalidFilter.
    const why = err instanceof Error ? err.message : "bad value filter";
    throw new BadRequestError(`Invalid PATCH path "${text}": ${why}`, "invalidFilter");
  }
  const out: PatchPath = { target, filter };
  const rest = text.slice(close + 1).trim();
  if (rest !== "") {
    if (!/^\.[A-Za-z$][\w$-]*$/.test(rest)) invalidPath(text, `unexpected "${rest}" after "]"`);
    const subDef = target.def?.sub?.get(rest.slice(1).toLowerCase());
    out.filterSub = subDef?.name ?? rest.slice(1);
    if (subDef) out.filterSubDef = subDef;
  }
  return out;
}

/**
 * The element a value filter describes when it is only `eq` comparisons joined by `and`
 * (`type eq "work"`, `type eq "work" and primary eq true`): what Entra expects us to create when a
 * replace targets an element that does not exist. `eq null` describes an element without that
 * sub-attribute (it matches one: filter-eval.ts), so it adds nothing: Keycloak's
 * keycloak-scim2-storage writes `emails[type eq null].value` for an email that has no type.
 * undefined when the filter is anything else.
 */
export function elementFromFilter(filter: FilterNode): JsonObject | undefined {
  if (filter.type === "compare" && filter.op === "eq" && !filter.path.includes(".")) {
    return filter.value === null ? {} : { [filter.path]: filter.value as Json };
  }
  if (filter.type === "and") {
    const left = elementFromFilter(filter.left);
    const right = elementFromFilter(filter.right);
    return left && right ? { ...left, ...right } : undefined;
  }
  return undefined;
}

/** The `value eq "x"` ids of a filter made of such comparisons joined by `or` (members filters). */
export function valueEqIds(filter: FilterNode): string[] | undefined {
  if (
    filter.type === "compare" &&
    filter.op === "eq" &&
    filter.path === "value" &&
    typeof filter.value === "string"
  ) {
    return [filter.value];
  }
  if (filter.type === "or") {
    const left = valueEqIds(filter.left);
    const right = valueEqIds(filter.right);
    return left && right ? [...left, ...right] : undefined;
  }
  return undefined;
}
