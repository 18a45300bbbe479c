import type {
  EntityKind,
  EntityRef,
  GroupMember,
  JsonObject,
  ScimGroup,
  ScimMeta,
  ScimUser,
} from "../scim/scim-types.js";
import type { FilterNode } from "../scim/filter-types.js";

/**
 * The directory: each source's desired state in Redis (ARCHITECTURE.md, "src/directory").
 *
 * Every accepted write is atomic in Redis (one Lua script): the document, its indexes, the
 * generation counter, and the dirty marker change together or not at all. After the script, the
 * store calls the injected `notify` (the jobs layer enqueues a sync); when notify fails or the
 * process dies before it, the dirty marker is still there and the sweeper re-enqueues it.
 */

export interface UserRecord {
  resource: ScimUser;
  meta: ScimMeta;
  /** Generation: increases on every accepted write of this entity. */
  generation: number;
  /** Ids of the groups this user is a member of (membership kept in both directions). */
  groups: string[];
}

export interface GroupRecord {
  resource: ScimGroup;
  meta: ScimMeta;
  generation: number;
  /** Present when asked for (`withMembers`); member user ids in a stable order. */
  members?: GroupMember[];
  memberCount: number;
}

export interface WriteOptions {
  /** If-Match value (a weak ETag as given in `meta.version`); a mismatch throws PreconditionFailedError. */
  ifMatch?: string;
  /**
   * If-None-Match value (RFC 7232 §3.2): when it names the current version, or is `*` (the entity
   * exists), the write throws PreconditionFailedError and changes nothing.
   */
  ifNoneMatch?: string;
  /** A condition on, and a write of, another intake's ordering state, atomic with this write. */
  guard?: WriteGuard;
}

/**
 * Optimistic concurrency for an intake that decides a write from state of its own (the Okta hooks'
 * ordering marks): the write applies only if the hash `key` still has the revision `expected` (its
 * field `n`, "0" when absent), and then, in the same script, `fields` are set on it, `n` is
 * incremented and its TTL renewed. Otherwise the write changes nothing and throws
 * PreconditionFailedError, and the caller decides again. A write that would change nothing
 * (same document, same members: redis-directory-store.ts, unchangedAt) returns the current record
 * without checking or applying the guard.
 */
export interface WriteGuard {
  key: string;
  expected: string;
  fields: Record<string, string>;
  /** When set, this field is set to `<entity id>:<meta.version after the write>`. */
  versionField?: string;
  ttlSeconds: number;
}

export interface DeleteOptions extends WriteOptions {
  /**
   * Users: the time (epoch ms) the deletion is dated by in its deletion record, which out-of-order
   * event sources consult (default: now). An Okta event gives its `published` time.
   */
  deletedAt?: number;
}

export interface GroupUpdateOptions extends WriteOptions {
  /** Give `mutate` the current member list (`current.members`): one SMEMBERS more per attempt. */
  withMembers?: boolean;
}

export interface ListQuery {
  filter?: FilterNode;
  /** 1-based, RFC 7644 §3.4.2.4. */
  startIndex: number;
  /** Page size, already clamped to the maximum by the caller. */
  count: number;
}

export interface ListResult<T> {
  totalResults: number;
  items: T[];
}

/** A membership change of one group, already resolved from the PATCH ops (in order). */
export interface MembershipChange {
  /** When set, the member list becomes exactly this (then add/remove apply on top). */
  replace?: string[];
  add?: string[];
  remove?: string[];
}

/** What the sync worker reads for one entity. */
export interface SyncSnapshot<T> {
  ref: EntityRef;
  /** null = deleted at the source (a tombstone remains until the sync deprovisions it). */
  desired: T | null;
  generation: number;
}

export interface DirtyEntry {
  ref: EntityRef;
  /** Epoch ms when the entity was first marked dirty since its last clean sync. */
  since: number;
}

