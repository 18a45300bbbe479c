import { type AttrDef, type AttrTable, comparedDef, parseAttrPath } from "./attribute-schema.js";
import type { CompareOp, FilterNode, FilterValue } from "./filter-types.js";

/**
 * Checks a parsed filter against the attribute schema, once, when it is parsed (parseFilter and
 * parseFilterWithin call filterProblem), so that a comparison the attribute's type cannot answer is
 * a 400 invalidFilter (RFC 7644 §3.4.2.2, §3.12: "the specified attribute and filter comparison
 * combination is not supported") rather than a 200 with an empty list:
 * - `gt`/`ge`/`lt`/`le` on a boolean or binary attribute (`active gt "true"`, `emails.primary lt 1`):
 *   §3.4.2.2 "Boolean and Binary attributes SHALL cause a failed response (HTTP status code 400)
 *   with scimType of invalidFilter";
 * - `eq`/`ne`/`gt`/`ge`/`lt`/`le` on a dateTime attribute (meta.created, meta.lastModified) with a
 *   value that is not a dateTime (isFilterDateTime): `meta.lastModified gt "garbage"` cannot be
 *   ordered as an instant. `eq null` / `ne null` (absent / present) stay valid; `co`/`sw`/`ew`
 *   compare the text and take any string.
 * Attributes no schema here knows (an unknown extension's) are not checked. Pure, and independent
 * of any resource: the evaluator and the directory's index lookups never see such a filter, and the
 * cost of evaluating a valid one does not change.
 */

const ORDERING_OPS = new Set<CompareOp>(["gt", "ge", "lt", "le"]);
const INSTANT_OPS = new Set<CompareOp>(["eq", "ne", "gt", "ge", "lt", "le"]);
const EMPTY: AttrTable = new Map();

/**
 * The dateTime forms a filter may compare with: an xsd:dateTime (RFC 7643 §2.3.5), as Okta and
 * Entra ID send it: `2011-05-13T04:42:34Z`, with fractional seconds of any length (`.000Z`, .NET's
 * `.0000000Z`), with an offset (`+02:00`, also `+0200`) or none; also `t`, `z` or a space in place
 * of `T` and `Z` (RFC 3339 §5.6), minutes without seconds, and a bare date (`2024-01-01`, midnight
 * UTC). Four-digit years only.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `text` is a dateTime a filter may compare with (DATE_TIME) that names a real instant:
 * Date.parse, which the evaluator orders with, reads it (so hour 25, minute 60 or offset +99:99 are
 * refused) and its day exists (Date.parse would read 2024-02-30 as March 1st). Every string
 * accepted here is ordered by the evaluator as an instant, never as text.
 */
export function isFilterDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m || Number.isNaN(Date.parse(text))) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

function shown(value: FilterValue): string {
  const text = JSON.stringify(value);
  return text.length > 64 ? `${text.slice(0, 60)}..."` : text;
}

/**
 * Why `<path> <op> <value>` cannot be answered for an attribute of definition `def` (the compared
 * definition: comparedDef), or undefined when it can. `path` only names the attribute in the text.
 */
export function comparisonProblem(
  path: string,
  def: AttrDef | undefined,
  op: CompareOp,
  value: FilterValue,
): string | undefined {
  if (def === undefined) return undefined;
  if ((def.type === "boolean" || def.type === "binary") && ORDERING_OPS.has(op)) {
    return `"${op}" cannot compare "${path}", a ${def.type} attribute (RFC 7644 §3.4.2.2)`;
  }
  if (def.type === "dateTime" && INSTANT_OPS.has(op) && value !== null) {
    if (typeof value !== "string" || !isFilterDateTime(value)) {
      return (
        `"${path}" is a dateTime and ${shown(value)} is not one ` +
        `(RFC 7643 §2.3.5: an xsd:dateTime such as "2011-05-13T04:42:34Z")`
      );
    }
  }
  return undefined;
}

/**
 * The first comparison of `node` that its attribute's type cannot answer (comparisonProblem), or
 * undefined. Paths resolve against `table` as the evaluator resolves them (a value path's filter
 * against the attribute's sub-attributes).
 */
export function filterProblem(node: FilterNode, table: AttrTable): string | undefined {
  switch (node.type) {
    case "and":
    case "or":
      return filterProblem(node.left, table) ?? filterProblem(node.right, table);
    case "not":
      return filterProblem(node.expr, table);
    case "present":
      return undefined;
    case "valuePath":
      return filterProblem(node.filter, parseAttrPath(node.path, table)?.def?.sub ?? EMPTY);
    case "compare": {
      const p = parseAttrPath(node.path, table);
      return p === undefined ? undefined : comparisonProblem(node.path, comparedDef(p), node.op, node.value);
    }
  }
}
