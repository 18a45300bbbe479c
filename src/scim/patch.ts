import type { MembershipChange } from "../directory/directory-types.js";
import { BadRequestError } from "../errors.js";
import { type AttrDef, type AttrTable, GROUP_ATTRS, USER_ATTRS, findKey } from "./attribute-schema.js";
import { canonicalValue, statesAttribute, toCanonicalGroup, toCanonicalUser } from "./canonical-resource.js";
import { expandNoPathValue, isJsonObject } from "./dialects.js";
import { matchesFilterWithin } from "./filter-eval.js";
import { sameElement, singlePrimary, withoutHollow } from "./multi-valued.js";
import { MembershipAccumulator, memberFilterNeedsList } from "./patch-members.js";
import { elementFromFilter, type PatchPath, parsePatchPath } from "./patch-path.js";
import type { GroupMember, Json, JsonObject, PatchOperation, ScimGroup, ScimUser } from "./scim-types.js";

/**
 * PATCH (RFC 7644 §3.5.2) on a copy of the stored document: all operations apply in order, or a
 * BadRequestError is thrown and the input is untouched. Lenient where real clients need it:
 * remove of something absent (or a filter matching nothing) is a no-op; replace/add of a filtered
 * element that does not exist creates it from the filter's `eq` terms (Entra); several ops on the
 * same filtered element therefore merge into one element. The result is re-validated as a whole.
 * Operations that leave `active` unassigned (remove, null) keep the user's state, as a PUT without
 * it does: unassigned is not `true` (RFC 7643 §2.5), and a PATCH must not reactivate a leaver.
 */
export function applyUserPatch(
  resource: JsonObject,
  operations: readonly PatchOperation[],
): Omit<ScimUser, "id"> {
  const doc = cloneJson(resource);
  const unassigned = new Set<string>();
  for (const op of operations) applyOperation(doc, op, USER_ATTRS, unassigned, undefined);
  refuseUnassignedRequired(doc, unassigned);
  const user = toCanonicalUser(doc, resource);
  return statesAttribute(doc, "active", "User") ? user : { ...user, active: resource.active !== false };
}

/**
 * `currentMembers` (the group's members as the directory holds them) is needed only when
 * groupPatchNeedsMembers(operations) is true; otherwise it may be undefined.
 */
export function applyGroupPatch(
  resource: JsonObject,
  currentMembers: readonly GroupMember[] | undefined,
  operations: readonly PatchOperation[],
): { resource: Omit<ScimGroup, "id">; members: MembershipChange } {
  const doc = cloneJson(resource);
  delete doc.members;
  const members = new MembershipAccumulator(currentMembers);
  const unassigned = new Set<string>();
  for (const op of operations) applyOperation(doc, op, GROUP_ATTRS, unassigned, members);
  refuseUnassignedRequired(doc, unassigned);
  return { resource: toCanonicalGroup(doc, resource).resource, members: members.result() };
}

/**
 * Whether applyGroupPatch needs the current member list for these operations: a members filter
 * other than `value eq` on a remove or replace (`members[value ne "x"]`, `members[type eq "User"]`).
 * Paths without "[" are not parsed, so the common PATCH costs a string scan. A malformed
 * operation answers false: applying it throws the error the caller must see.
 */
export function groupPatchNeedsMembers(operations: readonly PatchOperation[]): boolean {
  return operations.some((raw) => {
    const op = String(raw.op).toLowerCase() as Op;
    const paths = raw.path ? [raw.path] : isJsonObject(raw.value) ? Object.keys(raw.value) : [];
    return paths.some((text) => {
      if (!text.includes("[")) return false;
      try {
        return memberFilterNeedsList(op, parsePatchPath(text, GROUP_ATTRS));
      } catch {
        return false;
      }
    });
  });
}

type Op = PatchOperation["op"];
const EMPTY: AttrTable = new Map();

/** A deep copy (the stored JSON has no cycles; faster than structuredClone for small documents). */
function cloneJson(resource: JsonObject): JsonObject {
  return JSON.parse(JSON.stringify(resource)) as JsonObject;
}