export interface DirectoryStore {
  // --- users (intake side) ---
  createUser(
    source: string,
    resource: Omit<ScimUser, "id">,
    options?: { guard?: WriteGuard },
  ): Promise<UserRecord>;
  getUser(source: string, id: string): Promise<UserRecord | null>;
  /** Full replace (PUT). `id`, `meta`, `groups` in the body are ignored. */
  replaceUser(
    source: string,
    id: string,
    resource: Omit<ScimUser, "id">,
    options?: WriteOptions,
  ): Promise<UserRecord>;
  /**
   * Read-modify-write (PATCH): `mutate` gets the current resource and returns the next one; the
   * store writes it only if nobody wrote in between (it retries `mutate` on a race). A write that
   * changes nothing is not applied (no new version, no sync): the user is returned as it stands.
   */
  updateUser(
    source: string,
    id: string,
    mutate: (current: UserRecord) => Omit<ScimUser, "id">,
    options?: WriteOptions,
  ): Promise<UserRecord>;
  /**
   * Removes the user from every group (those groups become dirty) and leaves a tombstone for the
   * sync. The deletion is recorded by externalId and userName for a bounded time (deletedUserAt).
   */
  deleteUser(source: string, id: string, options?: DeleteOptions): Promise<void>;
  listUsers(source: string, query: ListQuery): Promise<ListResult<UserRecord>>;

  // --- groups (intake side) ---
  /** Returns the group with `members` (the ids written, sorted): callers need not read it back. */
  createGroup(
    source: string,
    resource: Omit<ScimGroup, "id">,
    members: string[],
    options?: { guard?: WriteGuard },
  ): Promise<GroupRecord>;
  getGroup(source: string, id: string, options?: { withMembers?: boolean }): Promise<GroupRecord | null>;
  /**
   * Returns the group with `members` (the ids written, sorted), as createGroup does. The same
   * document and members change nothing: not applied, the group is returned as it stands.
   */
  replaceGroup(
    source: string,
    id: string,
    resource: Omit<ScimGroup, "id">,
    members: string[],
    options?: WriteOptions,
  ): Promise<GroupRecord>;
  /**
   * PATCH of a group: the document change (displayName, externalId, ...) and the membership
   * change are applied together, atomically. Unknown member ids throw BadRequestError (invalidValue).
   * With `withMembers`, `mutate` sees the members too; the write still applies only if the group's
   * generation (which every membership change bumps) is the one read, else `mutate` runs again.
   * A change that leaves the document and the members as they are is not applied (no new
   * version, no sync): the group is returned as read.
   */
  updateGroup(
    source: string,
    id: string,
    mutate: (current: GroupRecord) => { resource: Omit<ScimGroup, "id">; members?: MembershipChange },
    options?: GroupUpdateOptions,
  ): Promise<GroupRecord>;
  deleteGroup(source: string, id: string, options?: WriteOptions): Promise<void>;
  listGroups(source: string, query: ListQuery & { withMembers?: boolean }): Promise<ListResult<GroupRecord>>;

  // --- sync side ---
  /** The desired state of one entity, or a tombstone. null when the entity never existed or is purged. */
  snapshotUser(source: string, id: string): Promise<SyncSnapshot<UserRecord> | null>;
  snapshotGroup(source: string, id: string): Promise<SyncSnapshot<GroupRecord> | null>;
  /** Clears the dirty marker only if the entity's generation is still `generation`; true if cleared. */
  markClean(ref: EntityRef, generation: number): Promise<boolean>;
  /**
   * Removes a tombstone (and its keys) once the platform side is deprovisioned, if still at
   * `generation`. Its dirty marker goes with it, or, with `syncAgain`, is left (set if absent) in
   * the same script: the sweeper then brings the sync of the absent entity, which drops what the
   * sync state still records of it (a tombstone given up: AdminService.releaseTombstone).
   */
  purgeTombstone(ref: EntityRef, generation: number, options?: { syncAgain?: boolean }): Promise<boolean>;
  /** Dirty entities first marked before `olderThan` (epoch ms), oldest first. */
  listDirty(olderThan: number, limit: number): Promise<DirtyEntry[]>;
  countDirty(): Promise<number>;
  /** Marks an entity dirty without changing it (resync, reconcile repair). */
  markDirty(ref: EntityRef): Promise<void>;
  /** Streams every id of a source's users or groups (for resync fan-out and reconcile), page by page. */
  scanIds(source: string, kind: EntityKind, pageSize?: number): AsyncIterable<string[]>;
  countEntities(source: string, kind: EntityKind): Promise<number>;
  /**
   * Finds a user by a unique key (for webhooks): externalId first, then userName (case-insensitive,
   * surrounding whitespace ignored as at intake).
   */
  findUserId(source: string, key: { externalId?: string; userName?: string }): Promise<string | null>;
  findGroupId(source: string, key: { externalId?: string; displayName?: string }): Promise<string | null>;
}

/** Called after every accepted write (and by markDirty). Implemented by the jobs layer. */
export type ChangeNotifier = (refs: EntityRef[]) => Promise<void>;

export type { JsonObject };
