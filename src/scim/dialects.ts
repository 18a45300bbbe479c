import { BadRequestError } from "../errors.js";
import { findKey, knownExtensionUrn, parseAttrPath } from "./attribute-schema.js";
import { type Json, type JsonObject, type PatchOperation, SCHEMA_PATCH } from "./scim-types.js";

/**
 * The one place where identity-provider dialects are bent back into canonical SCIM
 * (ARCHITECTURE.md "Dialects"). Every quirk here has a unit test and a fixture under
 * test/fixtures/scim/. Callers: canonical-resource.ts (bodies of POST/PUT), patch.ts and
 * filter-parser.ts (boolean literals and PingOne's `email` of filters).
 */

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Entra ID sends booleans as the strings "True"/"False" (and some clients "true"/"false");
 * RFC 7643 §2.3.2 says booleans are JSON true/false. Returns undefined for anything else.
 */
export function coerceBoolean(v: unknown): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const lower = v.trim().toLowerCase();
    if (lower === "true") return true;
    if (lower === "false") return false;
  }
  return undefined;
}

/**
 * PingOne's documented user filter expression `email Co "%s"` (docs.pingidentity.com, "SCIM filter
 * expressions": the filter that matches an existing user before a create) names a User's addresses
 * `email`; RFC 7643 §4.1.2 calls them `emails` and defines no `email`. The attribute path of a
 * filter on Users that is `email` or `email.<sub>` (any case, no schema URN) reads as `emails`,
 * `emails.<sub>`; any other path is returned as it is. Caller: filter-parser.ts, for the top level
 * of a filter on Users only.
 */
export function userFilterPath(path: string): string {
  const m = /^email(\.[A-Za-z][\w$-]*)?$/i.exec(path);
  return m ? `emails${m[1] ?? ""}` : path;
}

/**
 * The enterprise `manager` (RFC 7643 §4.3) is a complex `{value, $ref, displayName}`. Entra sends
 * a bare id string, some clients an array of one such object, some `{value}`; OneLogin's templates
 * send SCIM 1.1's `{managerId, displayName}` (`managerId` is read as `value` when there is none).
 * Returns the canonical object, or null when the value clears the manager (empty string/array/value).
 */
export function normalizeManager(v: unknown): JsonObject | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v === "" ? null : { value: v };
  if (Array.isArray(v)) return v.length === 0 ? null : normalizeManager(v[0]);
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const name of ["value", "$ref", "displayName"]) {
      const key = findKey(v, name) ?? (name === "value" ? findKey(v, "managerId") : undefined);
      const sub = key === undefined ? undefined : v[key];
      if (typeof sub === "string" && sub !== "") out[name] = sub;
    }
    return out.value === undefined && out.$ref === undefined ? null : out;
  }
  throw new BadRequestError(
    'Attribute "manager" must be an id string or an object with "value"',
    "invalidValue",
  );
}

/**
 * Some clients send a complex `value` as a JSON string holding the object or array, or a list of
 * such strings, one per element: SCIM-SDK (Captain-P-Goldfish, the library of scim-for-keycloak)
 * carries string values of a PatchRequestOperation (`values`) that way, one string as the value,
 * several as a list (`["{\"value\":\"id1\"}", "{\"value\":\"id2\"}"]`).
 */
export function parseJsonStringValue(v: Json | undefined): Json | undefined {
  if (Array.isArray(v)) {
    if (!v.some((el) => typeof el === "string" && looksLikeJsonObject(el))) return v;
    return v.map((el) => (typeof el === "string" && looksLikeJsonObject(el) ? parseJsonText(el) : el));
  }
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!looksLikeJsonObject(t) && !(t.startsWith("[") && t.endsWith("]"))) return v;
  return parseJsonText(v);
}

function looksLikeJsonObject(text: string): boolean {
  const t = text.trim();
  return t.startsWith("{") && t.endsWith("}");
}

/** `text` parsed as JSON, or `text` itself when it is not JSON. */
function parseJsonText(text: string): Json {
  try {
    return JSON.parse(text.trim()) as Json;
  } catch {
    return text;
  }
}

/**
 * The `value` of an operation without `path`: the object of attributes (RFC 7644 §3.5.2.1,
 * §3.5.2.3), also when sent as a JSON string (scim-for-keycloak's group reconcile sends
 * `"value": "{\"displayName\": ...}"`) or as a list holding that one object (SCIM-SDK's
 * PatchRequestOperation.setValueNode wraps every value node in an array).
 */
function noPathValue(value: Json | undefined): Json | undefined {
  const parsed = parseJsonStringValue(value);
  return Array.isArray(parsed) && parsed.length === 1 && isJsonObject(parsed[0]) ? parsed[0] : parsed;
}

const IGNORED_NO_PATH_KEYS = new Set(["schemas", "id", "meta"]);

/**
 * RFC 7644 §3.5.2.1/§3.5.2.3: an add or replace without `path` carries an object whose keys are
 * attributes. Okta sends `{active: false}`; Entra sends dotted keys (`"name.givenName"`) and
 * URN-prefixed keys (`"urn:...:enterprise:2.0:User:department"`); an extension may also come as
 * one object under its URN. Each becomes a (path, value) pair applied in order. `schemas`, `id`
 * and `meta` are ignored. An object under an unknown URN is taken as that whole extension.
 */
