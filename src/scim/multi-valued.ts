import { type AttrDef, type AttrTable, findKey } from "./attribute-schema.js";
import { caseFold } from "./case-fold.js";
import { isJsonObject } from "./dialects.js";
import type { Json, JsonObject } from "./scim-types.js";

/**
 * Elements of multi-valued attributes (RFC 7643 §2.4) as PATCH compares and tidies them: which two
 * are the same element, one primary at most, and no element a cleared sub-attribute left hollow.
 */

/** Sub-attributes that qualify an element of a multi-valued attribute but hold none of its data. */
const QUALIFIERS = new Set(["type", "primary"]);

/**
 * The list without those of the elements at `touched` that a cleared sub-attribute left hollow:
 * an element without `value` where the attribute has one (RFC 7643 §2.4: "value" is its
 * significant value), or one holding nothing but qualifiers (an address left with only its
 * `type`). Entra clears a work email with `remove` of `emails[type eq "work"].value`; kept as
 * `{type: "work", primary: true}` it was a primary email without an address. Undefined when
 * nothing is left (RFC 7643 §2.5: an empty multi-valued attribute is unassigned).
 */
export function withoutHollow(
  list: Json[],
  touched: readonly number[],
  def: AttrDef | undefined,
): Json[] | undefined {
  const hasValue = def?.sub?.has("value") === true;
  const hollow = new Set(
    touched.filter((i) => {
      const el = list[i];
      if (!isJsonObject(el)) return false;
      if (hasValue && findKey(el, "value") === undefined) return true;
      return Object.keys(el).every((k) => QUALIFIERS.has(k.toLowerCase()));
    }),
  );
  if (hollow.size === 0) return list;
  const kept = list.filter((_, i) => !hollow.has(i));
  return kept.length === 0 ? undefined : kept;
}

/**
 * A resource's multi-valued complex attributes (those `table` defines) without their hollow
 * elements (withoutHollow): what a POST or PUT body holds as `{type: "work", primary: true, value:
 * null}` is no email, as a PATCH clearing its value leaves none (RFC 7643 §2.4, §2.5). An attribute
 * left with no element is unassigned and removed. Changes `doc` in place.
 */
export function dropHollowElements(doc: JsonObject, table: AttrTable): void {
  for (const [key, value] of Object.entries(doc)) {
    const def = table.get(key.toLowerCase());
    if (!Array.isArray(value) || def?.type !== "complex" || !def.multiValued) continue;
    const kept = withoutHollow(
      value,
      value.map((_, i) => i),
      def,
    );
    if (kept === undefined) delete doc[key];
    else if (kept !== value) doc[key] = kept;
  }
}

/**
 * Elements are the same when their `value` (and `type`, if both have one) are equal, else when equal
 * as JSON. A plain value (a custom extension's "a") is its own `value`, so "a" and {value: "a"} are
 * the same. Strings compare as the attribute's caseExact says (RFC 7643 §2.2), false when no schema
 * describes it (a custom extension's list): removing "ALPHA" removes "Alpha".
 */
export function sameElement(a: Json, b: Json, def: AttrDef | undefined): boolean {
  const va = significantValue(a);
  const vb = significantValue(b);
  if (
    va !== undefined &&
    vb !== undefined &&
    (isJsonObject(a) || isJsonObject(b) || typeof va === "string")
  ) {
    const exact = (def?.type === "complex" ? def.sub?.get("value")?.caseExact : def?.caseExact) === true;
    const eq = (x: Json | undefined, y: Json | undefined) =>
      !exact && typeof x === "string" && typeof y === "string" ? caseFold(x) === caseFold(y) : x === y;
    const ta = isJsonObject(a) ? a.type : undefined;
    const tb = isJsonObject(b) ? b.type : undefined;
    return eq(va, vb) && (ta === undefined || tb === undefined || eq(ta, tb));
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The significant value of an element (RFC 7643 §2.4): an object's `value`, or a plain value itself. */
function significantValue(el: Json): Json | undefined {
  if (isJsonObject(el)) return el.value;
  return Array.isArray(el) || el === null ? undefined : el;
}

/** RFC 7643 §2.4: at most one element is `primary: true`; the one just written wins. */
export function singlePrimary(list: Json[], keep: number): Json[] {
  const kept = list[keep];
  if (!isJsonObject(kept) || kept.primary !== true) return list;
  return list.map((el, i) =>
    i !== keep && isJsonObject(el) && el.primary === true ? { ...el, primary: false } : el,
  );
}
