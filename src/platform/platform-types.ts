/**
 * The platform as the bridge sees it: the typed operations of the contract
 * (src/platform/contract/platform-api.yaml, a copy of the shared platform-api.yaml).
 * `PlatformClient` is the only code that talks to the platform over HTTP(S).
 */
import type { Json, JsonObject, PatchOperation } from "../scim/scim-types.js";

export interface PlatformScimUser extends JsonObject {
  id: string;
  userName: string;
}

export interface PlatformScimGroup extends JsonObject {
  id: string;
  displayName: string;
}

export type BulkUserAction = "ACTIVATE" | "DEACTIVATE" | "DELETE";

export interface BulkUserResult {
  succeeded: string[];
  failed: Array<{ userId: string; code: string; message: string }>;
}

export type UserAttributeType = "string" | "number" | "boolean" | "string_array" | "number_array";

export interface UserAttribute {
  id: number;
  name: string;
  displayName?: string;
  type: UserAttributeType;
}

export type UserAttributeValueValue = string | number | boolean | string[] | number[] | null;

export interface UserAttributeValue {
  userId: string;
  attributeId: number;
  name: string;
  type: UserAttributeType;
  value: UserAttributeValueValue;
}

export interface EmbedTenant {
  name: string;
  displayName?: string;
}

export interface EmbedGroup {
  id: string;
  name: string;
  description?: string;
  memberCount?: number;
}

export interface EmbedUser {
  id: string;
  externalId: string;
  email?: string;
  displayName?: string;
}

export interface EmbedUserInput {
  externalId: string;
  email?: string;
  displayName?: string;
}

/** Why a platform call failed, decided once, in the client. */
export type PlatformFailureCode =
  | "conflict" // 409
  | "not_found" // 404
  | "bad_request" // 400, 422 and other 4xx
  | "unauthorized" // 401
  | "forbidden" // 403
  | "rate_limited" // 429 (retries exhausted)
  | "server" // 5xx
  | "timeout"
  | "network" // connection refused, reset, dropped
  | "invalid_response"; // a 2xx whose body breaks the contract

export interface PlatformClient {
  // SCIM users (/api/scim/v2/Users)
  /** Streams every user page by page (startIndex/count), optionally filtered. */
  listUsers(options?: { filter?: string; pageSize?: number }): AsyncIterable<PlatformScimUser>;
  findUserByUserName(userName: string): Promise<PlatformScimUser | null>;
  getUser(id: string): Promise<PlatformScimUser | null>;
  /** 409 throws PlatformError with code "conflict" (never retried). */
  createUser(user: JsonObject): Promise<PlatformScimUser>;
  replaceUser(id: string, user: JsonObject): Promise<PlatformScimUser>;
  patchUser(id: string, operations: PatchOperation[]): Promise<void>;
  /** false when the user did not exist (404). */
  deleteUser(id: string): Promise<boolean>;

  // SCIM groups (/api/scim/v2/Groups)
  listGroups(options?: {
    filter?: string;
    excludeMembers?: boolean;
    pageSize?: number;
  }): AsyncIterable<PlatformScimGroup>;
  findGroupByDisplayName(displayName: string): Promise<PlatformScimGroup | null>;
  getGroup(id: string): Promise<PlatformScimGroup | null>;
  createGroup(group: JsonObject): Promise<PlatformScimGroup>;
  replaceGroup(id: string, group: JsonObject): Promise<void>;
  patchGroup(id: string, operations: PatchOperation[]): Promise<void>;
  deleteGroup(id: string): Promise<boolean>;

  // Bulk user actions (/api/v1/users/bulk), at most 100 ids a call (the client refuses more)
  bulkUsers(action: BulkUserAction, userIds: string[]): Promise<BulkUserResult>;

  // User attributes
  listUserAttributes(type?: UserAttributeType): Promise<UserAttribute[]>;
  createUserAttribute(input: {
    name: string;
    type: UserAttributeType;
    displayName?: string;
  }): Promise<UserAttribute>;
  updateUserAttribute(id: number, input: { displayName?: string }): Promise<UserAttribute>;
  /** null when the user does not exist (404). */
  getUserAttributeValues(userId: string): Promise<UserAttributeValue[] | null>;
  upsertUserAttributeValue(input: {
    userId: string;
    attributeId: number;
    value: UserAttributeValueValue;
  }): Promise<UserAttributeValue>;

  // Embed tenants (cursor lists, streamed)
  listEmbedTenants(): AsyncIterable<EmbedTenant>;
  deleteEmbedTenant(name: string): Promise<void>;
  listEmbedUsers(tenant: string): AsyncIterable<EmbedUser>;
  listEmbedGroups(tenant: string): AsyncIterable<EmbedGroup>;
  createEmbedGroup(tenant: string, input: { name: string; description?: string }): Promise<EmbedGroup>;
  getEmbedGroup(tenant: string, id: string): Promise<EmbedGroup | null>;
  updateEmbedGroup(
    tenant: string,
    id: string,
    input: { name?: string; description?: string },
  ): Promise<EmbedGroup>;
  deleteEmbedGroup(tenant: string, id: string): Promise<boolean>;
  listEmbedGroupMembers(tenant: string, groupId: string): AsyncIterable<EmbedUser>;
  /** Chunks by 100 itself. */
  addEmbedGroupMembers(tenant: string, groupId: string, users: EmbedUserInput[]): Promise<void>;
  removeEmbedGroupMembers(tenant: string, groupId: string, externalIds: string[]): Promise<void>;
}

export type { Json };