function applyOperation(
  doc: JsonObject,
  raw: PatchOperation,
  table: AttrTable,
  unassigned: Set<string>,
  members?: MembershipAccumulator,
) {
  const op = String(raw.op).toLowerCase() as Op;
  if (op !== "add" && op !== "remove" && op !== "replace") {
    throw new BadRequestError(`Unknown PATCH op "${String(raw.op)}"`, "invalidSyntax");
  }
  if (raw.path === undefined || raw.path === "") {
    if (op === "remove") throw new BadRequestError('A "remove" operation needs a "path"', "noTarget");
    for (const { path, value } of expandNoPathValue(raw.value)) {
      const parsed = parsePatchPath(path, table);
      // A whole-resource value may echo what the client read back: its read-only attributes (id,
      // meta, a user's groups) are ignored, as in a POST or PUT body (RFC 7643 §2.2). A path that
      // names one is still refused below (mutability).
      if (isReadOnlyAttribute(parsed)) continue;
      applyPath(doc, op, parsed, value, unassigned, members);
    }
    return;
  }
  if (op !== "remove" && raw.value === undefined) {
    throw new BadRequestError(`"${op}" of "${raw.path}" needs a "value"`, "invalidValue");
  }
  applyPath(doc, op, parsePatchPath(raw.path, table), raw.value, unassigned, members);
}

function isReadOnlyAttribute(path: PatchPath): boolean {
  const t = path.target;
  return t.urn === undefined && t.def?.mutability === "readOnly";
}

/**
 * The required attribute (a user's userName, a group's displayName) this operation removes or
 * leaves unassigned (set to null, RFC 7643 §2.5), if any.
 */
function unassignsRequired(op: Op, path: PatchPath, value: Json | undefined): string | undefined {
  const t = path.target;
  if (t.urn !== undefined || t.def?.required !== true || t.sub !== undefined || path.filter) return undefined;
  return op === "remove" || value === null ? t.def.name : undefined;
}

/**
 * RFC 7644 §3.5.2.2: a required attribute an operation removed or unassigned is a `mutability`
 * error, unless a later operation of the same PATCH gave it a value again (a rename written as a
 * remove and an add: the PATCH applies as a whole). A value of the wrong kind (an empty string) is
 * left to the validation of the result (invalidValue).
 */
function refuseUnassignedRequired(doc: JsonObject, unassigned: ReadonlySet<string>): void {
  for (const name of unassigned) {
    const key = findKey(doc, name);
    if (key === undefined || doc[key] === null) {
      throw new BadRequestError(`Attribute "${name}" is required and cannot be removed`, "mutability");
    }
  }
}

function applyPath(
  doc: JsonObject,
  op: Op,
  path: PatchPath,
  value: Json | undefined,
  unassigned: Set<string>,
  members?: MembershipAccumulator,
) {
  const t = path.target;
  if (t.urn === undefined) {
    if (members && t.attr === "members") return members.apply(op, path, value);
    if (t.attr === "schemas" || t.def?.mutability === "writeOnly") return; // password: accepted, never kept
  }
  if (isReadOnlyAttribute(path)) {
    throw new BadRequestError(`Attribute "${t.attr}" is read-only`, "mutability");
  }
  const required = unassignsRequired(op, path, value);
  if (required !== undefined) unassigned.add(required);
  let container = doc;
  if (t.urn !== undefined) {
    const key = findKey(doc, t.urn);
    const ext = key === undefined ? undefined : doc[key];
    if (key !== undefined && key !== t.urn) delete doc[key];
    if (isJsonObject(ext)) container = ext;
    else if (op === "remove") return;
    else container = {};
    doc[t.urn] = container;
    if (t.attr === "") {
      // An extension set to null is unassigned (RFC 7643 §2.5), as `name` set to null is.
      if (op === "remove" || value === null) delete doc[t.urn];
      else if (!isJsonObject(value))
        throw new BadRequestError(`"${t.urn}" needs an object value`, "invalidValue");
      else
        for (const [k, v] of Object.entries(value))
          applyPath(doc, op, parsePatchPath(`${t.urn}:${k}`, EMPTY), v, unassigned);
      return;
    }
  }
  const label = t.urn ? `${t.urn}:${t.attr}` : t.attr;
  const existingKey = findKey(container, t.attr);
  const current = existingKey === undefined ? undefined : container[existingKey];
  if (existingKey !== undefined && existingKey !== t.attr) delete container[existingKey];
  const next = path.filter
    ? applyFiltered(op, path, current, value, label)
    : applyPlain(op, t.def, t.sub, t.subDef, current, value, label);
  if (next === undefined) delete container[t.attr];
  else container[t.attr] = next;
}

