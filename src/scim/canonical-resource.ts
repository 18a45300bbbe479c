import { BadRequestError } from "../errors.js";
import {
  type AttrDef,
  type AttrPath,
  type AttrTable,
  GROUP_ATTRS,
  USER_ATTRS,
  extensionAttrs,
  getKey,
  isCoreUrn,
  isForeignCoreUrn,
  knownExtensionUrn,
  parseAttrPath,
} from "./attribute-schema.js";
import { coerceBoolean, isJsonObject, listInList, normalizeManager } from "./dialects.js";
import { externalIdText } from "./external-id-text.js";
import { dropHollowElements } from "./multi-valued.js";
import {
  type Json,
  type JsonObject,
  SCHEMA_GROUP,
  SCHEMA_USER,
  type ScimGroup,
  type ScimUser,
} from "./scim-types.js";

/**
 * Turns a POST/PUT body (or a patched document) into the canonical stored form (RFC 7643):
 * attribute names in schema case (§2.1 names are case-insensitive), values checked against the
 * attribute's type (§2.3), read-only attributes ignored (§2.2 "mutability": id, meta, groups),
 * `password` accepted but never kept (§4.1.1 writeOnly), null treated as unassigned (§2.5),
 * extensions under their URN key (§3.3), dialect quirks normalised via dialects.ts.
 */

function invalid(message: string): never {
  throw new BadRequestError(message, "invalidValue");
}

/**
 * The Unicode control characters (general category Cc): C0 (U+0000-U+001F), DEL (U+007F) and C1
 * (U+0080-U+009F, e.g. U+0085 NEXT LINE, which String#trim does not remove). Format characters
 * (Cf: U+200B zero-width space, U+200D, U+FEFF inside a name, bidi controls U+202A-U+202E, ...)
 * are not control characters and are accepted.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const NAME_NEEDS_CARE = /[\u0000-\u001f\u007f-\u009f]|^\s|\s$/;

function refuseControl(attr: string): never {
  invalid(`Attribute "${attr}" must not contain control characters (U+0000-U+001F, U+007F-U+009F)`);
}

/**
 * A userName or group displayName as kept: surrounding whitespace trimmed, so " ada@x.com " is
 * the user "ada@x.com" (and a second create of it a 409), and control characters (NUL, tabs,
 * line breaks, DEL, C1 such as U+0085, ...) refused anywhere, since no admin types them and they
 * make look-alike names. On the create path: one regex test and no allocation when there is
 * nothing to do.
 */
export function cleanName(value: string, attr: string): string {
  if (!NAME_NEEDS_CARE.test(value)) return value;
  if (CONTROL.test(value)) refuseControl(attr);
  return value.trim();
}

/** externalId is opaque and caseExact (RFC 7643 §3.1): never trimmed, but control characters are refused. */
export function checkOpaqueId(value: string, attr: string): void {
  if (CONTROL.test(value)) refuseControl(attr);
}

/**
 * Name and externalId hygiene of a built document: an empty or whitespace-only externalId is none
 * (externalIdText) and is dropped. `stored` is the resource being changed (PATCH):
 * a value it already holds is kept as it is, so a change to other attributes neither renames a
 * user stored before these rules nor fails on it.
 */
function cleanKeys(doc: JsonObject, nameAttr: "userName" | "displayName", stored?: JsonObject): void {
  const name = doc[nameAttr];
  if (typeof name === "string" && name !== stored?.[nameAttr]) doc[nameAttr] = cleanName(name, nameAttr);
  const ext = doc.externalId;
  if (typeof ext === "string" && externalIdText(ext) === undefined) delete doc.externalId;
  else if (typeof ext === "string" && ext !== stored?.externalId) checkOpaqueId(ext, "externalId");
}

/**
 * Canonicalises one attribute value against its definition; undefined means "unassigned". A list
 * holding one list (keycloak-scim's `[["a", "b"]]`) is read as that list (listInList), as a PATCH
 * by path reads it, so POST, PUT and PATCH store the same value.
 */
