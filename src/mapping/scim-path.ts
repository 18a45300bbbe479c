import type { Json, JsonObject } from "../scim/scim-types.js";

/**
 * Reads a SCIM attribute path (RFC 7644 §3.10) from a resource: `name.givenName`, extension
 * paths with their schema URN (`urn:...:enterprise:2.0:User:department`), and value-filter
 * paths (`addresses[type eq "work"].country`, §3.10 "valuePath"). Multi-valued attributes read
 * without a filter yield every element's value. Returns undefined when nothing is there.
 */
export interface ParsedScimPath {
  /** Schema URN of an extension, or undefined for the core schema. */
  urn?: string;
  attribute: string;
  filter?: ValueFilter;
  subAttribute?: string;
}

export type ValueFilter =
  | { type: "compare"; attribute: string; op: "eq" | "ne"; value: string | number | boolean | null }
  | { type: "present"; attribute: string }
  | { type: "and" | "or"; left: ValueFilter; right: ValueFilter };

const URN_PATH = /^(urn:[^[\]]+):([A-Za-z$][\w$-]*(?:\[.*\])?(?:\.[A-Za-z$][\w$-]*)?)$/;

export function parseScimPath(path: string): ParsedScimPath {
  let rest = path.trim();
  let urn: string | undefined;
  const urnMatch = URN_PATH.exec(rest);
  if (urnMatch) {
    urn = urnMatch[1];
    rest = urnMatch[2] ?? "";
  }
  const m = /^([A-Za-z$][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z$][\w$-]*))?$/.exec(rest);
  if (!m?.[1]) throw new Error(`unsupported SCIM path: ${path}`);
  return {
    urn,
    attribute: m[1],
    filter: m[2] === undefined ? undefined : parseValueFilter(m[2]),
    subAttribute: m[3],
  };
}

/** A small parser for the filters that appear inside a value path: `attr eq value`, `pr`, and/or. */
export function parseValueFilter(text: string): ValueFilter {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];
  const next = (): string => {
    const t = tokens[pos++];
    if (t === undefined) throw new Error(`unexpected end of filter: ${text}`);
    return t;
  };
  const parseOr = (): ValueFilter => {
    let left = parseAnd();
    while (peek()?.toLowerCase() === "or") {
      next();
      left = { type: "or", left, right: parseAnd() };
    }
    return left;
  };
  const parseAnd = (): ValueFilter => {
    let left = parseTerm();
    while (peek()?.toLowerCase() === "and") {
      next();
      left = { type: "and", left, right: parseTerm() };
    }
    return left;
  };
  const parseTerm = (): ValueFilter => {
    if (peek() === "(") {
      next();
      const inner = parseOr();
      if (next() !== ")") throw new Error(`missing ) in filter: ${text}`);
      return inner;
    }
    const attribute = next();
    const op = next().toLowerCase();
    if (op === "pr") return { type: "present", attribute };
    if (op !== "eq" && op !== "ne") throw new Error(`unsupported operator ${op} in value filter: ${text}`);
    return { type: "compare", attribute, op, value: literal(next()) };
  };
  const result = parseOr();
  if (pos !== tokens.length) throw new Error(`trailing tokens in filter: ${text}`);
  return result;
}

function tokenize(text: string): string[] {
  const re = /\s*("(?:[^"\\]|\\.)*"|\(|\)|[^\s()]+)/g;
  const out: string[] = [];
  for (const m of text.matchAll(re)) if (m[1]) out.push(m[1]);
  return out;
}

function literal(token: string): string | number | boolean | null {
  if (token.startsWith('"')) return JSON.parse(token) as string;
  if (token === "true" || token === "false") return token === "true";
  if (token === "null") return null;
  const n = Number(token);
  if (!Number.isNaN(n)) return n;
  return token;
}

function getCaseInsensitive(obj: JsonObject, key: string): Json | undefined {
  if (key in obj) return obj[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function matchesValueFilter(element: Json, filter: ValueFilter): boolean {
  if (!isObject(element)) return false;
  switch (filter.type) {
    case "and":
      return matchesValueFilter(element, filter.left) && matchesValueFilter(element, filter.right);
    case "or":
      return matchesValueFilter(element, filter.left) || matchesValueFilter(element, filter.right);
    case "present": {
      const v = getCaseInsensitive(element, filter.attribute);
      return v !== undefined && v !== null && v !== "";
    }
    case "compare": {
      const v = getCaseInsensitive(element, filter.attribute);
      // Strings compare case-insensitively (RFC 7643 §2.3.1, caseExact false by default).
      const equal =
        typeof v === "string" && typeof filter.value === "string"
          ? v.toLowerCase() === filter.value.toLowerCase()
          : (v ?? null) === filter.value;
      return filter.op === "eq" ? equal : !equal;
    }
  }
}

/**
 * A core schema's URN (`urn:ietf:params:scim:schemas:core:2.0:User`): RFC 7644 §3.10 lets a path
 * name a core attribute with it, and the core attributes sit at the top of the resource, not
 * under that URN as an extension's do.
 */
const CORE_SCHEMA_URN = /^urn:ietf:params:scim:schemas:core:2\.0:[A-Za-z]+$/i;

/** The value at `path`, or undefined. Filtered or plain multi-valued reads give an array. */
export function readScimPath(resource: JsonObject, path: string | ParsedScimPath): Json | undefined {
  const parsed = typeof path === "string" ? parseScimPath(path) : path;
  let base: Json | undefined = resource;
  if (parsed.urn && !CORE_SCHEMA_URN.test(parsed.urn)) base = getCaseInsensitive(resource, parsed.urn);
  if (!isObject(base)) return undefined;
  let value = getCaseInsensitive(base, parsed.attribute);
  if (value === undefined || value === null) return undefined;
  if (parsed.filter) {
    if (!Array.isArray(value)) return undefined;
    const filter = parsed.filter;
    value = value.filter((el) => matchesValueFilter(el, filter));
  }
  if (parsed.subAttribute) {
    const sub = parsed.subAttribute;
    if (Array.isArray(value)) {
      const values = value
        .map((el) => (isObject(el) ? getCaseInsensitive(el, sub) : undefined))
        .filter((v): v is Json => v !== undefined && v !== null);
      return values.length === 0 ? undefined : values;
    }
    if (!isObject(value)) return undefined;
    const v = getCaseInsensitive(value, sub);
    return v === null ? undefined : v;
  }
  if (Array.isArray(value) && parsed.filter && value.length === 0) return undefined;
  return value;
}
