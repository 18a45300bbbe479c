import type { Json, JsonObject } from "../scim/scim-types.js";
import { SCHEMA_ENTERPRISE_USER } from "../scim/scim-types.js";

/**
 * The user attributes the platform keeps (platform-api.yaml, ScimUser) that reconciliation
 * compares. `manager.value` is left out: it names a bridge id on one side and a platform id on the
 * other, and the planner owns that translation.
 */
const SIMPLE_PATHS: ReadonlyArray<readonly string[]> = [
  ["userName"],
  ["externalId"],
  ["displayName"],
  ["name", "givenName"],
  ["name", "familyName"],
  [SCHEMA_ENTERPRISE_USER, "department"],
  [SCHEMA_ENTERPRISE_USER, "costCenter"],
  [SCHEMA_ENTERPRISE_USER, "division"],
  [SCHEMA_ENTERPRISE_USER, "organization"],
  [SCHEMA_ENTERPRISE_USER, "employeeNumber"],
];

function at(doc: JsonObject, path: readonly string[]): Json | undefined {
  let current: Json | undefined = doc;
  for (const key of path) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = current[key];
  }
  return current;
}

function blank(value: Json | undefined): boolean {
  return value === undefined || value === null || value === "";
}

function emailSet(doc: JsonObject): string[] | undefined {
  const emails = doc.emails;
  if (!Array.isArray(emails)) return undefined;
  const values = emails
    .map((email) =>
      email !== null && typeof email === "object" && !Array.isArray(email) && typeof email.value === "string"
        ? email.value.toLowerCase()
        : null,
    )
    .filter((value): value is string => value !== null);
  return [...new Set(values)].sort();
}

/**
 * Names of the attributes whose platform value differs from the desired one. An attribute the
 * desired user does not set is not compared: the platform may fill defaults, and a reconciliation
 * that reports those would repair forever without converging.
 */
export function diffUserFields(desired: JsonObject, platform: JsonObject): string[] {
  const differing: string[] = [];
  for (const path of SIMPLE_PATHS) {
    const want = at(desired, path);
    if (blank(want)) continue;
    const have = at(platform, path);
    if (want !== have)
      differing.push(path[0] === SCHEMA_ENTERPRISE_USER ? `enterprise.${path[1]}` : path.join("."));
  }
  const wantEmails = emailSet(desired);
  if (wantEmails && wantEmails.length > 0) {
    const haveEmails = emailSet(platform) ?? [];
    if (wantEmails.join("\n") !== haveEmails.join("\n")) differing.push("emails");
  }
  return differing;
}