/** add/replace/remove on `attr` or `attr.sub` (RFC 7644 §3.5.2.1-3). Returns the new value. */
function applyPlain(
  op: Op,
  def: AttrDef | undefined,
  sub: string | undefined,
  subDef: AttrDef | undefined,
  current: Json | undefined,
  value: Json | undefined,
  label: string,
): Json | undefined {
  if (sub !== undefined) {
    // name.givenName; on a multi-valued attribute (emails.type) it applies to every element.
    const setSub = (el: JsonObject): JsonObject => {
      const out = { ...el };
      const key = findKey(out, sub);
      if (key !== undefined) delete out[key];
      const v = op === "remove" ? undefined : canonicalValue(subDef, value, `${label}.${sub}`);
      if (v !== undefined) out[sub] = v;
      return out;
    };
    if (Array.isArray(current)) return current.map((el) => (isJsonObject(el) ? setSub(el) : el));
    if (op === "remove" && !isJsonObject(current)) return current;
    const updated = setSub(isJsonObject(current) ? current : {});
    return Object.keys(updated).length === 0 ? undefined : updated;
  }
  if (op === "remove") {
    if (value === undefined || value === null || !Array.isArray(current)) return undefined;
    const drop = (Array.isArray(value) ? value : [value]).map((v) => canonicalValue(def, v, label));
    const gone = drop.flatMap((v) => (Array.isArray(v) ? v : v === undefined ? [] : [v]));
    const kept = current.filter((el) => !gone.some((g) => sameElement(el, g, def)));
    return kept.length === 0 ? undefined : kept;
  }
  if (def?.type === "complex" && !def.multiValued && def.name !== "manager") {
    const given = Array.isArray(value) && value.length === 1 ? value[0] : value;
    if (isJsonObject(given) && isJsonObject(current)) return mergeComplex(def, current, given, label);
  }
  // An attribute no schema describes that holds an object (a custom extension's complex one) is
  // complex: an object value sets the sub-attributes it names, as for `name` (RFC 7644 §3.5.2.3).
  // Given to an attribute without a value, its null sub-attributes are unassigned all the same.
  if (!def && isJsonObject(value) && (isJsonObject(current) || current === undefined || current === null))
    return mergeComplex(undefined, isJsonObject(current) ? current : {}, value, label);
  const v = canonicalValue(def, value, label);
  // §3.5.2.1: an add adds values; [] or null adds none and leaves the attribute as it is. A list no
  // schema describes (a custom extension's) is set by an add instead: Entra ID sends the whole new
  // list of a multi-valued custom attribute as an Add, and never a Remove of the values dropped.
  if (def?.multiValued && op === "add" && v === undefined) return current;
  if (def?.multiValued && op === "add" && Array.isArray(v)) {
    let out = Array.isArray(current) ? [...current] : [];
    for (const el of v) {
      const at = out.findIndex((old) => sameElement(old, el, def));
      if (at >= 0)
        out[at] = isJsonObject(out[at]) && isJsonObject(el) ? { ...(out[at] as JsonObject), ...el } : el;
      else out.push(el);
      out = singlePrimary(out, at >= 0 ? at : out.length - 1);
    }
    return out;
  }
  return v;
}

/**
 * add/replace of a single-valued complex attribute that has a value (`name`): RFC 7644 §3.5.2.3,
 * the sub-attributes given replace theirs and the others are left unchanged; a sub-attribute given
 * as null is unassigned (RFC 7643 §2.5), so `{givenName: null}` clears givenName alone. (Read as a
 * whole value first, the null left `{}`, which cleared the entire name.) Returns the new value,
 * undefined when nothing is left.
 */
function mergeComplex(
  def: AttrDef | undefined,
  current: JsonObject,
  value: JsonObject,
  label: string,
): Json | undefined {
  const merged: JsonObject = { ...current };
  for (const [key, sub] of Object.entries(value)) {
    if (key === "__proto__") continue;
    const name = def?.sub?.get(key.toLowerCase())?.name ?? key;
    const old = findKey(merged, name);
    if (old !== undefined) delete merged[old];
    if (sub !== null) merged[name] = sub;
  }
  if (!def) return Object.keys(merged).length === 0 ? undefined : merged;
  return canonicalValue(def, merged, label);
}

/**
 * Ops on `attr[filter]` and `attr[filter].sub`. An attribute holding one value (a custom
 * extension's `3` or `{city}`) is filtered as a list of one, and keeps holding one value: a replace
 * of `level[value eq 3]` with 4 leaves 4, not [4].
 */
function applyFiltered(
  op: Op,
  path: PatchPath,
  current: Json | undefined,
  value: Json | undefined,
  label: string,
): Json | undefined {
  const next = applyFilteredList(op, path, current, value, label);
  const single = current !== undefined && current !== null && !Array.isArray(current);
  return single && Array.isArray(next) && next.length === 1 ? next[0] : next;
}

