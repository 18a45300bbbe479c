import type { AttributeRule } from "../config/config-schema.js";
import type { UserAttributeType, UserAttributeValueValue } from "../platform/platform-types.js";
import { type Json, type JsonObject, SCHEMA_ENTERPRISE_USER } from "../scim/scim-types.js";
import { coerceAttributeValue } from "./coerce-attribute-value.js";
import type { PlanProblem } from "./plan-types.js";
import { type ParsedScimPath, parseScimPath, readScimPath } from "./scim-path.js";

export interface DesiredAttribute {
  type: UserAttributeType;
  value: UserAttributeValueValue;
}

export interface DesiredAttributeOptions {
  /**
   * The enterprise `manager.value` to map instead of the user's own: the translated value the
   * profile gets too (resolveManager in user-profile.ts); `value: undefined` = none (yet).
   */
  manager?: { value: string | undefined };
}

/** `urn:...:enterprise:2.0:User:manager` or `...:manager.value`: a rule that reads the manager's id. */
function readsManagerValue(path: ParsedScimPath): boolean {
  return (
    path.urn?.toLowerCase() === SCHEMA_ENTERPRISE_USER.toLowerCase() &&
    path.attribute.toLowerCase() === "manager" &&
    path.filter === undefined &&
    (path.subAttribute === undefined || path.subAttribute.toLowerCase() === "value")
  );
}

function blank(v: Json): boolean {
  return v === "" || (typeof v === "object" && v !== null && !Array.isArray(v) && v["value"] === "");
}

/**
 * RFC 7643 §2.5: an empty string is an unassigned value, as the profile mapper takes it
 * (user-profile.ts): it clears the platform value instead of being written as "".
 */
function withoutBlanks(raw: Json | undefined): Json | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (Array.isArray(raw)) return raw.filter((v) => !blank(v));
  return blank(raw) ? undefined : raw;
}

/**
 * The platform attribute values a user should have, from the source's rules. A value that
 * cannot be coerced to the rule's type is reported as a problem and is no value (null: the
 * platform's value is removed, not left as it was).
 */
export function desiredAttributeValues(
  user: JsonObject,
  rules: Record<string, AttributeRule>,
  options: DesiredAttributeOptions = {},
): { values: Record<string, DesiredAttribute>; problems: PlanProblem[] } {
  const values: Record<string, DesiredAttribute> = {};
  const problems: PlanProblem[] = [];
  for (const [name, rule] of Object.entries(rules)) {
    let raw: ReturnType<typeof readScimPath>;
    try {
      const path = parseScimPath(rule.from);
      raw = options.manager && readsManagerValue(path) ? options.manager.value : readScimPath(user, path);
    } catch (err) {
      problems.push({
        code: "attribute_rule_invalid",
        message: `attribute ${name}: ${(err as Error).message}`,
      });
      continue;
    }
    const coerced = coerceAttributeValue(withoutBlanks(raw), rule.type);
    if ("invalid" in coerced) {
      problems.push({
        code: "attribute_value_invalid",
        message: `attribute ${name}: value is ${coerced.reason} (type ${rule.type})`,
      });
      // The source holds no value of the rule's type: the platform holds none either. A value
      // synced before (employeeNumber "12", then "E-12") would otherwise stay, stale, for good.
      values[name] = { type: rule.type, value: null };
      continue;
    }
    values[name] = { type: rule.type, value: coerced.value };
  }
  return { values, problems };
}

/**
 * The platform's attribute values keyed by the source's rule names. The platform's names are unique
 * without regard to case (creating "Department" beside "department" is a 409), so the value of a
 * platform attribute whose name differs from a rule's only in case is that rule's value (the sync
 * uses that definition: src/sync/attribute-definitions.ts). An exact name wins; other names stay as
 * they are. Pure.
 */
export function valuesUnderRuleNames(
  values: ReadonlyArray<{ name: string; value: UserAttributeValueValue }>,
  ruleNames: readonly string[],
): Map<string, UserAttributeValueValue> {
  const exact = new Set(ruleNames);
  const ruleByFolded = new Map(ruleNames.map((name) => [name.toLowerCase(), name]));
  const byRule = new Map<string, UserAttributeValueValue>();
  for (const { name, value } of values) {
    if (exact.has(name)) byRule.set(name, value);
    else {
      const rule = ruleByFolded.get(name.toLowerCase()) ?? name;
      if (!byRule.has(rule)) byRule.set(rule, value);
    }
  }
  return byRule;
}
