import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { entityKey, sourceBase } from "../directory/directory-keys.js";
import { luaScript } from "../lua-script.js";
import type { AppliedEmbedMember } from "../mapping/plan-types.js";
import { type EntityKind, type EntityRef, parseRefKey, refKey } from "../scim/scim-types.js";
import { BULK_OPERATION, type LifecycleEntry, type StoredLifecycleEntry } from "./lifecycle-entry.js";
import { type OwnerScope, syncKeys } from "./sync-keys.js";
import {
  APPLIED_WITH_LIFECYCLE_SCRIPT,
  CLAIM_SCRIPT,
  CHECK_DUE_AT_SCRIPT,
  CLEAR_CHECK_SCRIPT,
  DROP_MANAGER_DEPENDENTS_SCRIPT,
  NOTE_MANAGER_LEFT_OUT_SCRIPT,
  PUT_LIFECYCLE_SCRIPT,
  RECORD_SYNCED_SCRIPT,
  RELEASE_SCRIPT,
  REMOVE_DEAD_LETTER_SCRIPT,
  REPLACE_IF_UNCHANGED_SCRIPT,
  MOVE_DUE_WRITES_SCRIPT,
  SCHEDULE_CHECK_SCRIPT,
  SETTLE_LIFECYCLE_SCRIPT,
  SETTLE_WRITE_SCRIPT,
} from "./sync-scripts.js";
import type { DeadLetter, EntitySyncStatus, StoredDeadLetter, SyncStateReader } from "./sync-state-types.js";

// The scripts of sync-scripts.ts, run by EVALSHA (see lua-script.ts).
const CLAIM = luaScript<string>("scimSyncClaimOwner", CLAIM_SCRIPT);
const RELEASE = luaScript<number>("scimSyncReleaseOwner", RELEASE_SCRIPT);
const RECORD_SYNCED = luaScript<number>("scimSyncRecordSynced", RECORD_SYNCED_SCRIPT);
const PUT_LIFECYCLE = luaScript<number>("scimSyncPutLifecycle", PUT_LIFECYCLE_SCRIPT);
const SETTLE_LIFECYCLE = luaScript<number>("scimSyncSettleLifecycle", SETTLE_LIFECYCLE_SCRIPT);
const REMOVE_DEAD_LETTER = luaScript<number>("scimSyncRemoveDeadLetter", REMOVE_DEAD_LETTER_SCRIPT);
const SCHEDULE_CHECK = luaScript<number>("scimSyncScheduleCheck", SCHEDULE_CHECK_SCRIPT);
const CLEAR_CHECK = luaScript<number>("scimSyncClearCheck", CLEAR_CHECK_SCRIPT);
const SETTLE_WRITE = luaScript<number>("scimSyncSettleWrite", SETTLE_WRITE_SCRIPT);
const CHECK_DUE_AT = luaScript<string | null>("scimSyncCheckDueAt", CHECK_DUE_AT_SCRIPT);
const MOVE_DUE_WRITES = luaScript<number>("scimSyncMoveDueWrites", MOVE_DUE_WRITES_SCRIPT);
const NOTE_MANAGER_LEFT_OUT = luaScript<number>("scimSyncNoteManagerLeftOut", NOTE_MANAGER_LEFT_OUT_SCRIPT);
/** A dead-letter walk's copy of the order lives this long past its last page read (deadLetterPages). */
const DEAD_WALK_TTL_SECONDS = 3600;

const APPLIED_WITH_LIFECYCLE = luaScript<[string | null, number]>(
  "scimSyncAppliedWithLifecycle",
  APPLIED_WITH_LIFECYCLE_SCRIPT,
);
const REPLACE_APPLIED = luaScript<number>("scimSyncReplaceApplied", REPLACE_IF_UNCHANGED_SCRIPT);
const DROP_MANAGER_DEPENDENTS = luaScript<number>(
  "scimSyncDropManagerDependents",
  DROP_MANAGER_DEPENDENTS_SCRIPT,
);

/**
 * Replaces a dead letter only if it still holds what was read (a compare-and-set that never
 * creates one). KEYS: dead hash. ARGV: refKey, the letter as read, the new letter.
 */
const REPLACE_DEAD_LETTER = luaScript<number>(
  "scimSyncReplaceDeadLetter",
  `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`,
);

