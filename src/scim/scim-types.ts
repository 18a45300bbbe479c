/**
 * Canonical SCIM shapes as the rest of the bridge sees them, after dialect normalisation
 * (RFC 7643). Resources are kept as JSON; these types name the parts the bridge reads.
 */
export const SCHEMA_USER = "urn:ietf:params:scim:schemas:core:2.0:User";
export const SCHEMA_ENTERPRISE_USER = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const SCHEMA_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const SCHEMA_LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const SCHEMA_PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const SCHEMA_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
export const SCHEMA_SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface ScimMeta {
  resourceType: "User" | "Group";
  created: string;
  lastModified: string;
  /** Weak ETag, e.g. W/"3". Changes on every write. */
  version: string;
  location?: string;
}

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
  display?: string;
}

export interface EnterpriseExtension {
  employeeNumber?: string;
  costCenter?: string;
  organization?: string;
  division?: string;
  department?: string;
  manager?: { value?: string; $ref?: string; displayName?: string };
}

/**
 * A user as stored in the directory: canonical SCIM JSON without server-computed attributes
 * (`meta`, `groups`) and without `password` (write-only, never kept). Extension attributes sit
 * under their schema URN key, as in RFC 7643 §3.3.
 */
export interface ScimUser extends JsonObject {
  schemas: string[];
  id: string;
  userName: string;
  active: boolean;
}

/** A group as stored: members live in their own Redis set, not in this document. */
export interface ScimGroup extends JsonObject {
  schemas: string[];
  id: string;
  displayName: string;
}

export interface GroupMember {
  value: string;
  display?: string;
  type?: "User" | "Group";
}

export interface PatchOperation {
  op: "add" | "remove" | "replace";
  path?: string;
  value?: Json;
}

export type EntityKind = "user" | "group";

/** What a job carries and what the dirty set names: a reference, never a payload. */
export interface EntityRef {
  source: string;
  kind: EntityKind;
  id: string;
}

export function refKey(ref: EntityRef): string {
  return `${ref.source}|${ref.kind}|${ref.id}`;
}

export function parseRefKey(key: string): EntityRef {
  const [source, kind, id] = key.split("|");
  if (!source || (kind !== "user" && kind !== "group") || !id) throw new Error(`bad entity ref ${key}`);
  return { source, kind, id };
}