export function expandNoPathValue(value: Json | undefined): Array<{ path: string; value: Json }> {
  const parsed = parseJsonStringValue(value);
  if (!isJsonObject(parsed)) {
    throw new BadRequestError('An operation without "path" needs an object "value"', "invalidSyntax");
  }
  const out: Array<{ path: string; value: Json }> = [];
  for (const [key, v] of Object.entries(parsed)) {
    if (IGNORED_NO_PATH_KEYS.has(key.toLowerCase())) continue;
    // An object under a core schema URN: its attributes keep that URN, so that the resource's own
    // table reads them and a User's PATCH refuses the Group schema's (and a Group's the User's):
    // isForeignCoreUrn. A key already qualified by a URN (an extension's) is kept as it is.
    if (isCoreUrnObject(key, v)) {
      for (const inner of expandNoPathValue(v)) {
        const qualified = inner.path.toLowerCase().startsWith("urn:");
        out.push(qualified ? inner : { path: `${key}:${inner.path}`, value: inner.value });
      }
      continue;
    }
    const p = key.toLowerCase().startsWith("urn:") ? parseAttrPath(key) : undefined;
    // A whole extension: a known extension URN, or an object under a URN that names no known attribute.
    const wholeExtension = p?.urn !== undefined && (p.attr === "" || (!p.def && !knownExtensionUrn(p.urn)));
    if (p?.urn !== undefined && wholeExtension && isJsonObject(v)) {
      const urn = p.attr === "" ? p.urn : key;
      for (const [sub, sv] of Object.entries(v)) out.push({ path: `${urn}:${sub}`, value: sv });
    } else {
      out.push({ path: key, value: v });
    }
  }
  return out;
}

function isCoreUrnObject(key: string, v: Json): v is JsonObject {
  const lower = key.toLowerCase();
  return (
    isJsonObject(v) &&
    (lower === "urn:ietf:params:scim:schemas:core:2.0:user" ||
      lower === "urn:ietf:params:scim:schemas:core:2.0:group")
  );
}

const OPS = new Set(["add", "remove", "replace"]);

/**
 * Validates a PATCH body (RFC 7644 §3.5.2) and returns its operations in canonical form: `op`
 * lower-cased (Entra sends "Replace", "Add", "Remove"), empty `path` treated as absent, a `value`
 * sent as a JSON string holding an object parsed (parseJsonStringValue), the value of an operation
 * without `path` sent as a list of its one object unwrapped (noPathValue). Lenient on the
 * envelope: a missing or empty `schemas` is accepted (several clients omit it); a `schemas` that
 * names other messages only is invalidSyntax. `Operations` is matched case-insensitively and must
 * be an array.
 */
export function normalizePatchRequest(body: unknown): PatchOperation[] {
  if (!isJsonObject(body)) throw new BadRequestError("The PATCH body must be a JSON object", "invalidSyntax");
  const schemasKey = findKey(body, "schemas");
  const schemas = schemasKey === undefined ? undefined : body[schemasKey];
  if (schemas !== undefined && schemas !== null) {
    if (!Array.isArray(schemas)) throw new BadRequestError('"schemas" must be an array', "invalidSyntax");
    const ok =
      schemas.length === 0 ||
      schemas.some((s) => typeof s === "string" && s.toLowerCase() === SCHEMA_PATCH.toLowerCase());
    if (!ok) throw new BadRequestError(`"schemas" must contain "${SCHEMA_PATCH}"`, "invalidSyntax");
  }
  const opsKey = findKey(body, "Operations");
  const ops = opsKey === undefined ? undefined : body[opsKey];
  if (!Array.isArray(ops))
    throw new BadRequestError('"Operations" must be an array of operations', "invalidSyntax");
  return ops.map((raw, index) => normalizeOperation(raw, index));
}

function normalizeOperation(raw: Json, index: number): PatchOperation {
  const where = `Operations[${index}]`;
  if (!isJsonObject(raw)) throw new BadRequestError(`${where} must be an object`, "invalidSyntax");
  const opKey = findKey(raw, "op");
  const opRaw = opKey === undefined ? undefined : raw[opKey];
  const op = typeof opRaw === "string" ? opRaw.trim().toLowerCase() : undefined;
  if (!op || !OPS.has(op)) {
    throw new BadRequestError(`${where}.op must be "add", "remove" or "replace"`, "invalidSyntax");
  }
  const pathKey = findKey(raw, "path");
  const pathRaw = pathKey === undefined ? undefined : raw[pathKey];
  if (pathRaw !== undefined && pathRaw !== null && typeof pathRaw !== "string") {
    throw new BadRequestError(`${where}.path must be a string`, "invalidPath");
  }
  const valueKey = findKey(raw, "value");
  const out: PatchOperation = { op: op as PatchOperation["op"] };
  const path = typeof pathRaw === "string" ? pathRaw.trim() : "";
  if (path !== "") out.path = path;
  if (valueKey !== undefined) {
    const value = raw[valueKey] as Json;
    if (path === "") out.value = noPathValue(value) as Json;
    else out.value = listInList(wantsStructuredValue(path) ? (parseJsonStringValue(value) as Json) : value);
  }
  return out;
}

/**
 * SCIM-SDK's PatchRequestOperation.setValueNode wraps every value node in an array, so a list sent
 * that way (keycloak-scim's replace of a `;multi` extension attribute) arrives as a list holding
 * that one list: `[["a", "b"]]`. SCIM has no list of lists (RFC 7643 §2.4: the values of a
 * multi-valued attribute are its elements); such a value is read as the inner list. Any other
 * value is returned as it is.
 */
export function listInList(value: Json): Json {
  return Array.isArray(value) && value.length === 1 && Array.isArray(value[0]) ? value[0] : value;
}

/** Only complex or multi-valued targets get a JSON-string value parsed (a displayName "[x]" stays). */
function wantsStructuredValue(path: string): boolean {
  if (path.includes("[") && !/\]\.[^\]]+$/.test(path)) return true;
  const p = parseAttrPath(path.replace(/\[.*\]/, ""));
  const def = p?.sub !== undefined ? p.subDef : p?.def;
  return def !== undefined && (def.type === "complex" || def.multiValued) && def.name !== "manager";
}
