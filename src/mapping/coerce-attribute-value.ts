import type { Json } from "../scim/scim-types.js";
import type { UserAttributeType, UserAttributeValueValue } from "../platform/platform-types.js";

/**
 * Coerces a SCIM value to a platform attribute type. Returns null when there is no value (the
 * platform value is then cleared) and `{ invalid: true }` when the value cannot be coerced.
 */
export type Coerced = { value: UserAttributeValueValue } | { invalid: true; reason: string };

function scalars(value: Json): Json[] {
  if (Array.isArray(value)) return value.flatMap((v) => (Array.isArray(v) ? v : [v]));
  return [value];
}

function toStringValue(v: Json): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v && typeof v === "object" && !Array.isArray(v) && typeof v["value"] === "string") return v["value"];
  return undefined;
}

/**
 * A number written in decimal, as JSON writes numbers (a leading +, or a bare leading or trailing
 * point, allowed): "42", " 7 ", "4.5e1", "-0.5". JavaScript's Number() also reads "0x1A", "0b11"
 * and "0o17", which no identity provider means as a number (a cost center "0x1A" is a code).
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function toNumberValue(v: Json): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string" && DECIMAL.test(v.trim())) {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function toBooleanValue(v: Json): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true" || s === "1" || s === "yes") return true;
    if (s === "false" || s === "0" || s === "no") return false;
  }
  return undefined;
}

export function coerceAttributeValue(value: Json | undefined, type: UserAttributeType): Coerced {
  if (value === undefined || value === null) return { value: null };
  const items = scalars(value).filter((v) => v !== null);
  switch (type) {
    case "string": {
      if (items.length === 0) return { value: null };
      const s = toStringValue(items[0] as Json);
      return s === undefined ? { invalid: true, reason: "not a string" } : { value: s };
    }
    case "number": {
      if (items.length === 0) return { value: null };
      const n = toNumberValue(items[0] as Json);
      return n === undefined ? { invalid: true, reason: "not a number" } : { value: n };
    }
    case "boolean": {
      if (items.length === 0) return { value: null };
      const b = toBooleanValue(items[0] as Json);
      return b === undefined ? { invalid: true, reason: "not a boolean" } : { value: b };
    }
    case "string_array": {
      const out: string[] = [];
      for (const item of items) {
        const s = toStringValue(item);
        if (s === undefined) return { invalid: true, reason: "not a list of strings" };
        out.push(s);
      }
      return { value: out };
    }
    case "number_array": {
      const out: number[] = [];
      for (const item of items) {
        const n = toNumberValue(item);
        if (n === undefined) return { invalid: true, reason: "not a list of numbers" };
        out.push(n);
      }
      return { value: out };
    }
  }
}

/** Value equality as the platform stores it (arrays by element, in order). */
export function sameAttributeValue(
  a: UserAttributeValueValue | undefined,
  b: UserAttributeValueValue | undefined,
): boolean {
  const x = a ?? null;
  const y = b ?? null;
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => v === y[i]);
  return x === y;
}
