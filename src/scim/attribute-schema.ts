import SCIMMY from "scimmy";
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER } from "./scim-types.js";

/**
 * The attribute characteristics of RFC 7643 §2.2 for the core User (§4.1), EnterpriseUser (§4.3)
 * and Group (§4.2) schemas, plus the common attributes of §3.1 (id, externalId, meta). Derived once
 * at module load from scimmy's schema definitions; names resolve case-insensitively (§2.1).
 */
export type AttrType =
  | "string"
  | "boolean"
  | "decimal"
  | "integer"
  | "dateTime"
  | "reference"
  | "binary"
  | "complex";

export interface AttrDef {
  name: string;
  type: AttrType;
  multiValued: boolean;
  caseExact: boolean;
  required: boolean;
  mutability: "readOnly" | "readWrite" | "immutable" | "writeOnly";
  returned: "always" | "never" | "default" | "request";
  /** Sub-attributes keyed by lower-case name. */
  sub?: ReadonlyMap<string, AttrDef>;
}

export type AttrTable = ReadonlyMap<string, AttrDef>;

interface DescribedAttr {
  name: string;
  type: AttrType;
  multiValued?: boolean;
  caseExact?: boolean;
  required?: boolean;
  mutability?: AttrDef["mutability"];
  returned?: AttrDef["returned"];
  subAttributes?: DescribedAttr[];
}

function toDef(a: DescribedAttr): AttrDef {
  const def: AttrDef = {
    name: a.name,
    type: a.type,
    multiValued: a.multiValued === true,
    caseExact: a.caseExact === true,
    required: a.required === true,
    mutability: a.mutability ?? "readWrite",
    returned: a.returned ?? "default",
  };
  if (a.subAttributes) def.sub = toTable(a.subAttributes);
  return def;
}

function toTable(attrs: DescribedAttr[]): Map<string, AttrDef> {
  return new Map(attrs.map((a) => [a.name.toLowerCase(), toDef(a)]));
}

type DescribableSchema = { definition: { describe(base?: string): unknown } };

function describeAttrs(schema: DescribableSchema): DescribedAttr[] {
  const described = JSON.parse(JSON.stringify(schema.definition.describe("/Schemas"))) as {
    attributes: DescribedAttr[];
  };
  return described.attributes;
}

const str = (name: string, caseExact: boolean, extra: Partial<DescribedAttr> = {}): DescribedAttr => ({
  name,
  type: "string",
  caseExact,
  ...extra,
});

/** RFC 7643 §3.1: id and externalId are caseExact; meta is read-only and server-computed. */
const COMMON: DescribedAttr[] = [
  str("id", true, { mutability: "readOnly", returned: "always" }),
  str("externalId", true),
  {
    name: "meta",
    type: "complex",
    mutability: "readOnly",
    subAttributes: [
      str("resourceType", true, { mutability: "readOnly" }),
      { name: "created", type: "dateTime", mutability: "readOnly" },
      { name: "lastModified", type: "dateTime", mutability: "readOnly" },
      { name: "location", type: "reference", caseExact: true, mutability: "readOnly" },
      str("version", true, { mutability: "readOnly" }),
    ],
  },
  { name: "schemas", type: "reference", multiValued: true, caseExact: true, returned: "always" },
];

export const COMMON_ATTRS: AttrTable = toTable(COMMON);
export const USER_ATTRS: AttrTable = new Map([
  ...toTable(COMMON),
  ...toTable(describeAttrs(SCIMMY.Schemas.User)),
]);
export const GROUP_ATTRS: AttrTable = new Map([
  ...toTable(COMMON),
  ...toTable(describeAttrs(SCIMMY.Schemas.Group)),
]);
export const ENTERPRISE_ATTRS: AttrTable = toTable(describeAttrs(SCIMMY.Schemas.EnterpriseUser));
/** Core attributes of either resource type, for filters and projection that do not know the type. */
export const ANY_CORE_ATTRS: AttrTable = new Map([...GROUP_ATTRS, ...USER_ATTRS]);

const CORE_URNS = new Map([
  [SCHEMA_USER.toLowerCase(), SCHEMA_USER],
  [SCHEMA_GROUP.toLowerCase(), SCHEMA_GROUP],
]);
/**
 * SCIM 1.1's name of the enterprise extension. OneLogin's documented SCIM JSON templates still use
 * it (with the 1.1 `manager.managerId`: normalizeManager), and its SCIM v2 connectors send them as
 * pasted; it is read as the 2.0 extension (RFC 7643 §4.3), under whose URN the user is kept.
 */
