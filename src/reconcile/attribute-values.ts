import type { AttributeRule } from "../config/config-schema.js";
import {
  type DesiredAttributeOptions,
  desiredAttributeValues,
  valuesUnderRuleNames,
} from "../mapping/attribute-values.js";
import { sameAttributeValue } from "../mapping/coerce-attribute-value.js";
import type { UserAttributeValueValue } from "../platform/platform-types.js";
import type { JsonObject } from "../scim/scim-types.js";

/**
 * Names of the platform attributes whose value differs from what the source's rules make of the
 * desired user, decided as the planner decides it (src/mapping): a value the platform lacks and the
 * user has none of is no difference; a rule reads the platform's attribute whose name differs only in
 * case (valuesUnderRuleNames). `options.manager`: the manager as the sync translates it (its
 * platform id), so a rule on the manager compares like with like. Pure.
 */
export function diffAttributeValues(
  desired: JsonObject,
  rules: Record<string, AttributeRule>,
  actual: ReadonlyArray<{ name: string; value: UserAttributeValueValue }>,
  options: DesiredAttributeOptions = {},
): string[] {
  const have = valuesUnderRuleNames(actual, Object.keys(rules));
  const { values } = desiredAttributeValues(desired, rules, options);
  const differing: string[] = [];
  for (const [name, want] of Object.entries(values)) {
    const got = have.get(name);
    if (got === undefined && want.value === null) continue;
    if (!sameAttributeValue(got, want.value)) differing.push(name);
  }
  return differing.sort();
}