/**
 * Writes an entity's dead letter (and its place in both orders), keeping the reconciliation's mark
 * of the letter it replaces (`autoRetriedAt`, `autoRetriedGeneration`) only while the entity is
 * still at the generation the mark was made at: a letter of the sync the reconciliation handed over
 * (the same desired state) is left for an admin, a letter of a newer change of the entity is not
 * (it is handed over once in turn). Read and written in one script, so a mark landing meanwhile is
 * never lost. KEYS: dead hash, dead order, dead order of the source, the entity's directory hash.
 * ARGV: refKey, the letter's JSON (an object without the mark), its order score, '1' to keep a
 * mark ('' when the letter brings its own). Returns 1 when the mark was kept.
 */
const ADD_DEAD_LETTER = luaScript<number>(
  "scimSyncAddDeadLetter",
  `
local written = ARGV[2]
local kept = 0
local previous = ARGV[4] == '1' and redis.call('HGET', KEYS[1], ARGV[1])
if previous then
  local ok, old = pcall(cjson.decode, previous)
  if ok and type(old) == 'table' and type(old['autoRetriedAt']) == 'string'
    and type(old['autoRetriedGeneration']) == 'number'
    and tonumber(redis.call('HGET', KEYS[4], 'gen') or '0') == old['autoRetriedGeneration'] then
    written = string.sub(written, 1, -2) .. ',"autoRetriedAt":' .. cjson.encode(old['autoRetriedAt'])
      .. ',"autoRetriedGeneration":' .. string.format('%d', old['autoRetriedGeneration']) .. '}'
    kept = 1
  end
end
redis.call('HSET', KEYS[1], ARGV[1], written)
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return kept
`,
);

/** A dead letter read, kept with the string it was read from. */
function storedDeadLetter(stored: string): StoredDeadLetter {
  return { letter: JSON.parse(stored) as DeadLetter, stored };
}

/**
 * What the sync pipeline remembers in Redis: applied records, ownership of platform objects,
 * per-entity status, dead letters, resync requests and the lifecycle batch (see sync-keys.ts).
 */
export class RedisSyncStateStore implements SyncStateReader {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  // --- applied records ---

  async getApplied<T>(ref: EntityRef): Promise<T | null> {
    const raw = await this.redis.hget(syncKeys.applied(this.prefix, ref.source, ref.kind), ref.id);
    return raw ? (JSON.parse(raw) as T) : null;
  }

  async putApplied(ref: EntityRef, applied: object): Promise<void> {
    await this.redis.hset(
      syncKeys.applied(this.prefix, ref.source, ref.kind),
      ref.id,
      JSON.stringify(applied),
    );
  }

  /**
   * A workspace user's applied record and whether a lifecycle change is queued for its platform
   * user, read at one instant: when none is queued, the record holds every change the flusher
   * settled (it records a change before it drops the entry).
   */
  async getAppliedUser<T>(ref: EntityRef): Promise<{ applied: T | null; lifecyclePending: boolean }> {
    const [raw, pending] = await APPLIED_WITH_LIFECYCLE.run(
      this.redis,
      [syncKeys.applied(this.prefix, ref.source, ref.kind), syncKeys.lcPending(this.prefix)],
      [ref.id],
    );
    return { applied: raw ? (JSON.parse(raw) as T) : null, lifecyclePending: pending === 1 };
  }

  /**
   * Changes the applied record as it is now (a compare-and-set, tried again when another write
   * lands between the read and the write): `change` answers the new record, or null to leave it.
   * Answers the record as it is after the call (null when there is none: nothing is written).
   */
  async updateApplied<T extends object>(ref: EntityRef, change: (current: T) => T | null): Promise<T | null> {
    const key = syncKeys.applied(this.prefix, ref.source, ref.kind);
    for (;;) {
      const raw = await this.redis.hget(key, ref.id);
      if (raw === null) return null;
      const current = JSON.parse(raw) as T;
      const next = change(current);
      if (next === null) return current;
      if ((await REPLACE_APPLIED.run(this.redis, [key], [ref.id, raw, JSON.stringify(next)])) === 1)
        return next;
    }
  }

  async countApplied(source: string, kind: EntityKind): Promise<number> {
    return this.redis.hlen(syncKeys.applied(this.prefix, source, kind));
  }

  /** Records (or with null, forgets) the platform user id of a workspace user. */
  async setUserPlatformId(source: string, id: string, platformId: string | null): Promise<void> {
    const key = syncKeys.pid(this.prefix, source);
    if (platformId === null) await this.redis.hdel(key, id);
    else await this.redis.hset(key, id, platformId);
  }

  /** Platform user ids of the given users, null where a user has none yet. */
  async getUserPlatformIds(source: string, ids: string[]): Promise<Array<string | null>> {
    if (ids.length === 0) return [];
    return this.redis.hmget(syncKeys.pid(this.prefix, source), ...ids);
  }

