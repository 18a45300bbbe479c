import type { Request } from "express";
import { BadRequestError } from "../../src/errors.js";
import { findKey, parseAttrPath } from "../../src/scim/attribute-schema.js";
import { parseFilter } from "../../src/scim/filter-parser.js";
import type { FilterNode } from "../../src/scim/filter-types.js";
import { SCHEMA_SEARCH } from "../../src/scim/scim-types.js";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 200;

export interface ListParams {
  filter?: FilterNode;
  startIndex: number;
  count: number;
  attributes?: string[];
  excludedAttributes?: string[];
}

/**
 * A list or projection parameter by name, in any case: `Filter=`, `COUNT=`, `excludedattributes=`.
 * A SearchRequest's parameters are its attributes, whose names are case-insensitive (RFC 7643
 * §2.1, RFC 7644 §3.4.3), and the query string carries the same parameters (§3.4.2). A filter
 * ignored for its case would answer a look-up-before-create with every resource.
 */
export function listParam(source: Record<string, unknown>, name: string): unknown {
  const key = findKey(source, name);
  return key === undefined ? undefined : source[key];
}

/**
 * The query parameters of a list request (RFC 7644 §3.4.2), as parsed from the query string, with
 * the `filter` read again from the raw query when it holds a `+` (decodeFilterParam). The query
 * parser decodes form-style (`+` is a space), which is what PingFederate sends
 * (`userName+eq+%22a%2Bb%22`). But RFC 3986 gives `+` no special meaning in a query, and clients
 * that do not form-encode leave a `+` of a value as it is: fetch, WHATWG URL, .NET and Java URI
 * builders percent-encode the spaces (`userName%20eq%20%22a+b@example.com%22`), and Keycloak's
 * keycloak-scim2-storage pastes the value into `filter=userName+eq+%22<value>%22` unencoded, which
 * its HTTP client then percent-encodes where it must (`displayName+eq+%22Sales%20EMEA%22`). That
 * client (OkHttp) leaves an `&` of the value as it is, so the group "R&D" comes as
 * `filter=displayName+eq+%22R&D%22`: a filter whose string literal the `&` left open takes the
 * parameters after it as its own up to the one that closes it (filterSpanning), and they are no
 * parameters of their own.
 */
export function listQueryOf(req: Request): Record<string, unknown> {
  const query = req.query as Record<string, unknown>;
  const key = findKey(query, "filter");
  const parsed = key === undefined ? undefined : query[key];
  if (key === undefined || typeof parsed !== "string") return query;
  const url = req.originalUrl ?? req.url;
  const start = url.indexOf("?");
  const leftOpen = stringLeftOpen(parsed);
  if (start < 0 || (!leftOpen && !url.includes("+", start))) return query;
  const parts = url.slice(start + 1).split("&");
  const at = parts.findIndex((part) => {
    const eq = part.indexOf("=");
    return eq >= 0 && part.slice(0, eq).toLowerCase() === key.toLowerCase();
  });
  if (at < 0) return query;
  const { raw, end } = leftOpen
    ? filterSpanning(parts, at)
    : { raw: parts[at]!.slice(parts[at]!.indexOf("=") + 1), end: at };
  if (end === at && !raw.includes("+")) return query;
  const decoded = decodeFilterParam(raw);
  // Not valid percent-encoding or UTF-8: the parser's lenient reading stands.
  if (decoded === undefined) return query;
  const out: Record<string, unknown> = { ...query, [key]: decoded };
  const kept = new Set(parts.filter((_, i) => i < at || i > end).map(paramName));
  for (const part of parts.slice(at + 1, end + 1)) {
    const name = paramName(part);
    if (!kept.has(name)) delete out[name];
  }
  return out;
}

/**
 * The raw value of the filter at `parts[at]` joined with the `&`-separated parts after it up to
 * the first that closes its open string literal, and the index of that part; the filter's own
 * value alone (end = at) when no part closes it (the filter stays invalid: 400). The parts are
 * scanned once (rawQuotes), not decoded again after each: a long query stays linear.
 */
function filterSpanning(parts: readonly string[], at: number): { raw: string; end: number } {
  const own = parts[at]!.slice(parts[at]!.indexOf("=") + 1);
  let state = rawQuotes(own, CLOSED);
  for (let i = at + 1; i < parts.length && state !== undefined; i++) {
    state = rawQuotes(`&${parts[i]}`, state);
    if (state === CLOSED) {
      const raw = [own, ...parts.slice(at + 1, i + 1)].join("&");
      // Not UTF-8: no later part makes it so (the reading before this scan gave up the same way).
      return decodeFilterParam(raw) === undefined ? { raw: own, end: at } : { raw, end: i };
    }
  }
  return { raw: own, end: at };
}

