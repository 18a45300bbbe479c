import { randomUUID } from "node:crypto";
import type { Redis, RedisOptions } from "ioredis";
import { NotFoundError, PreconditionFailedError, ServiceUnavailableError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import { caseFold, legacyFold } from "../scim/case-fold.js";
import type { FilterNode } from "../scim/filter-types.js";
import {
  type EntityKind,
  type EntityRef,
  type JsonObject,
  refKey,
  type ScimGroup,
  type ScimUser,
} from "../scim/scim-types.js";
import {
  changesMembers,
  dirtyEntries,
  type StoredDoc,
  sameDocument,
  storedGroup,
  storedUser,
} from "./directory-codec.js";
import {
  DELETION_RECORD_TTL_SECONDS,
  dirtyKey,
  idsKey,
  linkSetKey,
  sourceBase,
  uniqueIndexKey,
} from "./directory-keys.js";
import { type FilterMatcher, listEntities, scanIdPages } from "./directory-list.js";
import { groupFromWrite, readFields, readGroups, readUsers, userFromWrite } from "./directory-reader.js";
import type {
  ChangeNotifier,
  DeleteOptions,
  DirectoryStore,
  DirtyEntry,
  GroupRecord,
  GroupUpdateOptions,
  ListQuery,
  ListResult,
  MembershipChange,
  SyncSnapshot,
  UserRecord,
  WriteGuard,
  WriteOptions,
} from "./directory-types.js";
import { DirectoryWriter, type PutOutcome } from "./directory-writer.js";
import { guarded } from "./redis-failure.js";
import { checkIfMatch, checkIfNoneMatch, expectedGenerationOf } from "./if-match.js";
import {
  DEFAULT_RACE_RETRY,
  RACED,
  type Raced,
  type RaceRetryPolicy,
  retryWhileRaced,
} from "./write-retry.js";

/**
 * The directory in Redis. Key layout: see directory-keys.ts (all under `${prefix}:`, one hash
 * tag, per-source bases). Every accepted write is one Lua script (directory-scripts.ts); after it
 * the store calls `notify`, and a failing notify is only logged (the dirty marker is durable and
 * the sweeper re-enqueues it).
 *
 * What the caller must give: an ioredis client created with `maxRetriesPerRequest: 1` (or 0),
 * `enableOfflineQueue: false` and a `commandTimeout` (e.g. 2000 ms), connected ("ready") before
 * traffic, so a Redis outage answers 503 at once instead of queueing requests. Every Redis failure
 * surfaces as ServiceUnavailableError.
 *
 * Membership changes (MembershipChange) apply in this order: `replace` first, then `add`, then
 * `remove` (an id in both add and remove ends up not a member). Membership changes bump the
 * group's generation only, not the users' (a user's `groups` is derived, read-only data).
 */
/**
 * The ioredis options the store's client should be created with (spread them into `new Redis(url,
 * {...directoryRedisOptions})`): fail a command after one retry, never queue while disconnected, and
 * time out a command after 2 s, so a Redis outage answers 503 fast instead of hanging requests.
 */
export const directoryRedisOptions: Readonly<Partial<RedisOptions>> = Object.freeze({
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: 2000,
});

export interface RedisDirectoryStoreOptions {
  redis: Redis;
  /** Key prefix with a hash tag, e.g. `{scim-bridge}`. */
  prefix: string;
  notify: ChangeNotifier;
  logger?: Logger;
  /** Evaluates a SCIM filter against a resource plus its meta (src/scim/filter-eval.ts). */
  matchesFilter: (node: FilterNode, resource: JsonObject) => boolean;
  /**
   * Attempts (the first included) of a read-modify-write (updateUser, updateGroup, replaceUser)
   * whose write keeps losing the generation race to other writers, before it answers 503.
   * Default 30 (write-retry.ts).
   */
  maxAttempts?: number;
  /** No new attempt of such a write starts later than this many ms after its first. Default 2000. */
  retryBudgetMs?: number;
  /** Ids read per step of a filter scan. Default 500. */
  scanChunkSize?: number;
  /** How long a user's deletion record is kept (directory-keys.ts). Default 7 days. */
  deletionRecordTtlSeconds?: number;
}

type GroupMutation = { resource: Omit<ScimGroup, "id">; members?: MembershipChange };

/**
 * The one "no change" rule of every update, PUT or PATCH, user or group: a write changes nothing
 * when the document it would store equals the stored one (sameDocument: the same data, whatever
 * the order of its keys) and its membership change, if any, leaves the members as they are. Such a
 * write is not applied: the resource, its version (ETag), lastModified, generation and dirty
 * marker stay as they are, no sync is queued, and the caller gets the entity as it stands. If-Match
 * is checked all the same, and an unknown id is still a 404.
 *
 * This is the document half: the generation at which `current` holds the same document as
 * `stored`, or undefined when they differ. Without a membership change that settles it; with one,
 * the write script gets this generation (`sameAt`) and decides atomically with the member set it
 * reads: at another generation (a concurrent write), it writes as usual.
 */
function unchangedAt(
  kind: EntityKind,
  current: UserRecord | GroupRecord,
  stored: StoredDoc,
): number | undefined {
  const before = kind === "user" ? storedUser(current.resource) : storedGroup(current.resource);
  return sameDocument(stored.doc, before.doc) ? current.generation : undefined;
}

export class RedisDirectoryStore implements DirectoryStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly notifier: ChangeNotifier;
  private readonly logger?: Logger;
  private readonly matchesFilter: FilterMatcher;
  private readonly raceRetry: RaceRetryPolicy;
  private readonly scanChunkSize: number;
  private readonly writer: DirectoryWriter;
  private readonly deletionTtl: number;

  constructor(options: RedisDirectoryStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.notifier = options.notify;
    this.logger = options.logger;
    this.matchesFilter = options.matchesFilter;
    this.raceRetry = {
      ...DEFAULT_RACE_RETRY,
      maxAttempts: options.maxAttempts ?? DEFAULT_RACE_RETRY.maxAttempts,
      budgetMs: options.retryBudgetMs ?? DEFAULT_RACE_RETRY.budgetMs,
    };
    this.scanChunkSize = options.scanChunkSize ?? 500;
    this.writer = new DirectoryWriter(this.redis, this.prefix);
    this.deletionTtl = options.deletionRecordTtlSeconds ?? DELETION_RECORD_TTL_SECONDS;
  }

  // --- users ---

  createUser(
    source: string,
    resource: Omit<ScimUser, "id">,
    options?: { guard?: WriteGuard },
  ): Promise<UserRecord> {
    return guarded(async () => {
      const stored = storedUser(resource);
      const id = randomUUID();
      const out = await this.write("user", source, id, "create", "", stored, undefined, options?.guard);
      await this.notify([{ source, kind: "user", id }]);
      return userFromWrite(id, stored.doc, out);
    });
  }

  getUser(source: string, id: string): Promise<UserRecord | null> {
    return guarded(
      async () => (await readUsers(this.redis, sourceBase(this.prefix, source), [id]))[0] ?? null,
    );
  }

  /** PUT: a read-modify-write whose new document is the body (one code path with PATCH). */
  replaceUser(
    source: string,
    id: string,
    resource: Omit<ScimUser, "id">,
    options?: WriteOptions,
  ): Promise<UserRecord> {
    return this.updateUser(source, id, () => resource, options);
  }

  updateUser(
    source: string,
    id: string,
    mutate: (current: UserRecord) => Omit<ScimUser, "id">,
    options?: WriteOptions,
  ): Promise<UserRecord> {
    const base = sourceBase(this.prefix, source);
    return this.readModifyWrite("user", id, options?.ifMatch, async () => {
      const current = (await readUsers(this.redis, base, [id]))[0];
      if (!current) throw new NotFoundError(`User ${id} not found`);
      checkIfMatch(current.generation, options?.ifMatch);
      checkIfNoneMatch(current.generation, options?.ifNoneMatch);
      const stored = storedUser(mutate(current));
      // A user has no membership change: the document decides (unchangedAt).
      if (unchangedAt("user", current, stored) !== undefined) return current;
      const expected = String(current.generation);
      const out = await this.write("user", source, id, "update", expected, stored, undefined, options?.guard);
      if (out.raced) return RACED;
      await this.notify([{ source, kind: "user", id }]);
      return userFromWrite(id, stored.doc, out);
    });
  }

  deleteUser(source: string, id: string, options?: DeleteOptions): Promise<void> {
    return this.deleteEntity("user", source, id, options);
  }

  listUsers(source: string, query: ListQuery): Promise<ListResult<UserRecord>> {
    return guarded(
      () => listEntities(this.listContext(source, "user", false), query) as Promise<ListResult<UserRecord>>,
    );
  }

  // --- groups ---

  createGroup(
    source: string,
    resource: Omit<ScimGroup, "id">,
    members: string[],
    options?: { guard?: WriteGuard },
  ): Promise<GroupRecord> {
    return guarded(async () => {
      const stored = storedGroup(resource);
      const id = randomUUID();
      const change = { replace: members };
      const out = await this.write("group", source, id, "create", "", stored, change, options?.guard);
      await this.notify([{ source, kind: "group", id }]);
      return groupFromWrite(id, stored.doc, out, [...new Set(members)].sort());
    });
  }

  getGroup(source: string, id: string, options?: { withMembers?: boolean }): Promise<GroupRecord | null> {
    return guarded(async () => {
      const base = sourceBase(this.prefix, source);
      return (await readGroups(this.redis, base, [id], options?.withMembers ?? false))[0] ?? null;
    });
  }

  replaceGroup(
    source: string,
    id: string,
    resource: Omit<ScimGroup, "id">,
    members: string[],
    options?: WriteOptions,
  ): Promise<GroupRecord> {
    return guarded(async () => {
      const stored = storedGroup(resource);
      const base = sourceBase(this.prefix, source);
      const expected = await expectedGenerationOf(this.redis, "group", base, id, options);
      // Read only to tell whether the write changes anything; If-Match is checked by the script.
      const current = (await readGroups(this.redis, base, [id], false))[0];
      const sameAt = current === undefined ? undefined : unchangedAt("group", current, stored);
      const change = { replace: members };
      const out = await this.write(
        "group",
        source,
        id,
        "update",
        expected,
        stored,
        change,
        undefined,
        sameAt,
      );
      if (out.raced) throw new PreconditionFailedError();
      const written = [...new Set(members)].sort();
      if (out.unchanged && current)
        return groupFromWrite(id, storedGroup(current.resource).doc, out, written);
      await this.notify([{ source, kind: "group", id }]);
      return groupFromWrite(id, stored.doc, out, written);
    });
  }

  /**
   * PATCH: the returned record has `memberCount` but no `members` (read them with getGroup).
   * The members read with `withMembers` come after the generation in one pipeline, so a list
   * newer than that generation fails the write's generation check and `mutate` runs again.
   */
  updateGroup(
    source: string,
    id: string,
    mutate: (current: GroupRecord) => GroupMutation,
    options?: GroupUpdateOptions,
  ): Promise<GroupRecord> {
    const base = sourceBase(this.prefix, source);
    const withMembers = options?.withMembers ?? false;
    return this.readModifyWrite("group", id, options?.ifMatch, async () => {
      const current = (await readGroups(this.redis, base, [id], withMembers))[0];
      if (!current) throw new NotFoundError(`Group ${id} not found`);
      checkIfMatch(current.generation, options?.ifMatch);
      checkIfNoneMatch(current.generation, options?.ifNoneMatch);
      const next = mutate(current);
      const stored = storedGroup(next.resource);
      const sameAt = unchangedAt("group", current, stored);
      // Without a membership change the document decides; with one, the script (unchangedAt).
      if (sameAt !== undefined && !changesMembers(next.members)) return current;
      const expected = String(current.generation);
      const out = await this.write(
        "group",
        source,
        id,
        "update",
        expected,
        stored,
        next.members,
        options?.guard,
        sameAt,
      );
      if (out.raced) return RACED;
      if (out.unchanged) return current;
      await this.notify([{ source, kind: "group", id }]);
      return groupFromWrite(id, stored.doc, out);
    });
  }

  deleteGroup(source: string, id: string, options?: WriteOptions): Promise<void> {
    return this.deleteEntity("group", source, id, options);
  }

  listGroups(source: string, query: ListQuery & { withMembers?: boolean }): Promise<ListResult<GroupRecord>> {
    const ctx = this.listContext(source, "group", query.withMembers ?? false);
    return guarded(() => listEntities(ctx, query) as Promise<ListResult<GroupRecord>>);
  }

  // --- sync side ---

  snapshotUser(source: string, id: string): Promise<SyncSnapshot<UserRecord> | null> {
    return this.snapshot("user", source, id, async (base) => (await readUsers(this.redis, base, [id]))[0]);
  }

  snapshotGroup(source: string, id: string): Promise<SyncSnapshot<GroupRecord> | null> {
    return this.snapshot(
      "group",
      source,
      id,
      async (base) => (await readGroups(this.redis, base, [id], true))[0],
    );
  }

  markClean(ref: EntityRef, generation: number): Promise<boolean> {
    return guarded(() => this.writer.markClean(ref, sourceBase(this.prefix, ref.source), generation));
  }

  purgeTombstone(
    ref: EntityRef,
    generation: number,
    options: { syncAgain?: boolean } = {},
  ): Promise<boolean> {
    const base = sourceBase(this.prefix, ref.source);
    const extra = linkSetKey(base, ref.kind, ref.id);
    return guarded(() => this.writer.purge(ref, base, extra, generation, options.syncAgain === true));
  }

  listDirty(olderThan: number, limit: number): Promise<DirtyEntry[]> {
    return guarded(async () => {
      const key = dirtyKey(this.prefix);
      const raw = await this.redis.zrangebyscore(
        key,
        "-inf",
        `(${olderThan}`,
        "WITHSCORES",
        "LIMIT",
        0,
        limit,
      );
      return dirtyEntries(raw, (member) =>
        this.logger?.warn({ member }, "ignoring a malformed dirty-set member"),
      );
    });
  }

  countDirty(): Promise<number> {
    return guarded(() => this.redis.zcard(dirtyKey(this.prefix)));
  }

  markDirty(ref: EntityRef): Promise<void> {
    return guarded(async () => {
      await this.redis.zadd(dirtyKey(this.prefix), "NX", Date.now(), refKey(ref));
      await this.notify([ref]);
    });
  }

  scanIds(source: string, kind: EntityKind, pageSize = 500): AsyncIterable<string[]> {
    return scanIdPages(this.redis, idsKey(sourceBase(this.prefix, source), kind), pageSize);
  }

  countEntities(source: string, kind: EntityKind): Promise<number> {
    return guarded(() => this.redis.zcard(idsKey(sourceBase(this.prefix, source), kind)));
  }

  findUserId(source: string, key: { externalId?: string; userName?: string }): Promise<string | null> {
    return this.findId("user", source, key.externalId, key.userName);
  }

  findGroupId(source: string, key: { externalId?: string; displayName?: string }): Promise<string | null> {
    return this.findId("group", source, key.externalId, key.displayName);
  }

  // --- internals ---

  /**
   * The optimistic loop of updateUser and updateGroup: `attempt` reads the entity, decides the
   * write from it and writes only if the generation is still the one read, or returns RACED having
   * written nothing. A raced write without If-Match runs again on the latest state after a short
   * random pause (write-retry.ts), until it applies or the attempt budget is spent (503, for
   * contention that never lets up). A raced write with If-Match is 412 at once: the version the
   * client named is gone, and running it again would apply it to a state it never saw.
   */
  private readModifyWrite<T>(
    kind: EntityKind,
    id: string,
    ifMatch: string | undefined,
    attempt: () => Promise<T | Raced>,
  ): Promise<T> {
    return guarded(() =>
      retryWhileRaced(
        this.raceRetry,
        async () => {
          const result = await attempt();
          if (result === RACED && ifMatch) throw new PreconditionFailedError();
          return result;
        },
        (attempts, elapsedMs) => {
          this.logger?.warn(
            { kind, id, attempts, elapsedMs },
            "a directory write kept losing the race to concurrent writers; answering 503",
          );
          return new ServiceUnavailableError(`Too many concurrent writes to this ${kind}; retry`);
        },
      ),
    );
  }

  private write(
    kind: EntityKind,
    source: string,
    id: string,
    mode: "create" | "update",
    expected: string,
    stored: StoredDoc,
    members?: MembershipChange,
    guard?: WriteGuard,
    sameAt?: number,
  ): Promise<PutOutcome> {
    const base = sourceBase(this.prefix, source);
    return this.writer.put({ kind, source, base, id, mode, expected, sameAt, stored, members, guard });
  }

  private findId(
    kind: EntityKind,
    source: string,
    externalId?: string,
    name?: string,
  ): Promise<string | null> {
    return guarded(async () => {
      const base = sourceBase(this.prefix, source);
      if (externalId) {
        const id = await this.redis.hget(uniqueIndexKey(base, kind, "externalId"), externalId);
        if (id) return id;
      }
      if (!name) return null;
      // Names are stored trimmed (canonical-resource.ts); one stored before that keeps its spaces.
      // Keys are case-folded (caseFold); one written before folding has its plain lower case.
      const index = uniqueIndexKey(base, kind, "name");
      const key = caseFold(name);
      const trimmed = key.trim();
      const id = trimmed === "" ? null : await this.redis.hget(index, trimmed);
      if (id) return id;
      if (trimmed !== key) {
        const spaced = await this.redis.hget(index, key);
        if (spaced) return spaced;
      }
      const legacy = legacyFold(name.trim());
      return legacy === undefined ? null : this.redis.hget(index, legacy);
    });
  }

  private deleteEntity(kind: EntityKind, source: string, id: string, options?: DeleteOptions): Promise<void> {
    return guarded(async () => {
      const base = sourceBase(this.prefix, source);
      const expected = await expectedGenerationOf(this.redis, kind, base, id, options);
      const deletion = { at: options?.deletedAt, ttlSeconds: this.deletionTtl };
      const out = await this.writer.remove(kind, source, base, id, expected, deletion, options?.guard);
      if (out.raced) throw new PreconditionFailedError();
      const groups = out.touchedGroups.map((group): EntityRef => ({ source, kind: "group", id: group }));
      await this.notify([{ source, kind, id }, ...groups]);
    });
  }

  private snapshot<T extends UserRecord | GroupRecord>(
    kind: EntityKind,
    source: string,
    id: string,
    read: (base: string) => Promise<T | undefined>,
  ): Promise<SyncSnapshot<T> | null> {
    return guarded(async () => {
      const base = sourceBase(this.prefix, source);
      const ref: EntityRef = { source, kind, id };
      const record = await read(base);
      if (record) return { ref, desired: record, generation: record.generation };
      const [fields] = await readFields(this.redis, base, kind, [id]);
      if (!fields || fields.gen === null) return null;
      if (fields.tomb !== null) return { ref, desired: null, generation: Number(fields.gen) };
      const again = await read(base); // written between the two reads
      return again ? { ref, desired: again, generation: again.generation } : null;
    });
  }

  private listContext(source: string, kind: EntityKind, withMembers: boolean) {
    return {
      redis: this.redis,
      base: sourceBase(this.prefix, source),
      kind,
      matchesFilter: this.matchesFilter,
      chunkSize: this.scanChunkSize,
      withMembers,
    };
  }

  /** Tells the jobs layer; a failure is logged, not thrown (the dirty markers are already durable). */
  private async notify(refs: EntityRef[]): Promise<void> {
    try {
      await this.notifier(refs);
    } catch (err) {
      this.logger?.warn(
        { err, refs: refs.length, kind: refs[0]?.kind, id: refs[0]?.id },
        "notify after a directory write failed; the sweeper will re-enqueue the dirty entities",
      );
    }
  }
}