  /** How many users of a workspace source have a platform user id (owned or adopted). */
  async countPlatformIds(source: string): Promise<number> {
    return this.redis.hlen(syncKeys.pid(this.prefix, source));
  }

  async setEmbedMember(source: string, id: string, member: AppliedEmbedMember | null): Promise<void> {
    const key = syncKeys.emb(this.prefix, source);
    if (member === null) await this.redis.hdel(key, id);
    else await this.redis.hset(key, id, JSON.stringify(member));
  }

  async getEmbedMembers(source: string, ids: string[]): Promise<Array<AppliedEmbedMember | null>> {
    if (ids.length === 0) return [];
    const raw = await this.redis.hmget(syncKeys.emb(this.prefix, source), ...ids);
    return raw.map((r) => (r ? (JSON.parse(r) as AppliedEmbedMember) : null));
  }

  // --- ownership ---

  /** Claims `platformKey` for `ref`. Returns the owner's refKey: `refKey(ref)` on success. */
  async claimOwner(scope: OwnerScope, platformKey: string, ref: EntityRef): Promise<string> {
    return CLAIM.run(this.redis, [syncKeys.owner(this.prefix, scope)], [platformKey, refKey(ref)]);
  }

  /** Moves ownership from a stale owner (an entity that no longer exists) to `ref`. */
  async takeOverOwner(
    scope: OwnerScope,
    platformKey: string,
    staleOwner: string,
    ref: EntityRef,
  ): Promise<void> {
    const key = syncKeys.owner(this.prefix, scope);
    await RELEASE.run(this.redis, [key], [platformKey, staleOwner]);
    await CLAIM.run(this.redis, [key], [platformKey, refKey(ref)]);
  }

  async ownerOf(scope: OwnerScope, platformKey: string): Promise<string | null> {
    return this.redis.hget(syncKeys.owner(this.prefix, scope), platformKey);
  }

  /** Owners (refKeys) of many platform keys in one HMGET, null where a key has no owner. */
  async ownersOf(scope: OwnerScope, platformKeys: string[]): Promise<Array<string | null>> {
    if (platformKeys.length === 0) return [];
    return this.redis.hmget(syncKeys.owner(this.prefix, scope), ...platformKeys);
  }

  async releaseOwner(scope: OwnerScope, platformKey: string, ref: EntityRef): Promise<void> {
    await RELEASE.run(this.redis, [syncKeys.owner(this.prefix, scope)], [platformKey, refKey(ref)]);
  }

  /**
   * Drops every record of a deprovisioned entity (invariant 6: keys of deleted entities go). The
   * claim on its platform object goes first: a re-run after a crash knows that object only from the
   * applied record, which the MULTI drops, so a claim left behind it would stay for ever.
   */
  async forget(ref: EntityRef, owned?: { scope: OwnerScope; platformKey: string }): Promise<void> {
    if (owned) await this.releaseOwner(owned.scope, owned.platformKey, ref);
    const key = refKey(ref);
    const multi = this.redis
      .multi()
      .hdel(syncKeys.applied(this.prefix, ref.source, ref.kind), ref.id)
      .hdel(syncKeys.status(this.prefix, ref.source, ref.kind), ref.id)
      .hdel(syncKeys.dead(this.prefix), key)
      .zrem(syncKeys.deadOrder(this.prefix), key)
      .zrem(syncKeys.deadOrder(this.prefix, ref.source), key)
      .srem(syncKeys.resync(this.prefix), key)
      .hdel(syncKeys.rateLimitLoops(this.prefix), key);
    if (ref.kind === "user") {
      multi
        .hdel(syncKeys.pid(this.prefix, ref.source), ref.id)
        .hdel(syncKeys.emb(this.prefix, ref.source), ref.id);
    }
    await multi.exec();
    if (ref.kind === "user") await this.forgetManagerLinks(ref.source, ref.id);
  }

  // --- users synced without their manager (its own sync a dead letter) ---

  /** `userId` was synced without its manager `managerId`: sync it again once the manager lands. */
  async noteManagerLeftOut(source: string, userId: string, managerId: string): Promise<void> {
    const left = syncKeys.managerLeftOut(this.prefix, source);
    const before = (await this.redis.hget(left, userId)) ?? managerId;
    await NOTE_MANAGER_LEFT_OUT.run(
      this.redis,
      [
        left,
        syncKeys.managerDependents(this.prefix, source, managerId),
        syncKeys.managerDependents(this.prefix, source, before),
      ],
      [userId, managerId],
    );
  }

