import type { EntityKind } from "../scim/scim-types.js";

/**
 * Key layout of the directory (every key starts with `${prefix}:`; the prefix carries a Redis
 * Cluster hash tag such as `{scim-bridge}`, so all keys share one slot and multi-key Lua scripts
 * are legal). `B` below is the per-source base `${prefix}:src:${source}`; two sources never share
 * a key, so they never see each other's data.
 *
 *   ${prefix}:dirty                     ZSET  refKey(ref) -> epoch ms first marked dirty (whole bridge)
 *   B:seq                               STRING creation counter (stable creation order)
 *   B:user:<id>                         HASH  doc (JSON, no id/meta/groups/password), created, modified,
 *                                             gen (generation = version n of W/"n"), iu, ie, im
 *                                             (the entity's own index keys, so scripts can drop them),
 *                                             tomb=1 once deleted (doc and index fields removed)
 *   B:user:<id>:groups                  SET   group ids the user is a member of
 *   B:user:ids                          ZSET  live user id -> creation sequence
 *   B:user:idx:userName                 HASH  lower-cased userName -> id (unique)
 *   B:user:idx:externalId               HASH  externalId (exact) -> id (unique)
 *   B:user:idx:email:<lower-cased email> SET  ids (emails are not unique)
 *   B:group:<id>                        HASH  doc, created, modified, gen, iu (lower displayName), ie, tomb
 *   B:group:<id>:members                SET   member user ids
 *   B:group:ids                         ZSET  live group id -> creation sequence
 *   B:group:idx:displayName             HASH  lower-cased displayName -> id (unique)
 *   B:group:idx:externalId              HASH  externalId (exact) -> id (unique)
 *
 * A tombstone (`tomb=1`) keeps only its hash (gen, modified, created) until purgeTombstone deletes it.
 */
const STORE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether `id` can be one of the store's ids (randomUUID). Anything else names no entity; checking
 * it first keeps ids like `ids` or `x:groups` from addressing another key of the layout.
 */
export function isStoreId(id: string): boolean {
  return STORE_ID.test(id);
}

export function sourceBase(prefix: string, source: string): string {
  return `${prefix}:src:${source}`;
}

export function dirtyKey(prefix: string): string {
  return `${prefix}:dirty`;
}

export function entityKey(base: string, kind: EntityKind, id: string): string {
  return `${base}:${kind}:${id}`;
}

export function idsKey(base: string, kind: EntityKind): string {
  return `${base}:${kind}:ids`;
}

export function userGroupsKey(base: string, id: string): string {
  return `${base}:user:${id}:groups`;
}

export function groupMembersKey(base: string, id: string): string {
  return `${base}:group:${id}:members`;
}

export function uniqueIndexKey(base: string, kind: EntityKind, attribute: "name" | "externalId"): string {
  if (attribute === "externalId") return `${base}:${kind}:idx:externalId`;
  return kind === "user" ? `${base}:user:idx:userName` : `${base}:group:idx:displayName`;
}

export function emailIndexKey(base: string, email: string): string {
  return `${base}:user:idx:email:${email}`;
}