/** Where a filter's text stands after some of it: inside a string literal, after a `\` there. */
interface QuoteState {
  inString: boolean;
  escaped: boolean;
}
const CLOSED: QuoteState = { inString: false, escaped: false };

/**
 * The quote state after the raw (percent-encoded) text `raw`, from `state`, read as
 * decodeFilterParam reads it (a `+` is a space or a plus, neither a quote nor a backslash);
 * CLOSED when outside a string. Undefined where decodeFilterParam gives up: a `%` not followed
 * by two hex digits, a character outside ASCII.
 */
function rawQuotes(raw: string, state: QuoteState): QuoteState | undefined {
  let { inString, escaped } = state;
  for (let i = 0; i < raw.length; i++) {
    let c = raw.charCodeAt(i);
    if (c === 0x25 /* % */) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      c = Number.parseInt(hex, 16);
      i += 2;
    } else if (c > 0x7e) {
      return undefined;
    }
    if (!inString) inString = c === 0x22;
    else if (escaped) escaped = false;
    else if (c === 0x5c /* \ */) escaped = true;
    else if (c === 0x22 /* " */) inString = false;
  }
  return inString ? { inString, escaped } : CLOSED;
}

/** The name of a raw `name=value` query part as the query parser reads it. */
function paramName(part: string): string {
  const eq = part.indexOf("=");
  const name = (eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, " ");
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** Whether a filter's text ends inside a string literal (an odd number of unescaped `"`). */
export function stringLeftOpen(text: string): boolean {
  let inString = false;
  let escaped = false;
  for (const c of text) {
    if (!inString) inString = c === '"';
    else if (escaped) escaped = false;
    else if (c === "\\") escaped = true;
    else if (c === '"') inString = false;
  }
  return inString;
}

/**
 * What some form encoder leaves unescaped, and `+`: letters, digits and `-._` (all of them), `*`
 * (WHATWG, Java URLEncoder, Ruby), `!()*` (.NET's WebUtility and HttpUtility), `~` (Go's url.Values,
 * Python's quote_plus), `'` (kept to be safe). A value holding any other raw character (`@`, `"`,
 * `:`, `/`, `,` ...) was not written by a form encoder.
 */
const FORM_ENCODED = /^[A-Za-z0-9\-._*!()~'%+]*$/;

/**
 * The raw value of a `filter` query parameter, percent-decoded, with each `+` read by where it
 * stands: outside the filter's string literals it is a space (it separates the tokens: nothing
 * else in a filter's grammar outside a string has a `+`); inside one it is a space only when the
 * whole value is form-encoded, and a plus otherwise. The value is taken as not form-encoded when
 * it holds a `%20` (a form encoder writes a space as `+`) or a character every form encoder
 * escapes (`@`, `"`, `:`, `/`, `,` ...): `userName+eq+%22a+b@example.com%22` is the user
 * "a+b@example.com", `userName+eq+%22Ann+Lee%22` the user "Ann Lee". The one reading this cannot
 * tell apart: a value pasted unencoded whose only characters are also a form encoder's
 * (`displayName+eq+%22R+D(EU)%22` is read "R D(EU)"). Undefined when the value is not valid
 * percent-encoding of UTF-8, or holds characters outside ASCII.
 */
export function decodeFilterParam(raw: string): string | undefined {
  const formEncoded = !/%20/i.test(raw) && FORM_ENCODED.test(raw);
  const bytes: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    let byte: number;
    if (c === 0x25 /* % */) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      byte = Number.parseInt(hex, 16);
      i += 2;
    } else if (c === 0x2b /* + */) {
      byte = inString && !formEncoded ? 0x2b : 0x20;
    } else if (c > 0x7e) {
      return undefined;
    } else {
      byte = c;
    }
    bytes.push(byte);
    // Bytes of a multi-byte UTF-8 character are all >= 0x80: never a quote or a backslash.
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === 0x5c /* \ */) escaped = true;
      else if (byte === 0x22 /* " */) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The names of an `attributes` or `excludedAttributes` parameter (RFC 7644 §3.4.2.5, §3.9): a
 * comma-separated string, or a list of them (a SearchRequest's, or the parameter repeated in the
 * query string); empty items and surrounding spaces are ignored. Anything else, or a name that is
 * not an attribute path (RFC 7643 §2.1 ATTRNAME, optionally after a schema URN, with at most one
 * `.subAttr`: parseAttrPath), is a 400 invalidValue, which RFC 7644 §3.12 lists for GET, query and
 * create POST, PUT and PATCH (invalidPath is the PATCH "path" attribute's). A valid name that no
 * schema has is kept: projection ignores it, and identity providers send such names.
 */
function attributeNames(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const items = Array.isArray(value) ? value : [value];
  if (!items.every((item) => typeof item === "string")) {
    throw new BadRequestError(`${name} must be a string or a list of strings`, "invalidValue");
  }
  const parts = (items as string[])
    .flatMap((item) => item.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const part of parts) {
    if (parseAttrPath(part) === undefined) {
      throw new BadRequestError(`${name}: "${part}" is not an attribute name or path`, "invalidValue");
    }
  }
  return parts.length > 0 ? parts : undefined;
}

function integer(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new BadRequestError(`${name} must be an integer`, "invalidValue");
  return Math.trunc(n);
}

/**
 * Query parameters of a list (RFC 7644 §3.4.2) from the query string or a SearchRequest body
 * (§3.4.3). startIndex below 1 counts as 1; count is clamped to [0, MAX_PAGE_SIZE]. The resource
 * type tells the filter parser which name is stored trimmed (a User's userName, a Group's
 * displayName), so that only its literals are trimmed.
 */
export function parseListParams(
  source: Record<string, unknown>,
  resourceType?: "User" | "Group",
): ListParams {
  const filterText = listParam(source, "filter");
  if (filterText !== undefined && typeof filterText !== "string")
    throw new BadRequestError("filter must be a string", "invalidFilter");
  const startIndex = Math.max(1, integer(listParam(source, "startIndex"), "startIndex") ?? 1);
  const count = Math.min(
    MAX_PAGE_SIZE,
    Math.max(0, integer(listParam(source, "count"), "count") ?? DEFAULT_PAGE_SIZE),
  );
  return {
    filter: filterText && filterText.trim() !== "" ? parseFilter(filterText, resourceType) : undefined,
    startIndex,
    count,
    attributes: attributeNames(listParam(source, "attributes"), "attributes"),
    excludedAttributes: attributeNames(listParam(source, "excludedAttributes"), "excludedAttributes"),
  };
}

/**
 * A POST .search body (RFC 7644 §3.4.3) whose envelope is checked: its `schemas` must name
 * SearchRequest. Lenient as PATCH is with PatchOp (dialects.ts): a missing or empty `schemas` is
 * accepted; one that names other messages only (a User's, a PatchOp's) is 400 invalidSyntax, not
 * read as a query of everything.
 */
export function searchRequest(body: Record<string, unknown>): Record<string, unknown> {
  const schemas = listParam(body, "schemas");
  if (schemas === undefined || schemas === null) return body;
  if (!Array.isArray(schemas)) throw new BadRequestError('"schemas" must be an array', "invalidSyntax");
  const search = SCHEMA_SEARCH.toLowerCase();
  if (schemas.length > 0 && !schemas.some((s) => typeof s === "string" && s.toLowerCase() === search)) {
    throw new BadRequestError(`"schemas" must contain "${SCHEMA_SEARCH}"`, "invalidSyntax");
  }
  return body;
}

/** The projection parameters of a request (RFC 7644 §3.9). */
export type Projection = Pick<ListParams, "attributes" | "excludedAttributes">;

/** True when the caller asked not to see a group's members (`excludedAttributes=members`). */
export function membersExcluded(params: Projection): boolean {
  const excluded = params.excludedAttributes?.some((a) =>
    /^(urn:ietf:params:scim:schemas:core:2\.0:Group:)?members$/i.test(a),
  );
  const notAsked =
    params.attributes !== undefined && !params.attributes.some((a) => /(^|:)members(\.|$)/i.test(a));
  return Boolean(excluded) || notAsked;
}

/**
 * `attributes` / `excludedAttributes` of a single-resource request (RFC 7644 §3.9). A write reads
 * them before it writes, so that a value that does not parse (400) leaves nothing written.
 */
export function projectionOf(req: Request): Projection {
  const query = req.query as Record<string, unknown>;
  const { attributes, excludedAttributes } = parseListParams({
    attributes: listParam(query, "attributes"),
    excludedAttributes: listParam(query, "excludedAttributes"),
  });
  return { attributes, excludedAttributes };
}
