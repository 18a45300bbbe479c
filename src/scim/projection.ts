import {
  type AttrPath,
  type AttrTable,
  coreAttrsOf,
  findKey,
  getKey,
  parseAttrPath,
} from "./attribute-schema.js";
import { isJsonObject } from "./dialects.js";
import type { Json, JsonObject } from "./scim-types.js";

export interface ProjectionOptions {
  /** Names to return (RFC 7644 §3.9 `attributes`); a comma-separated string is split. */
  attributes?: readonly string[] | string;
  /** Names to leave out (`excludedAttributes`); ignored when `attributes` is given. */
  excludedAttributes?: readonly string[] | string;
}

/** RFC 7643 §7 `returned: "always"`: never filtered out. `password` is `returned: "never"`. */
const ALWAYS = new Set(["id", "schemas"]);
const NEVER = new Set(["password"]);

function names(v: readonly string[] | string | undefined): string[] {
  const list = typeof v === "string" ? [v] : (v ?? []);
  return list
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * Applies `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9) to a rendered resource.
 * Names are case-insensitive, may carry a schema URN prefix (`urn:...:User:userName`, or a whole
 * extension `urn:...:enterprise:2.0:User`) and a sub-attribute (`name.givenName`, `emails.value`);
 * they resolve against the resource's own type (ownCoreAttrs).
 * Returns a new object; the input is not changed.
 */
export function projectResource(resource: JsonObject, options: ProjectionOptions = {}): JsonObject {
  const table = ownCoreAttrs(resource);
  const asked = names(options.attributes);
  const wanted = asked.map((n) => parseAttrPath(n, table)).filter((p) => p !== undefined);
  const excluded = names(options.excludedAttributes)
    .map((n) => parseAttrPath(n, table))
    .filter((p) => p !== undefined);
  let out: JsonObject;
  // Names that name nothing of this resource (another type's core URN) still ask for a selection.
  if (asked.length > 0) {
    const picked: JsonObject = {};
    for (const p of wanted) pick(resource, picked, p);
    out = {};
    for (const key of Object.keys(resource)) {
      if (ALWAYS.has(key)) out[key] = resource[key]!;
      else if (picked[key] !== undefined) {
        const kept = withoutEmpty(picked[key]!, 2);
        if (kept !== undefined) out[key] = kept;
      }
    }
  } else {
    out = { ...resource };
    for (const p of excluded) drop(out, p);
  }
  for (const key of Object.keys(out)) if (NEVER.has(key.toLowerCase())) delete out[key];
  return out;
}

/**
 * The core attributes of the resource's type (coreAttrsOf), told by `meta.resourceType`: names
 * qualified by the other type's core schema URN name nothing of it (RFC 7643 §3: a Group has no
 * attribute of the User schema), so `attributes=urn:...:core:2.0:User:displayName` returns no
 * group's displayName, as a PATCH path or a filter naming it is refused. A resource without a
 * known type resolves against both.
 */
function ownCoreAttrs(resource: JsonObject): AttrTable {
  const meta = getKey(resource, "meta");
  const type = isJsonObject(meta) ? meta.resourceType : undefined;
  return coreAttrsOf(type === "User" || type === "Group" ? type : undefined);
}

/**
 * A picked value without what picking sub-attributes emptied (RFC 7643 §2.5: an unassigned value
 * is not returned): `name` when it has none of the named sub-attributes, an element of `emails`
 * holding none of them, an attribute whose elements all went. `depth` 2 reaches an extension's
 * attributes; undefined when nothing is left. Values as stored are never empty, so only what
 * pick() emptied goes.
 */
function withoutEmpty(value: Json, depth: number): Json | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return value;
    const kept = value.filter((el) => !isJsonObject(el) || Object.keys(el).length > 0);
    return kept.length === 0 ? undefined : kept;
  }
  if (!isJsonObject(value)) return value;
  if (depth > 1) {
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      const kept = withoutEmpty(v, depth - 1);
      if (kept !== undefined) out[key] = kept;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return Object.keys(value).length === 0 ? undefined : value;
}

function pick(src: JsonObject, dst: JsonObject, p: AttrPath): void {
  let from = src;
  let to = dst;
  if (p.urn !== undefined) {
    const key = findKey(src, p.urn);
    const ext = key === undefined ? undefined : src[key];
    if (key === undefined || !isJsonObject(ext)) return;
    if (p.attr === "") {
      dst[key] = ext;
      return;
    }
    from = ext;
    to = isJsonObject(dst[key]) ? (dst[key] as JsonObject) : {};
    dst[key] = to;
  }
  const key = findKey(from, p.attr);
  if (key === undefined) return;
  const value = from[key]!;
  if (p.sub === undefined) {
    to[key] = value;
    return;
  }
  const sub = p.sub;
  const pickSub = (el: Json, prev: Json | undefined): Json => {
    if (!isJsonObject(el)) return el;
    const subKey = findKey(el, sub);
    const base = isJsonObject(prev) ? prev : {};
    return subKey === undefined ? base : { ...base, [subKey]: el[subKey]! };
  };
  const prev = to[key];
  if (Array.isArray(value)) {
    to[key] = value.map((el, i) => pickSub(el, Array.isArray(prev) ? prev[i] : undefined));
  } else if (isJsonObject(value)) {
    to[key] = pickSub(value, prev);
  }
}

function drop(obj: JsonObject, p: AttrPath): void {
  if (p.urn === undefined) {
    dropAttr(obj, p);
    return;
  }
  const key = findKey(obj, p.urn);
  if (key === undefined || !isJsonObject(obj[key])) return;
  if (p.attr === "") {
    delete obj[key];
    return;
  }
  const ext = { ...(obj[key] as JsonObject) };
  dropAttr(ext, p);
  // An extension whose every attribute was excluded is left out, not returned as {}.
  if (Object.keys(ext).length === 0) delete obj[key];
  else obj[key] = ext;
}

/**
 * Removes `p.attr`, or its sub-attribute `p.sub` from the value or from each element. A complex
 * value emptied that way is left out, as is an emptied element of a multi-valued one (and the
 * attribute, when no element keeps anything): excluding what it held leaves nothing to return.
 */
function dropAttr(target: JsonObject, p: AttrPath): void {
  const key = findKey(target, p.attr);
  if (key === undefined || (p.urn === undefined && ALWAYS.has(key))) return;
  if (p.sub === undefined) {
    delete target[key];
    return;
  }
  const sub = p.sub;
  const dropSub = (el: Json): Json => {
    if (!isJsonObject(el)) return el;
    const subKey = findKey(el, sub);
    if (subKey === undefined) return el;
    const { [subKey]: _gone, ...rest } = el;
    return rest;
  };
  const isEmptied = (el: Json) => isJsonObject(el) && Object.keys(el).length === 0;
  const value = target[key]!;
  const next = Array.isArray(value) ? value.map(dropSub).filter((el) => !isEmptied(el)) : dropSub(value);
  if (
    isEmptied(next) ||
    (Array.isArray(next) && next.length === 0 && Array.isArray(value) && value.length > 0)
  )
    delete target[key];
  else target[key] = next;
}