const ENTERPRISE_USER_SCIM_1 = "urn:scim:schemas:extension:enterprise:1.0";
/**
 * The name OneLogin's SCIM v2 templates give the enterprise extension: the 2.0 version without the
 * `:User` of RFC 7643 §4.3 (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`). Read as
 * that extension too; kept as an unknown one, its department or manager reached neither the
 * attribute mappings nor the filters that name the RFC's URN (test/conformance/onelogin-probes-n2).
 */
const ENTERPRISE_USER_ONELOGIN_2 = "urn:scim:schemas:extension:enterprise:2.0";
const EXTENSIONS = new Map<string, { urn: string; attrs: AttrTable }>([
  [SCHEMA_ENTERPRISE_USER.toLowerCase(), { urn: SCHEMA_ENTERPRISE_USER, attrs: ENTERPRISE_ATTRS }],
  [ENTERPRISE_USER_SCIM_1, { urn: SCHEMA_ENTERPRISE_USER, attrs: ENTERPRISE_ATTRS }],
  [ENTERPRISE_USER_ONELOGIN_2, { urn: SCHEMA_ENTERPRISE_USER, attrs: ENTERPRISE_ATTRS }],
]);

/** Canonical case of a known extension URN, or undefined. */
export function knownExtensionUrn(urn: string): string | undefined {
  return EXTENSIONS.get(urn.toLowerCase())?.urn;
}

export function isCoreUrn(urn: string): boolean {
  return CORE_URNS.has(urn.toLowerCase());
}

/** The core schema URN (lower case) of the resource whose own table this is. */
const OWN_CORE_URN = new Map<AttrTable, string>([
  [USER_ATTRS, SCHEMA_USER.toLowerCase()],
  [GROUP_ATTRS, SCHEMA_GROUP.toLowerCase()],
]);

/**
 * Whether `urn` is the core schema of the other resource type than the one `table` belongs to
 * (USER_ATTRS or GROUP_ATTRS): a User has no attribute of the Group schema, nor a Group of the
 * User schema (RFC 7643 §3, §4), so `urn:...:core:2.0:Group:displayName` names nothing of a User.
 * False for tables of no one resource type (ANY_CORE_ATTRS: the root search's filter and
 * projection, which serve both types).
 */
export function isForeignCoreUrn(urn: string, table: AttrTable): boolean {
  const own = OWN_CORE_URN.get(table);
  return own !== undefined && isCoreUrn(urn) && urn.toLowerCase() !== own;
}

/**
 * The core attributes names resolve against for a resource of `type`: its own table, in which the
 * other type's core schema URN names nothing (isForeignCoreUrn), or ANY_CORE_ATTRS when the type
 * is not known (the root search). Reads (filters, projection) resolve as writes do.
 */
export function coreAttrsOf(type: "User" | "Group" | undefined): AttrTable {
  return type === "User" ? USER_ATTRS : type === "Group" ? GROUP_ATTRS : ANY_CORE_ATTRS;
}

export function extensionAttrs(urn: string): AttrTable | undefined {
  return EXTENSIONS.get(urn.toLowerCase())?.attrs;
}

/** An attribute path `[urn ":"] attr ["." sub]`, names in schema case (RFC 7644 §3.10). */
export interface AttrPath {
  /** Extension schema URN; undefined for core attributes (a core URN prefix is dropped). */
  urn?: string;
  /** Empty when the path names a whole extension object (`urn:...:enterprise:2.0:User`). */
  attr: string;
  sub?: string;
  def?: AttrDef;
  subDef?: AttrDef;
}

const ATTR_NAME = /^[A-Za-z$][\w$-]*$/;
/**
 * An extension schema URN that is not known here but names a whole extension by its form: a
 * version, then the resource type, as in `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`
 * (RFC 7643 §3.3) and Entra ID's `urn:ietf:params:scim:schemas:extension:<Name>:2.0:User`. Read as
 * `<urn>:<attr>` it would be an attribute "User" of a schema "...:2.0". `...:2.0:User:group` is
 * still the attribute "group".
 */