export function canonicalValue(
  def: AttrDef | undefined,
  sent: Json | undefined,
  name: string,
): Json | undefined {
  if (sent === undefined || sent === null) return undefined;
  const value = listInList(sent);
  if (!def) return value;
  if (def.name === "manager" && def.type === "complex") return normalizeManager(value) ?? undefined;
  if (def.multiValued) {
    const list = Array.isArray(value) ? value : [value];
    const out: Json[] = [];
    for (const el of list) {
      const v = canonicalSingle(def, el, name);
      if (v !== undefined) out.push(v);
    }
    return out.length === 0 ? undefined : onePrimary(out);
  }
  if (Array.isArray(value)) {
    if (value.length === 1) return canonicalSingle(def, value[0]!, name);
    invalid(`Attribute "${name}" is single-valued but got an array`);
  }
  return canonicalSingle(def, value, name);
}

/**
 * RFC 7643 §2.4: "primary" is true for at most one element. When several are flagged, the last one
 * keeps it and the others get `primary: false`, as a PATCH add decides (the one written last wins).
 */
function onePrimary(list: Json[]): Json[] {
  let last = -1;
  let count = 0;
  list.forEach((el, i) => {
    if (isJsonObject(el) && el.primary === true) {
      last = i;
      count += 1;
    }
  });
  if (count < 2) return list;
  return list.map((el, i) =>
    i !== last && isJsonObject(el) && el.primary === true ? { ...el, primary: false } : el,
  );
}

function canonicalSingle(def: AttrDef, value: Json, name: string): Json | undefined {
  if (value === null) return undefined;
  switch (def.type) {
    case "complex": {
      // A multi-valued complex attribute given as plain strings (`emails: ["a@x"]`) means values.
      const obj = isJsonObject(value)
        ? value
        : typeof value === "string" && def.multiValued
          ? { value }
          : undefined;
      if (!obj) invalid(`Attribute "${name}" must be an object`);
      const out: JsonObject = {};
      for (const [key, sv] of Object.entries(obj)) {
        if (key === "__proto__") continue;
        const subDef = def.sub?.get(key.toLowerCase());
        if (subDef?.mutability === "readOnly" && def.mutability !== "readOnly") continue;
        const canonical = canonicalValue(subDef, sv, `${name}.${subDef?.name ?? key}`);
        if (canonical !== undefined) out[subDef?.name ?? key] = canonical;
      }
      return Object.keys(out).length === 0 ? undefined : out;
    }
    case "boolean": {
      const b = coerceBoolean(value);
      if (b === undefined) invalid(`Attribute "${name}" must be a boolean`);
      return b;
    }
    case "integer":
    case "decimal":
      if (typeof value !== "number" || (def.type === "integer" && !Number.isInteger(value))) {
        invalid(`Attribute "${name}" must be ${def.type === "integer" ? "an integer" : "a number"}`);
      }
      return value;
    case "dateTime":
      if (typeof value !== "string" || Number.isNaN(Date.parse(value))) {
        invalid(`Attribute "${name}" must be a dateTime (RFC 7643 §2.3.5)`);
      }
      return value;
    default:
      if (typeof value !== "string") invalid(`Attribute "${name}" must be a string`);
      return value;
  }
}

type Kind = "User" | "Group";

interface Builder {
  core: JsonObject;
  /** Extension objects by URN, in first-seen order. */
  ext: Map<string, JsonObject>;
}

