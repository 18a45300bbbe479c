import { createHash } from "node:crypto";
import { caseFold, legacyFold } from "../scim/case-fold.js";
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
 *   B:user:idx:userName                 HASH  case-folded userName (caseFold) -> id (unique)
 *   B:user:idx:externalId               HASH  externalId (exact) -> id (unique)
 *   B:user:idx:email:<case-folded email> SET  ids (emails are not unique)
 *   B:group:<id>                        HASH  doc, created, modified, gen, iu (folded displayName), ie, tomb
 *   B:group:<id>:members                SET   member user ids
 *   B:group:ids                         ZSET  live group id -> creation sequence
 *   B:group:idx:displayName             HASH  case-folded displayName (caseFold) -> id (unique)
 *   B:group:idx:externalId              HASH  externalId (exact) -> id (unique)
 *
 *   ${prefix}:deleted:${source}:user:ext:<sha1 hex of externalId>       STRING epoch ms the user with
 *                                        that externalId was deleted (any intake path); expires (7 days)
 *   ${prefix}:deleted:${source}:user:name:<sha1 hex of folded userName>  STRING same, by userName
 *
 * A tombstone (`tomb=1`) keeps only its hash (gen, modified, created) until purgeTombstone deletes it.
 * The deletion records (outside the source's base B: they outlive the entity's keys) are what an
 * out-of-order event source (Okta Event Hooks) consults so that an event published before a
 * deletion does not bring the user back. They are the one trace a deleted user leaves, bounded by
 * their TTL, and hold digests rather than the externalId or userName.
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

/** An entity's own half of a membership: a user's groups, a group's members. */
export function linkSetKey(base: string, kind: EntityKind, id: string): string {
  return kind === "user" ? userGroupsKey(base, id) : groupMembersKey(base, id);
}

export function uniqueIndexKey(base: string, kind: EntityKind, attribute: "name" | "externalId"): string {
  if (attribute === "externalId") return `${base}:${kind}:idx:externalId`;
  return kind === "user" ? `${base}:user:idx:userName` : `${base}:group:idx:displayName`;
}

export function emailIndexKey(base: string, email: string): string {
  return `${base}:user:idx:email:${email}`;
}

/** How long a user's deletion is remembered (deletion records, see above). */
export const DELETION_RECORD_TTL_SECONDS = 7 * 24 * 3600;

/** Where a source's deletion records live (the DELETE script appends `:user:<by>:<sha1>`). */
export function deletionBase(prefix: string, source: string): string {
  return `${prefix}:deleted:${source}`;
}

/**
 * The deletion record of a user by externalId (exact) or by userName (case-folded, trimmed, as
 * the userName index). The DELETE script builds the same key with redis.sha1hex.
 */
export function deletedUserKey(prefix: string, source: string, by: "ext" | "name", value: string): string {
  const digest = createHash("sha1").update(value, "utf8").digest("hex");
  return `${deletionBase(prefix, source)}:user:${by}:${digest}`;
}

/**
 * The deletion-record keys of a user: by externalId, and by userName as the index holds it
 * (caseFold, trimmed), plus its plain lower case when that differs (legacyFold: the key of a user
 * indexed before names were folded).
 */
export function deletedUserKeys(
  prefix: string,
  source: string,
  key: { externalId?: string; userName?: string },
): string[] {
  const keys: string[] = [];
  if (key.externalId) keys.push(deletedUserKey(prefix, source, "ext", key.externalId));
  const userName = key.userName?.trim();
  if (userName) {
    keys.push(deletedUserKey(prefix, source, "name", caseFold(userName)));
    const legacy = legacyFold(userName);
    if (legacy !== undefined) keys.push(deletedUserKey(prefix, source, "name", legacy));
  }
  return keys;
}