  /** The users synced without the manager `managerId`. */
  managerDependents(source: string, managerId: string): Promise<string[]> {
    return this.redis.smembers(syncKeys.managerDependents(this.prefix, source, managerId));
  }

  /** Forgets that these users were synced without `managerId` (they are synced again, or gone). */
  async dropManagerDependents(source: string, managerId: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await DROP_MANAGER_DEPENDENTS.run(
      this.redis,
      [
        syncKeys.managerLeftOut(this.prefix, source),
        syncKeys.managerDependents(this.prefix, source, managerId),
      ],
      [managerId, ...userIds],
    );
  }

  /** A deleted user: neither a user synced without its manager, nor a manager anyone waits on. */
  private async forgetManagerLinks(source: string, id: string): Promise<void> {
    await this.dropManagerDependents(source, id, await this.managerDependents(source, id));
    const managerId = await this.redis.hget(syncKeys.managerLeftOut(this.prefix, source), id);
    if (managerId !== null) await this.dropManagerDependents(source, managerId, [id]);
  }

  // --- status ---

  async getStatus(ref: EntityRef): Promise<EntitySyncStatus | null> {
    const raw = await this.redis.hget(syncKeys.status(this.prefix, ref.source, ref.kind), ref.id);
    return raw ? (JSON.parse(raw) as EntitySyncStatus) : null;
  }

  /** The statuses of many entities, in their order: one HMGET per source and kind. */
  async getStatuses(refs: readonly EntityRef[]): Promise<Array<EntitySyncStatus | null>> {
    const byKey = new Map<string, number[]>();
    refs.forEach((ref, index) => {
      const key = syncKeys.status(this.prefix, ref.source, ref.kind);
      byKey.set(key, [...(byKey.get(key) ?? []), index]);
    });
    const statuses: Array<EntitySyncStatus | null> = refs.map(() => null);
    await Promise.all(
      [...byKey].map(async ([key, at]) => {
        const raw = await this.redis.hmget(key, ...at.map((index) => refs[index]?.id as string));
        raw.forEach((value, i) => {
          statuses[at[i] as number] = value ? (JSON.parse(value) as EntitySyncStatus) : null;
        });
      }),
    );
    return statuses;
  }

  /**
   * Drops the status of an entity the directory no longer holds (a failure noted, or a status
   * recorded, by a late sync after the entity was forgotten): nothing else of it is touched.
   */
  async dropStatus(ref: EntityRef): Promise<void> {
    await this.redis.hdel(syncKeys.status(this.prefix, ref.source, ref.kind), ref.id);
  }

  async setStatus(status: EntitySyncStatus): Promise<void> {
    const { ref } = status;
    await this.redis.hset(syncKeys.status(this.prefix, ref.source, ref.kind), ref.id, JSON.stringify(status));
  }

  /**
   * One round trip after a successful sync: the status, and no dead letter any more. With
   * `onlyIfApplied`, only while the entity's applied record is there (false when it is not): a
   * sync that queued a lifecycle change records after the flusher may have settled it, and a
   * settled final change forgets the user (status included) for good. With `onlyWhileQueued` (the
   * platform user the change was queued for), only while a change is still queued for it: once
   * settled, the flusher's record of it (synced, or a dead letter) stands; while it waits on
   * failing bulk calls, a bare `pending` keeps the flusher's note of them (RECORD_SYNCED_SCRIPT).
   */
  async recordSynced(
    status: EntitySyncStatus,
    options: { onlyIfApplied?: boolean; onlyWhileQueued?: string } = {},
  ): Promise<boolean> {
    const { ref } = status;
    const queuedFor = options.onlyWhileQueued;
    const waiting =
      queuedFor && status.state === "pending" && !status.lastError && status.platformId === queuedFor
        ? JSON.stringify({ ...status, state: "retrying" })
        : "";
    const key = refKey(ref);
    const result = await RECORD_SYNCED.run(
      this.redis,
      [
        syncKeys.status(this.prefix, ref.source, ref.kind),
        syncKeys.dead(this.prefix),
        syncKeys.deadOrder(this.prefix),
        syncKeys.deadOrder(this.prefix, ref.source),
        syncKeys.rateLimitLoops(this.prefix),
        syncKeys.applied(this.prefix, ref.source, ref.kind),
        syncKeys.lcPending(this.prefix),
      ],
      [
        ref.id,
        JSON.stringify(status),
        key,
        options.onlyIfApplied ? "1" : "",
        queuedFor ?? "",
        waiting,
        BULK_OPERATION,
      ],
    );
    return result !== -1;
  }