/** Sets one (possibly dotted or URN-prefixed) attribute of the document being built. */
export function assignPath(b: Builder, p: AttrPath, value: Json | undefined, table: AttrTable): void {
  if (p.urn !== undefined && p.attr === "") {
    // RFC 7643 §2.5: a null extension is unassigned, as any other null attribute is: left out of
    // the document, as an extension the body does not name.
    if (value === null || value === undefined) return;
    if (!isJsonObject(value)) invalid(`Extension "${p.urn}" must be an object`);
    for (const [key, v] of Object.entries(value)) {
      const sub = parseAttrPath(`${p.urn}:${key}`, table);
      if (!sub) invalid(`"${key}" is not a valid attribute name in "${p.urn}"`);
      assignPath(b, sub, v, table);
    }
    return;
  }
  const top = p.def;
  if (p.urn === undefined && top && (top.mutability === "readOnly" || top.mutability === "writeOnly")) return;
  if (p.urn === undefined && (p.attr === "schemas" || p.attr === "meta")) return;
  let target = b.core;
  if (p.urn !== undefined) {
    target = b.ext.get(p.urn) ?? {};
    b.ext.set(p.urn, target);
  }
  const label = p.urn ? `${p.urn}:${p.attr}` : p.attr;
  if (p.sub === undefined) {
    const v = canonicalValue(p.def, value, label);
    if (v === undefined) delete target[p.attr];
    else target[p.attr] = v;
    return;
  }
  const parent = target[p.attr];
  const obj: JsonObject = isJsonObject(parent) ? parent : {};
  const v = canonicalValue(p.subDef, value, `${label}.${p.sub}`);
  if (v === undefined) delete obj[p.sub];
  else obj[p.sub] = v;
  if (Object.keys(obj).length > 0) target[p.attr] = obj;
  else delete target[p.attr];
}

/** An unknown extension's attributes, kept as sent but for a list holding one list (listInList). */
function unwrapLists(ext: JsonObject): JsonObject {
  // fromEntries defines each key, as a spread does (a "__proto__" key stays a key, not a prototype).
  return Object.fromEntries(Object.entries(ext).map(([key, value]) => [key, listInList(value)]));
}

/**
 * A body whose `schemas` names the other resource type's core schema and not its own is that other
 * type's resource sent to the wrong endpoint (a user POSTed to /Groups): refused, or it became a
 * group named after the person, its userName and emails kept as the group's unknown attributes
 * (RFC 7643 §3: `schemas` names the schemas the resource's attributes are of). A body without
 * `schemas`, or naming both, is read as the endpoint's type, as before.
 */
function refuseOtherType(schemas: unknown[] | null, table: AttrTable, kind: Kind): void {
  if (schemas === null) return;
  const urns = schemas.filter((u): u is string => typeof u === "string");
  const own = kind === "User" ? SCHEMA_USER : SCHEMA_GROUP;
  if (urns.some((u) => u.toLowerCase() === own.toLowerCase())) return;
  const other = urns.find((u) => isForeignCoreUrn(u, table));
  if (other !== undefined)
    invalid(
      `"schemas" names ${other} and not ${own}: the body is not a ${kind} (sent to the wrong endpoint?)`,
    );
}

function build(body: unknown, kind: Kind): JsonObject {
  if (!isJsonObject(body))
    throw new BadRequestError("The request body must be a JSON object", "invalidSyntax");
  const table = kind === "User" ? USER_ATTRS : GROUP_ATTRS;
  const b: Builder = { core: {}, ext: new Map() };
  const visit = (obj: JsonObject) => {
    for (const [key, value] of Object.entries(obj)) {
      if (key.toLowerCase() === "schemas") {
        if (value !== null && !Array.isArray(value)) {
          throw new BadRequestError('"schemas" must be an array of URIs', "invalidSyntax");
        }
        if (obj === body) refuseOtherType(value, table, kind);
        continue;
      }
      if (isCoreUrn(key)) {
        if (isForeignCoreUrn(key, table)) invalid(`"${key}" is not a schema of a ${kind}`);
        if (value === null) continue; // RFC 7643 §2.5: null assigns nothing
        if (!isJsonObject(value)) invalid(`"${key}" must be an object`);
        visit(value);
        continue;
      }
      const p = parseAttrPath(key, table);
      if (!p) invalid(`"${key}" is not a valid attribute name`);
      if (p.urn !== undefined && p.attr !== "" && !knownExtensionUrn(p.urn) && isJsonObject(value)) {
        // An object under an unknown URN is that whole extension (RFC 7643 §3.3).
        const ext = b.ext.get(key) ?? {};
        b.ext.set(key, { ...ext, ...unwrapLists(value) });
        continue;
      }
      if (p.urn !== undefined && p.attr === "" && !extensionAttrs(p.urn) && isJsonObject(value)) {
        b.ext.set(p.urn, { ...(b.ext.get(p.urn) ?? {}), ...unwrapLists(value) });
        continue;
      }
      assignPath(b, p, value, table);
    }
  };
  visit(body);
  const core = kind === "User" ? SCHEMA_USER : SCHEMA_GROUP;
  const out: JsonObject = { schemas: [core] };
  Object.assign(out, b.core);
  const schemas = out.schemas as string[];
  for (const [urn, obj] of b.ext) {
    if (Object.keys(obj).length === 0) continue;
    out[urn] = obj;
    schemas.push(urn);
  }
  return out;
}

