import type { Json, JsonObject } from "../scim/scim-types.js";

export type AttributeValue = string | number | boolean | string[] | number[] | null;

function normalise(value: AttributeValue | undefined): string {
  if (value === undefined || value === null) return "null";
  if (Array.isArray(value)) return JSON.stringify([...value].map(String).sort());
  return JSON.stringify(value);
}

/**
 * Names of the platform attributes whose value differs from the expected one. `expected` holds
 * every configured attribute (null when the user has no value); `actual` is what the platform
 * answers for the user. Arrays compare as sets (order on the platform is not meaningful). Pure.
 */
export function diffAttributeValues(
  expected: Record<string, AttributeValue>,
  actual: ReadonlyArray<{ name: string; value: AttributeValue }>,
): string[] {
  const have = new Map(actual.map((entry) => [entry.name, entry.value]));
  const differing: string[] = [];
  for (const [name, want] of Object.entries(expected)) {
    const got = have.get(name);
    if (normalise(want) === normalise(got)) continue;
    // An empty array and no value are the same on the platform ([] clears, like null).
    if (
      (Array.isArray(want) && want.length === 0 && (got === undefined || got === null)) ||
      (Array.isArray(got) && got.length === 0 && want === null)
    )
      continue;
    differing.push(name);
  }
  return differing.sort();
}

export type AttributeType = "string" | "number" | "boolean" | "string_array" | "number_array";

/** Reads a value at a SCIM attribute path: `a.b`, `urn:...:User:attr`, `attr[type eq "x"].sub` (RFC 7644 §3.10). */
export function readScimPath(doc: JsonObject, path: string): Json | undefined {
  let rest = path;
  let current: Json | undefined = doc;
  const urn = /^(urn:[^\s]+):([A-Za-z][\w.[\]" =-]*)$/.exec(path);
  if (urn?.[1] && urn[2] && urn[1] in doc) {
    current = doc[urn[1]];
    rest = urn[2];
  }
  const parts = rest.match(/[^.[\]]+(\[[^\]]*\])?/g) ?? [];
  for (const part of parts) {
    if (current === null || current === undefined || typeof current !== "object" || Array.isArray(current)) {
      return undefined;
    }
    const filter = /^([^[]+)\[(\w+)\s+eq\s+"([^"]*)"\]$/i.exec(part);
    if (filter?.[1] && filter[2]) {
      const list: Json | undefined = current[filter[1]];
      if (!Array.isArray(list)) return undefined;
      const key = filter[2];
      const want = (filter[3] ?? "").toLowerCase();
      current = list.find(
        (item) =>
          item !== null &&
          typeof item === "object" &&
          !Array.isArray(item) &&
          String(item[key] ?? "").toLowerCase() === want,
      );
    } else {
      current = current[part];
    }
  }
  return current;
}

function coerceScalar(value: Json, type: "string" | "number" | "boolean"): string | number | boolean | null {
  if (value === null) return null;
  if (type === "string") return typeof value === "object" ? JSON.stringify(value) : String(value);
  if (type === "number") {
    const n = typeof value === "number" ? value : Number(value);
    return Number.isFinite(n) ? n : null;
  }
  if (typeof value === "boolean") return value;
  if (typeof value === "string")
    return value.toLowerCase() === "true" ? true : value.toLowerCase() === "false" ? false : null;
  return null;
}

/** The platform value a rule yields for a user, with the same coercions the planner applies. */
export function expectedAttributeValue(
  doc: JsonObject,
  rule: { from: string; type: AttributeType },
): AttributeValue {
  const raw = readScimPath(doc, rule.from);
  if (raw === undefined || raw === null) return null;
  if (rule.type === "string_array" || rule.type === "number_array") {
    const items = Array.isArray(raw) ? raw : [raw];
    const scalar = rule.type === "string_array" ? "string" : "number";
    const values = items.map((item) => coerceScalar(item, scalar)).filter((item) => item !== null);
    return values as string[] | number[];
  }
  if (Array.isArray(raw)) return raw.length === 0 ? null : coerceScalar(raw[0] as Json, rule.type);
  return coerceScalar(raw, rule.type);
}