const WHOLE_EXTENSION_URN = /^urn:.+:\d+(?:\.\d+)*:(?:User|Group)$/i;
/**
 * A schema URN whose last segment is a version (`urn:okta:custom:group:1.0`, Okta's group
 * description extension; `urn:scim:schemas:extension:<name>:1.0`, the SCIM 1.1 naming of
 * extensions): an attribute name starts with a letter (RFC 7643 §2.1 ATTRNAME), so such a URN can
 * only name a whole schema. Read as `<urn>:<attr>` it was an attribute "1.0", not a valid name, and
 * a body carrying the extension was refused whole. Segments as RFC 8141 writes them, without the
 * characters that separate names in `attributes` lists, filters and paths.
 */
const VERSIONED_URN = /^urn:[a-z0-9][a-z0-9-]*(?::[\w.~%-]+)*:\d[\w.-]*$/i;
/** Namespaces of the RFC's own schemas and messages: a URN under them is never an extension. */
const RESERVED_URN_PREFIXES = [
  "urn:ietf:params:scim:schemas:core:",
  "urn:ietf:params:scim:api:",
  "urn:scim:schemas:core:",
];
const KNOWN_URNS = [...CORE_URNS.keys(), ...EXTENSIONS.keys()];
const CACHE_LIMIT = 2000;
const parsedPaths = new WeakMap<AttrTable, Map<string, AttrPath | undefined>>();

/**
 * Splits and canonicalises an attribute path; returns undefined when it is not a valid path.
 * Results are cached per table (bounded) and shared: treat them as read-only.
 */
export function parseAttrPath(raw: string, core: AttrTable = ANY_CORE_ATTRS): AttrPath | undefined {
  let cache = parsedPaths.get(core);
  if (!cache) {
    cache = new Map();
    parsedPaths.set(core, cache);
  }
  if (cache.has(raw)) return cache.get(raw);
  const parsed = parseUncached(raw, core);
  if (cache.size < CACHE_LIMIT) cache.set(raw, parsed);
  return parsed;
}

/**
 * A schema URN followed by "." and an attribute (`urn:...:enterprise:2.0:User.department`), as
 * Entra ID's customappsso jobs wrote extension attributes (Microsoft: "Known issues ... with SCIM
 * 2.0 protocol compliance", "Extension attributes use dot notation"): the URN of a known schema, or
 * one of the whole-extension form (WHOLE_EXTENSION_URN), then an attribute path.
 */
const DOTTED_URN = /^(urn:.+:\d+(?:\.\d+)*:(?:User|Group))\.([A-Za-z$][\w$-]*(?:\.[A-Za-z$][\w$-]*)?)$/i;

/** `<urn>.<attr>` read as `<urn>:<attr>` (DOTTED_URN); other paths as they are. */
function colonAfterUrn(raw: string): string {
  const m = DOTTED_URN.exec(raw);
  return m ? `${m[1]}:${m[2]}` : raw;
}

function parseUncached(input: string, core: AttrTable): AttrPath | undefined {
  let urn: string | undefined;
  let table: AttrTable | undefined = core;
  const raw = input.length > 4 && input.slice(0, 4).toLowerCase() === "urn:" ? colonAfterUrn(input) : input;
  let rest = raw;
  if (raw.length > 4 && raw.slice(0, 4).toLowerCase() === "urn:") {
    const lower = raw.toLowerCase();
    const ext = EXTENSIONS.get(lower);
    if (ext) return { urn: ext.urn, attr: "" };
    if (WHOLE_EXTENSION_URN.test(raw) && !isCoreUrn(raw)) return { urn: raw, attr: "" };
    if (isVersionedSchemaUrn(raw)) return { urn: raw, attr: "" };
    let split = wholeExtensionBefore(raw);
    for (const known of KNOWN_URNS) {
      if (split < 0 && lower.startsWith(`${known}:`)) split = known.length;
    }
    if (split < 0) split = raw.lastIndexOf(":");
    const prefix = raw.slice(0, split);
    rest = raw.slice(split + 1);
    if (isCoreUrn(prefix)) {
      if (isForeignCoreUrn(prefix, core)) return undefined;
      urn = undefined;
    } else {
      urn = knownExtensionUrn(prefix) ?? prefix;
      table = extensionAttrs(prefix);
    }
  }
  const dot = rest.indexOf(".");
  const attrRaw = dot < 0 ? rest : rest.slice(0, dot);
  const subRaw = dot < 0 ? undefined : rest.slice(dot + 1);
  if (!ATTR_NAME.test(attrRaw) || (subRaw !== undefined && !ATTR_NAME.test(subRaw))) return undefined;
  const def = table?.get(attrRaw.toLowerCase());
  const path: AttrPath = { attr: def?.name ?? attrRaw };
  if (urn !== undefined) path.urn = urn;
  if (def) path.def = def;
  if (subRaw !== undefined) {
    const subDef = def?.sub?.get(subRaw.toLowerCase());
    path.sub = subDef?.name ?? subRaw;
    if (subDef) path.subDef = subDef;
  }
  return path;
}