/**
 * RFC 7643 §4.1: a User needs a non-empty userName; `active` defaults to true (a replace that does
 * not state it keeps the user's: statesAttribute). userName is trimmed and refused with control
 * characters, externalId refused with them (cleanName, checkOpaqueId); `stored` (PATCH) exempts the
 * values the user already has. Elements of multi-valued attributes without their value (an email
 * whose `value` is null) are left out (dropHollowElements).
 */
export function toCanonicalUser(body: unknown, stored?: JsonObject): Omit<ScimUser, "id"> {
  const doc = build(body, "User");
  if (typeof doc.userName !== "string" || doc.userName.trim() === "") {
    invalid('Attribute "userName" is required and must be a non-empty string');
  }
  cleanKeys(doc, "userName", stored);
  dropHollowElements(doc, USER_ATTRS);
  const userName = doc.userName;
  if (doc.active === undefined) doc.active = true;
  const ordered: JsonObject = { schemas: doc.schemas!, userName, active: doc.active };
  return Object.assign(ordered, doc) as Omit<ScimUser, "id">;
}

/**
 * Whether a body states core attribute `attr` (as named in the schema): a key of that name in any
 * case, bare, URN-qualified or inside a core-URN object, that is not null (`[]` states "none"). A
 * PUT or upsert that does not state `active` or `members` leaves them as they are: RFC 7644 §3.5.1
 * lets a service provider take an omitted readWrite attribute as not asserted, and a profile update
 * must neither reactivate a leaver nor take anyone out of a group.
 */
export function statesAttribute(body: unknown, attr: string, kind: Kind): boolean {
  if (!isJsonObject(body)) return false;
  const core = (kind === "User" ? SCHEMA_USER : SCHEMA_GROUP).toLowerCase();
  const name = attr.toLowerCase();
  return Object.entries(body).some(([key, value]) => {
    const lower = key.toLowerCase();
    if (lower === core) return statesAttribute(value, attr, kind);
    return (lower === name || lower === `${core}:${name}`) && value !== null && value !== undefined;
  });
}

/**
 * RFC 7643 §4.2: a Group needs a displayName; `members` (`[{value, display?, $ref?, type?}]`)
 * come back as a list of ids (first occurrence wins) and are not kept in the document.
 * displayName and externalId get the hygiene of a userName and a user's externalId.
 */
export function toCanonicalGroup(
  body: unknown,
  stored?: JsonObject,
): { resource: Omit<ScimGroup, "id">; members: string[] } {
  const doc = build(body, "Group");
  const displayName = doc.displayName;
  if (typeof displayName !== "string" || displayName.trim() === "") {
    invalid('Attribute "displayName" is required and must be a non-empty string');
  }
  cleanKeys(doc, "displayName", stored);
  const members = memberIds(doc.members);
  delete doc.members;
  return { resource: doc as Omit<ScimGroup, "id">, members };
}

/**
 * Ids of `[{value}]` members, without duplicates, in order. `value` is matched in any case
 * (RFC 7643 §2.1), as a POST body's sub-attributes are: `{"Value": id}` names the member too.
 */
export function memberIds(members: Json | undefined): string[] {
  if (members === undefined || members === null) return [];
  const list = Array.isArray(members) ? members : [members];
  const seen = new Set<string>();
  for (const m of list) {
    const value = isJsonObject(m) ? getKey(m, "value") : m;
    if (typeof value !== "string" || value === "")
      invalid('Each of "members" needs a non-empty "value" (the member id)');
    seen.add(value);
  }
  return [...seen];
}
