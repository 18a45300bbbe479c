/**
 * The contract's paths, exactly as platform-api.yaml writes them (trailing slashes included),
 * with every path parameter URL-encoded; and SCIM filter literals.
 */

const SCIM = "/api/scim/v2";
const e = encodeURIComponent;

export const platformPaths = {
  users: () => `${SCIM}/Users`,
  user: (id: string) => `${SCIM}/Users/${e(id)}`,
  groups: () => `${SCIM}/Groups`,
  group: (id: string) => `${SCIM}/Groups/${e(id)}`,
  bulkUsers: () => "/api/v1/users/bulk",
  userAttributes: () => "/api/v1/user-attributes/",
  userAttribute: (id: number) => `/api/v1/user-attributes/${e(String(id))}`,
  userAttributeValues: (userId: string) => `/api/v1/user-attribute-values/${e(userId)}`,
  upsertUserAttributeValue: () => "/api/v1/user-attribute-values/",
  embedTenants: () => "/api/v1/embed-tenants/",
  /** No trailing slash since platform v0.3.0. */
  embedTenant: (name: string) => `/api/v1/embed-tenants/${e(name)}`,
  embedUsers: (tenant: string) => `/api/v1/embed-tenants/${e(tenant)}/users`,
  embedGroups: (tenant: string) => `/api/v1/embed-tenants/${e(tenant)}/groups`,
  embedGroup: (tenant: string, id: string) => `/api/v1/embed-tenants/${e(tenant)}/groups/${e(id)}`,
  embedGroupMembers: (tenant: string, id: string) =>
    `/api/v1/embed-tenants/${e(tenant)}/groups/${e(id)}/users`,
} as const;

/**
 * A SCIM filter string literal (RFC 7644 §3.4.2.2: compValue is a JSON string), so `"` and `\`
 * (and control characters) are escaped.
 */
export function scimStringLiteral(value: string): string {
  return JSON.stringify(value);
}

/** `attribute eq "value"`, the value escaped. */
export function scimEqFilter(attribute: string, value: string): string {
  return `${attribute} eq ${scimStringLiteral(value)}`;
}