/**
 * Where the schema URN of `raw` ends when what precedes its last `:` is a whole extension's URN by
 * its form (WHOLE_EXTENSION_URN) and no core URN; else -1. Such a URN may begin with a known one:
 * OneLogin's `urn:scim:schemas:extension:enterprise:2.0` begins
 * `urn:scim:schemas:extension:enterprise:2.0:User`, an unknown extension whose attribute
 * `department` is `<urn>:department`, not an attribute "User:department" of OneLogin's
 * (test/conformance/intake-review-n2r).
 */
function wholeExtensionBefore(raw: string): number {
  const last = raw.lastIndexOf(":");
  const prefix = raw.slice(0, last);
  return WHOLE_EXTENSION_URN.test(prefix) && !isCoreUrn(prefix) ? last : -1;
}

/**
 * Whether `raw` names a whole schema by a version as its last segment (VERSIONED_URN), and is no
 * known schema's attribute path (`<enterprise urn>:1x` stays an invalid attribute) nor a URN of the
 * RFC's own namespaces.
 */
function isVersionedSchemaUrn(raw: string): boolean {
  if (!VERSIONED_URN.test(raw)) return false;
  const lower = raw.toLowerCase();
  if (RESERVED_URN_PREFIXES.some((prefix) => lower.startsWith(prefix))) return false;
  return !KNOWN_URNS.some((known) => lower.startsWith(`${known}:`));
}

export function formatAttrPath(p: Pick<AttrPath, "urn" | "attr" | "sub">): string {
  const base = p.urn ? (p.attr ? `${p.urn}:${p.attr}` : p.urn) : p.attr;
  return p.sub ? `${base}.${p.sub}` : base;
}

/** The definition a path's value is compared against: the sub-attribute's, else the attribute's. */
export function leafDef(p: AttrPath): AttrDef | undefined {
  return p.sub !== undefined ? p.subDef : p.def;
}

/**
 * The definition a filter comparison on `p` is made against: the sub-attribute's, else the
 * attribute's; a complex attribute compares its `value` (`emails eq "x"` is `emails.value eq "x"`).
 */
export function comparedDef(p: AttrPath): AttrDef | undefined {
  if (p.sub !== undefined) return p.subDef;
  if (p.def?.type === "complex") return p.def.sub?.get("value");
  return p.def;
}

const USER_NAME = USER_ATTRS.get("username");
const DISPLAY_NAMES = new Set([USER_ATTRS.get("displayname"), GROUP_ATTRS.get("displayname")]);

/**
 * Whether `p` names an attribute intake stores with surrounding whitespace trimmed (cleanName in
 * canonical-resource.ts): a User's userName, a Group's displayName. Only the core attributes
 * themselves count, never a sub-attribute or an extension's attribute of the same name.
 * `resourceType` is the type the filter is for (the SCIM list routes always say it). Without it (a
 * filter parsed for either type, with ANY_CORE_ATTRS) displayName counts, although a User's
 * displayName is stored as given: the two cannot be told apart there. The filter parser trims the literal of
 * an `eq`/`ne` on such an attribute only (trimsLiteral in filter-parser.ts).
 */
export function isStoredTrimmed(p: AttrPath, resourceType?: "User" | "Group"): boolean {
  if (p.urn !== undefined || p.sub !== undefined || p.def === undefined) return false;
  if (p.def === USER_NAME) return resourceType !== "Group";
  return DISPLAY_NAMES.has(p.def) && resourceType !== "User";
}

/**
 * Looks a key up in a JSON object by exact name first, then case-insensitively (RFC 7643 §2.1).
 * Only the object's own attributes: read as `obj[name]`, `constructor` or `toString` was found on
 * Object.prototype, so a filter naming one matched every user (and a PATCH remove with such a
 * filter removed every element).
 */
export function getKey<T>(obj: { [key: string]: T }, name: string): T | undefined {
  const exact = Object.hasOwn(obj, name) ? obj[name] : undefined;
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

/** The actual key in `obj` that matches `name` case-insensitively, if any. */
export function findKey(obj: object, name: string): string | undefined {
  if (Object.hasOwn(obj, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(obj).find((key) => key.toLowerCase() === lower);
}
