/** SCIM JSON views of stored users and groups, and the `attr eq "value"` filters (RFC 7644 §3.4.2.2). */
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_LIST, SCHEMA_USER } from "../../scim/scim-types.js";
import { violation } from "./emulator-error.js";
import type { ScimStore, StoredGroup, StoredUser } from "./scim-store.js";

export function userView(user: StoredUser): Record<string, unknown> {
  const hasEnterprise = Object.keys(user.enterprise).length > 0;
  const { manager, ...enterprise } = user.enterprise;
  const name: Record<string, string> = {};
  if (user.givenName !== undefined) name.givenName = user.givenName;
  if (user.familyName !== undefined) name.familyName = user.familyName;
  return {
    schemas: hasEnterprise ? [SCHEMA_USER, SCHEMA_ENTERPRISE_USER] : [SCHEMA_USER],
    id: user.id,
    userName: user.userName,
    ...(user.externalId !== undefined ? { externalId: user.externalId } : {}),
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(user.displayName !== undefined ? { displayName: user.displayName } : {}),
    ...(user.emails.length > 0 ? { emails: user.emails.map((e) => ({ ...e })) } : {}),
    active: user.active,
    ...(hasEnterprise
      ? {
          [SCHEMA_ENTERPRISE_USER]: {
            ...enterprise,
            ...(manager !== undefined ? { manager: { value: manager } } : {}),
          },
        }
      : {}),
    meta: {
      resourceType: "User",
      created: user.created,
      lastModified: user.lastModified,
      version: `W/"${user.version}"`,
      location: `/api/scim/v2/Users/${user.id}`,
    },
  };
}

export function groupView(group: StoredGroup, store: ScimStore, withMembers = true): Record<string, unknown> {
  return {
    schemas: [SCHEMA_GROUP],
    id: group.id,
    displayName: group.displayName,
    ...(group.externalId !== undefined ? { externalId: group.externalId } : {}),
    ...(withMembers
      ? {
          members: [...group.members].map((value) => {
            const user = store.users.get(value);
            return {
              value,
              ...(user ? { display: user.userName } : {}),
              $ref: `/api/scim/v2/Users/${value}`,
            };
          }),
        }
      : {}),
    meta: {
      resourceType: "Group",
      created: group.created,
      lastModified: group.lastModified,
      version: `W/"${group.version}"`,
      location: `/api/scim/v2/Groups/${group.id}`,
    },
  };
}

export interface EqFilter {
  attribute: string;
  value: string;
}

const FILTER = /^\s*([A-Za-z][\w.:-]*)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i;

/** Parses the only filter form the contract promises: `attribute eq "value"`. */
export function parseEqFilter(filter: string, allowed: readonly string[]): EqFilter {
  const match = FILTER.exec(filter);
  if (!match)
    throw violation(`unsupported filter: only 'attribute eq "value"' is in the contract`, "invalidFilter");
  const attribute = allowed.find((a) => a.toLowerCase() === (match[1] ?? "").toLowerCase());
  if (!attribute) throw violation(`unsupported filter attribute ${match[1]}`, "invalidFilter");
  return { attribute, value: JSON.parse(`"${match[2] ?? ""}"`) as string };
}

export const USER_FILTER_ATTRIBUTES = ["userName", "externalId", "emails.value", "displayName"] as const;
export const GROUP_FILTER_ATTRIBUTES = ["displayName", "externalId"] as const;

/** Users matching the filter; userName uses the index, the rest scan. externalId is case-exact. */
export function filterUsers(store: ScimStore, filter: EqFilter): StoredUser[] {
  const lower = filter.value.toLowerCase();
  switch (filter.attribute) {
    case "userName": {
      const id = store.userIdByUserName(filter.value);
      const user = id !== undefined ? store.users.get(id) : undefined;
      return user ? [user] : [];
    }
    case "externalId":
      return store.userIdsByExternalId(filter.value).flatMap((id) => {
        const user = store.users.get(id);
        return user ? [user] : [];
      });
    case "emails.value":
      return [...store.users.values()].filter((u) => u.emails.some((e) => e.value.toLowerCase() === lower));
    default:
      return [...store.users.values()].filter((u) => u.displayName?.toLowerCase() === lower);
  }
}

export function filterGroups(store: ScimStore, filter: EqFilter): StoredGroup[] {
  if (filter.attribute === "displayName") {
    const id = store.groupIdByDisplayName(filter.value);
    const group = id !== undefined ? store.groups.get(id) : undefined;
    return group ? [group] : [];
  }
  return [...store.groups.values()].filter((g) => g.externalId === filter.value);
}

export function listResponse(
  total: number,
  startIndex: number,
  resources: unknown[],
): Record<string, unknown> {
  return {
    schemas: [SCHEMA_LIST],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