function applyFilteredList(
  op: Op,
  path: PatchPath,
  current: Json | undefined,
  value: Json | undefined,
  label: string,
): Json | undefined {
  // Some clients wrap the element of a filtered add/replace in an array of one.
  if (path.filterSub === undefined && Array.isArray(value) && value.length === 1 && isJsonObject(value[0])) {
    value = value[0];
  }
  const def = path.target.def;
  const table: AttrTable = def?.sub ?? EMPTY;
  const list: Json[] = Array.isArray(current)
    ? [...current]
    : current === undefined || current === null
      ? []
      : [current];
  const hits: number[] = [];
  list.forEach((el, i) => {
    // An element of a list of plain values (a custom extension's ["a", "b"]) is its `value`: the
    // filter `tags[value eq "a"]` selects "a" (RFC 7644 §3.5.2.2: the values matched are removed).
    const element = isJsonObject(el) ? el : el === null ? undefined : { value: el };
    if (element && matchesFilterWithin(path.filter!, element, table)) hits.push(i);
  });
  const sub = path.filterSub;
  if (sub?.toLowerCase() === "value" && hits.length > 0 && hits.every((i) => !isJsonObject(list[i]))) {
    // `.value` of a plain value the filter selects is the value itself (`tags[value eq "a"].value`):
    // removed (or replaced by null) it goes; replaced by a plain value, that takes its place.
    const { filterSub: _sub, filterSubDef: _subDef, ...element } = path;
    if (op === "remove" || value === null)
      return applyFilteredList("remove", element, current, undefined, label);
    if (value !== undefined && !isJsonObject(value) && !Array.isArray(value))
      return applyFilteredList(op, element, current, value, label);
  }
  const subLabel = `${label}${sub ? `.${sub}` : ""}`;
  const elementDef: AttrDef | undefined = def ? { ...def, multiValued: false } : undefined;
  if (op === "remove") {
    if (sub === undefined) {
      const hitSet = new Set(hits);
      const kept = list.filter((_, i) => !hitSet.has(i));
      return kept.length === 0 ? undefined : kept;
    }
    if (hits.length === 0) return current; // nothing matched: nothing changes (not even [] for absent)
    for (const i of hits)
      list[i] = applyPlain("remove", elementDef, sub, path.filterSubDef, list[i], undefined, subLabel) ?? {};
    return withoutHollow(list, hits, def);
  }
  if (hits.length === 0) {
    // Clearing a sub-attribute of an element that does not exist leaves nothing to create (an
    // element holding only the filter's `type` is no email).
    if (sub !== undefined && (value === null || value === undefined))
      return list.length === 0 ? undefined : list;
    const base = elementFromFilter(path.filter!);
    if (!base) {
      throw new BadRequestError(
        `No element of "${label}" matches the filter and none can be created from it`,
        "noTarget",
      );
    }
    const created =
      sub !== undefined
        ? { ...base, [sub]: value ?? null }
        : isJsonObject(value)
          ? { ...base, ...value }
          : undefined;
    if (!created) throw new BadRequestError(`"${label}" needs an object value`, "invalidValue");
    const el = canonicalValue(elementDef, created, label);
    if (el === undefined) return list.length === 0 ? undefined : list;
    list.push(el);
    return singlePrimary(list, list.length - 1);
  }
  let out = list;
  for (const i of hits) {
    if (sub !== undefined) {
      out[i] = applyPlain("replace", elementDef, sub, path.filterSubDef, out[i], value, subLabel) ?? {};
    } else {
      if (!isJsonObject(out[i]) && value !== null && value !== undefined && !Array.isArray(value)) {
        // A plain value replaced by the one given (an object too: a plain value has no
        // sub-attributes to keep, and spread into an add's merge, "abc" became {0: "a", ...}).
        out[i] = value;
        continue;
      }
      if (!isJsonObject(value)) throw new BadRequestError(`"${label}" needs an object value`, "invalidValue");
      // Add and replace alike: the element is a complex value, whose sub-attributes the value does
      // not name are left as they are (RFC 7644 §3.5.2.3; a work email replaced by `{value}` keeps
      // its `type`, so the filter still finds it, and its `primary`). A sub-attribute named with
      // null is cleared. Names match in any case (RFC 7643 §2.1): `{"Primary": null}` clears `primary`.
      out[i] = mergeComplex(elementDef, out[i] as JsonObject, value, label) ?? {};
    }
    out = singlePrimary(out, i);
  }
  return sub !== undefined && (value === null || value === undefined) ? withoutHollow(out, hits, def) : out;
}
