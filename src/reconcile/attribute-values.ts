import type { AttributeRule } from "../config/config-schema.js";
import { type DesiredAttributeOptions, desiredAttributeValues } from "../mapping/attribute-values.js";
import { sameAttributeValue } from "../mapping/coerce-attribute-value.js";
import type { UserAttributeValueValue } from "../platform/platform-types.js";
import type { JsonObject } from "../scim/scim-types.js";

/**
 * Names of the platform attributes whose value differs from what the source's rules make of the
 * desired user, decided as the planner decides it (src/mapping): a value the platform lacks and the
 * user has none of is no difference. The platform's attribute names are unique case-insensitively, so
 * a rule's `Department` reads the platform's `department` when no exact name is there (as the sync
 * uses that definition: src/sync/attribute-definitions.ts). `options.manager`: the manager as the sync translates it (its
 * platform id), so a rule on the manager compares like with like. Pure.
 */
export function diffAttributeValues(
  desired: JsonObject,
  rules: Record<string, AttributeRule>,
  actual: ReadonlyArray<{ name: string; value: UserAttributeValueValue }>,
  options: DesiredAttributeOptions = {},
): string[] {
  const have = new Map(actual.map((entry) => [entry.name, entry.value]));
  const folded = new Map<string, UserAttributeValueValue>();
  for (const entry of actual) {
    const key = entry.name.toLowerCase();
    if (!folded.has(key)) folded.set(key, entry.value);
  }
  const { values } = desiredAttributeValues(desired, rules, options);
  const differing: string[] = [];
  for (const [name, want] of Object.entries(values)) {
    const got = have.has(name) ? have.get(name) : folded.get(name.toLowerCase());
    if (got === undefined && want.value === null) continue;
    if (!sameAttributeValue(got, want.value)) differing.push(name);
  }
  return differing.sort();
}