  // --- dead letters ---

  /**
   * Writes the entity's dead letter (replacing its previous one). The previous letter's mark
   * (`autoRetriedAt`) is kept only while the entity is at the generation the reconciliation handed
   * it over at: a letter the handed-over sync wrote again (the same desired state) is not handed
   * over again, a letter of a newer change of the entity is (src/sync/dead-letter-retry.ts). A
   * letter given with its own `autoRetriedAt` is written as given. True when a mark was kept.
   */
  async addDeadLetter(letter: DeadLetter): Promise<boolean> {
    const key = refKey(letter.ref);
    const at = Date.parse(letter.at) || Date.now();
    // The mark's two fields go together: a letter without its own mark brings no generation either.
    const { autoRetriedGeneration: _, ...unmarked } = letter;
    const written = letter.autoRetriedAt === undefined ? unmarked : letter;
    const kept = await ADD_DEAD_LETTER.run(
      this.redis,
      [
        syncKeys.dead(this.prefix),
        syncKeys.deadOrder(this.prefix),
        syncKeys.deadOrder(this.prefix, letter.ref.source),
        this.entityHash(letter.ref),
      ],
      [key, JSON.stringify(written), at, letter.autoRetriedAt === undefined ? "1" : ""],
    );
    return kept === 1;
  }

  /**
   * The entities' current generations in the directory (0 for one it does not hold), in their
   * order: what a reconciliation reads before it hands dead letters over.
   */
  /**
   * Whether the directory holds a newer generation of the entity than its status says was applied
   * (the identity provider wrote after the last sync). A never-synced entity: true.
   */
  async changedSinceSync(ref: EntityRef): Promise<boolean> {
    const [[generation = 0], status] = await Promise.all([
      this.entityGenerations([ref]),
      this.getStatus(ref),
    ]);
    return generation > (status?.appliedGeneration ?? 0);
  }

  async entityGenerations(refs: readonly EntityRef[]): Promise<number[]> {
    if (refs.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const ref of refs) pipeline.hget(this.entityHash(ref), "gen");
    const replies = (await pipeline.exec()) ?? [];
    return refs.map((_, i) => {
      const [err, gen] = replies[i] ?? [new Error("no reply"), null];
      if (err) throw err;
      return Number(gen ?? 0) || 0;
    });
  }

  /**
   * Notes on a dead letter read before that a reconciliation handed it to a sync (`autoRetriedAt`,
   * and `generation`, the entity's generation read before the hand-over), unless a sync has written
   * another one since or the entity synced (its letter gone): true if it did.
   */
  async markDeadLetterAutoRetried(read: StoredDeadLetter, at: string, generation: number): Promise<boolean> {
    const marked = JSON.stringify({ ...read.letter, autoRetriedAt: at, autoRetriedGeneration: generation });
    const done = await REPLACE_DEAD_LETTER.run(
      this.redis,
      [syncKeys.dead(this.prefix)],
      [refKey(read.letter.ref), read.stored, marked],
    );
    return done === 1;
  }

  /** The directory hash of an entity (directory-keys.ts), whose `gen` field is its generation. */
  private entityHash(ref: EntityRef): string {
    return entityKey(sourceBase(this.prefix, ref.source), ref.kind, ref.id);
  }

  /** Removes the dead letter (and the rate-limit loop count) of an entity that synced. */
  async removeDeadLetter(ref: EntityRef): Promise<boolean> {
    return this.removeLetter(ref, "");
  }

  async getDeadLetter(ref: EntityRef): Promise<StoredDeadLetter | null> {
    const stored = await this.redis.hget(syncKeys.dead(this.prefix), refKey(ref));
    return stored ? storedDeadLetter(stored) : null;
  }

  /** Removes the dead letter read before, unless a sync has written another one since. */
  async removeDeadLetterIfUnchanged(read: StoredDeadLetter): Promise<boolean> {
    return this.removeLetter(read.letter.ref, read.stored);
  }

  /** The letter, its order entries and its rate-limit loop count, when it still is `expected` ("": any). */
  private async removeLetter(ref: EntityRef, expected: string): Promise<boolean> {
    const removed = await REMOVE_DEAD_LETTER.run(
      this.redis,
      [
        syncKeys.dead(this.prefix),
        syncKeys.rateLimitLoops(this.prefix),
        syncKeys.deadOrder(this.prefix),
        syncKeys.deadOrder(this.prefix, ref.source),
      ],
      [refKey(ref), expected],
    );
    return removed === 1;
  }

