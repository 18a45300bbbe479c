import {
  ANY_CORE_ATTRS,
  type AttrDef,
  type AttrPath,
  type AttrTable,
  comparedDef,
  getKey,
  parseAttrPath,
} from "./attribute-schema.js";
import { caseFold } from "./case-fold.js";
import type { CompareOp, FilterNode, FilterValue } from "./filter-types.js";
import type { Json, JsonObject } from "./scim-types.js";

/**
 * Evaluates a parsed filter against one resource (RFC 7644 §3.4.2.2, RFC 7643 §2.2-2.4):
 * - strings compare case-insensitively unless the attribute is `caseExact` (id, externalId, ...);
 *   unknown attributes default to caseExact false (RFC 7643 §2.2);
 * - a multi-valued attribute matches when any of its values matches;
 * - `emails eq "x"` on a complex multi-valued attribute compares each element's `value`;
 * - gt/ge/lt/le order strings lexicographically, numbers numerically, dateTimes as instants (the
 *   parser has refused a dateTime literal that is not one, and gt/ge/lt/le of a boolean: filterProblem
 *   in filter-validate.ts);
 * - `pr` is true when the attribute has a non-empty value (not null, "", [] or {});
 * - `ne` is the negation of `eq` (so an absent attribute is `ne` anything); `eq null` matches
 *   an absent attribute;
 * - values of different types never match: the parser has already coerced a literal to its
 *   attribute's type where it can (`active eq "True"`, see coerceLiteral in filter-parser.ts),
 *   and trimmed an `eq`/`ne` literal compared with an attribute stored trimmed (userName, a
 *   Group's displayName; trimsLiteral); stored values are compared as they are, as the
 *   directory's indexes do.
 * The resource is the stored JSON plus `meta`; extension attributes sit under their URN key.
 */
export function matchesFilter(node: FilterNode, resource: JsonObject): boolean {
  return evaluate(node, resource, ANY_CORE_ATTRS);
}

/** Evaluates a value filter against one element of a complex attribute (`table` = its sub-attributes). */
export function matchesFilterWithin(node: FilterNode, element: JsonObject, table: AttrTable): boolean {
  return evaluate(node, element, table);
}

const EMPTY: AttrTable = new Map();
const pathCache = new WeakMap<AttrTable, Map<string, AttrPath>>();

function resolve(path: string, table: AttrTable): AttrPath {
  let cache = pathCache.get(table);
  if (!cache) {
    cache = new Map();
    pathCache.set(table, cache);
  }
  let parsed = cache.get(path);
  if (!parsed) {
    parsed = parseAttrPath(path, table) ?? { attr: path };
    if (cache.size < 1000) cache.set(path, parsed);
  }
  return parsed;
}

function evaluate(node: FilterNode, obj: JsonObject, table: AttrTable): boolean {
  switch (node.type) {
    case "and":
      return evaluate(node.left, obj, table) && evaluate(node.right, obj, table);
    case "or":
      return evaluate(node.left, obj, table) || evaluate(node.right, obj, table);
    case "not":
      return !evaluate(node.expr, obj, table);
    case "present":
      return values(obj, resolve(node.path, table), false).some(isNonEmpty);
    case "valuePath": {
      const p = resolve(node.path, table);
      const subTable = p.def?.sub ?? EMPTY;
      // An element of a list of plain values is its `value` (`tags[value eq "a"]`), as in a PATCH path.
      return values(obj, p, false).some((el) =>
        isObject(el)
          ? evaluate(node.filter, el, subTable)
          : el !== null && evaluate(node.filter, { value: el }, subTable),
      );
    }
    case "compare": {
      const p = resolve(node.path, table);
      const def = comparedDef(p);
      const found = values(obj, p, true);
      if (node.op === "eq" || node.op === "ne") {
        const eq =
          node.value === null
            ? !found.some(isNonEmpty)
            : found.some((v) => compare(v, node.value, "eq", def));
        return node.op === "eq" ? eq : !eq;
      }
      return found.some((v) => compare(v, node.value, node.op, def));
    }
  }
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isNonEmpty(v: Json): boolean {
  if (v === null || v === "") return false;
  if (Array.isArray(v)) return v.some(isNonEmpty);
  if (isObject(v)) return Object.values(v).some(isNonEmpty);
  return true;
}

/** All values at `p`, multi-valued attributes flattened; `forCompare` maps complex elements to `value`. */
function values(obj: JsonObject, p: AttrPath, forCompare: boolean): Json[] {
  let container: Json | undefined = obj;
  if (p.urn !== undefined) container = getKey(obj, p.urn);
  if (!isObject(container)) return [];
  if (p.attr === "") return [container];
  const v = getKey(container, p.attr);
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  if (p.sub !== undefined) {
    const sub = p.sub;
    const out: Json[] = [];
    for (const el of list) {
      if (!isObject(el)) continue;
      const sv = getKey(el, sub);
      if (sv === undefined) continue;
      if (Array.isArray(sv)) out.push(...sv);
      else out.push(sv);
    }
    return out;
  }
  if (forCompare && list.some(isObject)) {
    return list.map((el) => (isObject(el) ? (getKey(el, "value") ?? null) : el));
  }
  return list;
}

function compare(actual: Json, expected: FilterValue, op: CompareOp, def: AttrDef | undefined): boolean {
  if (typeof actual === "string" && typeof expected === "string") {
    if (def?.type === "dateTime" && op !== "co" && op !== "sw" && op !== "ew") {
      const a = Date.parse(actual);
      const e = Date.parse(expected);
      if (!Number.isNaN(a) && !Number.isNaN(e)) return order(a, e, op);
    }
    const exact = def?.caseExact === true;
    const a = exact ? actual : caseFold(actual);
    const e = exact ? expected : caseFold(expected);
    if (op === "co") return a.includes(e);
    if (op === "sw") return a.startsWith(e);
    if (op === "ew") return a.endsWith(e);
    return order(a, e, op);
  }
  if (typeof actual === "number" && typeof expected === "number") {
    return op === "co" || op === "sw" || op === "ew" ? false : order(actual, expected, op);
  }
  if (typeof actual === "boolean" && typeof expected === "boolean") return op === "eq" && actual === expected;
  return false;
}

function order<T extends string | number>(a: T, e: T, op: CompareOp): boolean {
  switch (op) {
    case "eq":
      return a === e;
    case "gt":
      return a > e;
    case "ge":
      return a >= e;
    case "lt":
      return a < e;
    case "le":
      return a <= e;
    default:
      return false;
  }
}

/**
 * Whether a parsed filter reads the core attribute `attr` (in schema case): `members` in
 * `members eq "x"`, `members.value eq "x"`, `members[value eq "x"]`, `not (members pr)`. For the
 * directory, which keeps a group's members and a user's groups outside the stored document and
 * adds them to what a filter sees only when it reads them.
 */
export function filterReads(node: FilterNode, attr: string): boolean {
  switch (node.type) {
    case "and":
    case "or":
      return filterReads(node.left, attr) || filterReads(node.right, attr);
    case "not":
      return filterReads(node.expr, attr);
    default:
      return node.path === attr || node.path.startsWith(`${attr}.`);
  }
}