  async listDeadLetters(options: {
    source?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; items: DeadLetter[] }> {
    const { total, items } = await this.listStoredDeadLetters(options);
    // The generation of the mark is the store's business, not the listing's (admin API).
    return { total, items: items.map(({ letter: { autoRetriedGeneration: _, ...letter } }) => letter) };
  }

  async listStoredDeadLetters(options: {
    source?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; items: StoredDeadLetter[] }> {
    const order = syncKeys.deadOrder(this.prefix, options.source);
    const total = await this.redis.zcard(order);
    if (options.limit <= 0) return { total, items: [] };
    const keys = await this.redis.zrange(
      order,
      String(options.offset),
      String(options.offset + options.limit - 1),
    );
    if (keys.length === 0) return { total, items: [] };
    const stored = await this.redis.hmget(syncKeys.dead(this.prefix), ...keys);
    return { total, items: stored.filter((s): s is string => s !== null).map(storedDeadLetter) };
  }

  /**
   * The letters present now, page by page, each once (SyncStateReader.deadLetterPages). The walk
   * reads a copy of the order taken at its start (in Redis: the process holds one page at a time),
   * not the order itself, where letters removed, written again (a new place at the newest end, or
   * anywhere under another process's clock) and added meanwhile would shift the pages.
   */
  async *deadLetterPages(
    options: { source?: string; pageSize?: number } = {},
  ): AsyncGenerator<StoredDeadLetter[]> {
    const pageSize = options.pageSize ?? 200;
    const copy = syncKeys.deadWalk(this.prefix, randomUUID());
    // A MULTI answers a failed command as its reply, not as a throw: a copy not made is an error,
    // never an empty walk ("retried: 0").
    const made = await this.redis
      .multi()
      .zunionstore(copy, 1, syncKeys.deadOrder(this.prefix, options.source))
      .expire(copy, DEAD_WALK_TTL_SECONDS)
      .exec();
    const failed = made?.find(([error]) => error !== null)?.[0];
    if (made === null || failed)
      throw failed ?? new Error("dead-letter walk: the copy of the order was not made");
    try {
      for (let offset = 0; ; offset += pageSize) {
        // Each page renews the copy's expiry: a walk longer than the TTL is not cut short.
        const [keys] = await Promise.all([
          this.redis.zrange(copy, String(offset), String(offset + pageSize - 1)),
          this.redis.expire(copy, DEAD_WALK_TTL_SECONDS),
        ]);
        if (keys.length === 0) return;
        const stored = await this.redis.hmget(syncKeys.dead(this.prefix), ...keys);
        const page = stored.filter((s): s is string => s !== null).map(storedDeadLetter);
        if (page.length > 0) yield page;
        if (keys.length < pageSize) return;
      }
    } finally {
      await this.redis.del(copy);
    }
  }

  countDeadLetters(): Promise<number> {
    return this.redis.hlen(syncKeys.dead(this.prefix));
  }

  /**
   * The sources with dead letters, read from the letters themselves (ZSCAN of the order, page by
   * page): a source taken out of the configuration keeps its letters, and only they name it.
   */
  async deadLetterSources(): Promise<string[]> {
    const sources = new Set<string>();
    let cursor = "0";
    do {
      const [next, entries] = await this.redis.zscan(syncKeys.deadOrder(this.prefix), cursor, "COUNT", 1000);
      cursor = next;
      // WITHSCORES pairs: member, score, member, score, ...
      for (let i = 0; i < entries.length; i += 2) sources.add(parseRefKey(entries[i] as string).source);
    } while (cursor !== "0");
    return [...sources];
  }

  // --- resync requests ---

  /** The next sync of these entities re-reads the platform instead of trusting the applied record. */
  async requestResync(refs: EntityRef[]): Promise<void> {
    if (refs.length === 0) return;
    await this.redis.sadd(syncKeys.resync(this.prefix), ...refs.map(refKey));
  }

  async isResyncRequested(ref: EntityRef): Promise<boolean> {
    return (await this.redis.sismember(syncKeys.resync(this.prefix), refKey(ref))) === 1;
  }

  /** Whether each entity (by refKey) has a resync request not taken yet, in their order. */
  async resyncsRequested(refKeys: readonly string[]): Promise<boolean[]> {
    if (refKeys.length === 0) return [];
    const members = await this.redis.smismember(syncKeys.resync(this.prefix), ...refKeys);
    return members.map((member) => member === 1);
  }

  async clearResync(ref: EntityRef): Promise<void> {
    await this.redis.srem(syncKeys.resync(this.prefix), refKey(ref));
  }

  /** Takes the resync request of an entity: true when there was one. */
  async takeResync(ref: EntityRef): Promise<boolean> {
    return (await this.redis.srem(syncKeys.resync(this.prefix), refKey(ref))) === 1;
  }

  // --- rate-limit loops (a rate-limited job does not burn attempts, but its loops are capped) ---

  async bumpRateLimitLoops(ref: EntityRef): Promise<number> {
    const key = syncKeys.rateLimitLoops(this.prefix);
    const n = await this.redis.hincrby(key, refKey(ref), 1);
    return n;
  }

  async resetRateLimitLoops(ref: EntityRef): Promise<void> {
    await this.redis.hdel(syncKeys.rateLimitLoops(this.prefix), refKey(ref));
  }

  // --- lifecycle batch ---

  /** Queues a lifecycle change; keeps an entry of the same action (and `blocked`) that is already there. */
  async putLifecycle(entry: LifecycleEntry): Promise<boolean> {
    const result = await PUT_LIFECYCLE.run(
      this.redis,
      [syncKeys.lcPending(this.prefix), syncKeys.lcOrder(this.prefix)],
      [entry.platformId, JSON.stringify(entry), entry.action, String(entry.since), entry.blocked ? "1" : ""],
    );
    return result === 1;
  }

  async getLifecycle(platformId: string): Promise<StoredLifecycleEntry | null> {
    const raw = await this.redis.hget(syncKeys.lcPending(this.prefix), platformId);
    return raw ? { raw, entry: JSON.parse(raw) as LifecycleEntry } : null;
  }

  /** Removes whatever is queued for this user (a newer plan decided nothing is needed). */
  async dropLifecycle(platformId: string): Promise<void> {
    await this.redis
      .multi()
      .hdel(syncKeys.lcPending(this.prefix), platformId)
      .zrem(syncKeys.lcOrder(this.prefix), platformId)
      .exec();
  }

  /** The oldest queued entries (not removed: they stay until settled, so a crash loses nothing). */
  async peekLifecycle(limit: number): Promise<StoredLifecycleEntry[]> {
    const ids = await this.redis.zrange(syncKeys.lcOrder(this.prefix), "0", String(limit - 1));
    if (ids.length === 0) return [];
    const raw = await this.redis.hmget(syncKeys.lcPending(this.prefix), ...ids);
    const out: StoredLifecycleEntry[] = [];
    const orphans: string[] = [];
    raw.forEach((r, i) => {
      if (r) out.push({ raw: r, entry: JSON.parse(r) as LifecycleEntry });
      else orphans.push(ids[i] as string);
    });
    if (orphans.length > 0) await this.redis.zrem(syncKeys.lcOrder(this.prefix), ...orphans);
    return out;
  }

  // --- late-write checks (a write whose answer never came may still land) ---

  /** Reads these entities on the platform again at `dueAt` (an existing later check is kept). */
  async scheduleCheck(refs: EntityRef[], dueAt: number): Promise<void> {
    if (refs.length === 0) return;
    await SCHEDULE_CHECK.run(this.redis, [syncKeys.check(this.prefix)], [String(dueAt), ...refs.map(refKey)]);
  }

  /** Checks due by `now`, oldest first, with the due time each was read at (for clearCheck). */
  async dueChecks(now: number, limit: number): Promise<Array<{ ref: EntityRef; dueAt: number }>> {
    const raw = await this.redis.zrangebyscore(
      syncKeys.check(this.prefix),
      "-inf",
      String(now),
      "WITHSCORES",
      "LIMIT",
      0,
      limit,
    );
    const due: Array<{ ref: EntityRef; dueAt: number }> = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      due.push({ ref: parseRefKey(raw[i] as string), dueAt: Number(raw[i + 1]) });
    }
    return due;
  }

  /** Drops a check that was handed on, unless it was scheduled again (later) meanwhile. */
  async clearCheck(ref: EntityRef, dueAt: number): Promise<void> {
    await CLEAR_CHECK.run(this.redis, [syncKeys.check(this.prefix)], [refKey(ref), String(dueAt)]);
  }

  /**
   * When no write of `ref` can land late any more (epoch ms): its late-write check, or a write of
   * it on the wire (marked before it was sent), whichever is later; null when there is neither.
   */
  async checkDueAt(ref: EntityRef): Promise<number | null> {
    const keys = [syncKeys.check(this.prefix), syncKeys.writing(this.prefix)];
    const score = await CHECK_DUE_AT.run(this.redis, keys, [refKey(ref)]);
    return score === null ? null : Number(score);
  }

  /** Checks scheduled, and writes marked on the wire: while any, the bridge is not idle. */
  async countChecks(): Promise<number> {
    const [checks, writing] = await Promise.all([
      this.redis.zcard(syncKeys.check(this.prefix)),
      this.redis.zcard(syncKeys.writing(this.prefix)),
    ]);
    return checks + writing;
  }

  /**
   * What holds the bridge not idle for late writes (GET /status `lateWrites`, the `late_writes`
   * gauge): checks scheduled and writes marked on the wire, and when the last of them is due
   * (epoch ms; null when there is none). A mark left by a process that died becomes a check once due.
   */
  async lateWrites(): Promise<{ count: number; until: number | null }> {
    const [checks, writing, lastCheck, lastWrite] = await Promise.all([
      this.redis.zcard(syncKeys.check(this.prefix)),
      this.redis.zcard(syncKeys.writing(this.prefix)),
      this.redis.zrange(syncKeys.check(this.prefix), "-1", "-1", "WITHSCORES"),
      this.redis.zrange(syncKeys.writing(this.prefix), "-1", "-1", "WITHSCORES"),
    ]);
    const dues = [lastCheck[1], lastWrite[1]].filter((s) => s !== undefined).map(Number);
    return { count: checks + writing, until: dues.length > 0 ? Math.max(...dues) : null };
  }

  /**
   * Marks a write of `refs` (one entity's sync, or the users of one bulk call) as on the wire before
   * it is sent (`writeId` tells it from the entities' other writes): until it is settled, or a
   * process that died with it is past `dueAt`, their changes that a late write would undo wait
   * (waitForLateCreate).
   */
  async markWrite(refs: EntityRef | readonly EntityRef[], writeId: string, dueAt: number): Promise<void> {
    const members = writeMembers(refs, writeId).flatMap(([member]) => [String(dueAt), member]);
    if (members.length === 0) return;
    await this.redis.zadd(syncKeys.writing(this.prefix), ...members);
  }

  /**
   * The write is over: its marks go; with `checkAt` (it may still land late) the check of each of
   * `refs` is scheduled, in the same step.
   */
  async settleWrite(
    refs: EntityRef | readonly EntityRef[],
    writeId: string,
    checkAt?: number,
  ): Promise<void> {
    const members = writeMembers(refs, writeId).flat();
    if (members.length === 0) return;
    await SETTLE_WRITE.run(
      this.redis,
      [syncKeys.writing(this.prefix), syncKeys.check(this.prefix)],
      [checkAt === undefined ? "" : String(checkAt), ...members],
    );
  }

  /** Marks due by `now` whose write was never settled (its process died) become due checks. */
  async moveDueWrites(now: number, limit: number): Promise<number> {
    return MOVE_DUE_WRITES.run(
      this.redis,
      [syncKeys.writing(this.prefix), syncKeys.check(this.prefix)],
      [String(now), String(limit)],
    );
  }

  /** Compare-and-delete (next = null) or compare-and-replace. false when the entry changed meanwhile. */
  async settleLifecycle(stored: StoredLifecycleEntry, next: LifecycleEntry | null): Promise<boolean> {
    const result = await SETTLE_LIFECYCLE.run(
      this.redis,
      [syncKeys.lcPending(this.prefix), syncKeys.lcOrder(this.prefix)],
      [stored.entry.platformId, stored.raw, next ? JSON.stringify(next) : "", next ? String(next.since) : ""],
    );
    return result === 1;
  }

  countLifecycle(): Promise<number> {
    return this.redis.hlen(syncKeys.lcPending(this.prefix));
  }

  /** Epoch ms of the oldest queued entry, or null. */
  async oldestLifecycle(): Promise<number | null> {
    const first = await this.redis.zrange(syncKeys.lcOrder(this.prefix), "0", "0", "WITHSCORES");
    return first[1] === undefined ? null : Number(first[1]);
  }
}

/** The P:writing members of one write of `refs` (`<refKey>|<writeId>`), each with its refKey. */
function writeMembers(refs: EntityRef | readonly EntityRef[], writeId: string): Array<[string, string]> {
  const list: readonly EntityRef[] = Array.isArray(refs) ? refs : [refs as EntityRef];
  return list.map((ref) => [`${refKey(ref)}|${writeId}`, refKey(ref)]);
}
