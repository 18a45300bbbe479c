import type { Redis } from "ioredis";
import { luaScript } from "../lua-script.js";
import { OperationNotHeld } from "./operation-not-held.js";

/** A stored operation (a reconciliation run, a resync): its state is a field of its own. */
export interface StoredOperation<S extends string> {
  id: string;
  source: string;
  state: S;
  createdAt: string;
}

/**
 * The phase of the job that runs an operation still `queued`: `apply` once an admin confirmed it
 * (a held run or resync: `settledBy`), else `run`. What re-enqueueing one must ask for.
 */
export function queuedPhase(op: { settledBy?: string }): "run" | "apply" {
  return op.settledBy ? "apply" : "run";
}

/**
 * The job an operation's writer runs it under: the BullMQ lock key of the job
 * (`<prefix>:<queue>:<jobId>:lock`, which holds the lock token of the job's holder while it is
 * active) and the writer's token. Its prefix is the stores' prefix, whose hash tag puts both keys
 * in one Redis Cluster slot.
 */
export interface OperationHolder {
  lockKey: string;
  token: string;
}

/**
 * The checks every guarded write of an operation starts with, as Lua functions for a script to
 * begin with: `heldBy(lockKey, token)`, whether a job's lock key holds the writer's token (true
 * when no lock key is given: an unguarded write); `stateIn(current, allowed)`, whether a stored
 * state (false: none) is one of the allowed ones joined by "|" (never when none is stored).
 */
export const OPERATION_GUARD_LUA = `
local function heldBy(lockKey, token)
  return not lockKey or redis.call('GET', lockKey) == token
end
local function stateIn(current, allowed)
  if not current then return false end
  for state in string.gmatch(allowed, '[^|]+') do
    if state == current then return true end
  end
  return false
end
`;

/**
 * Sets the document only when the stored state is one of the allowed ones:
 * KEYS[1] = operation hash; ARGV[1] = allowed states joined by "|",
 * ARGV[2] = new state, ARGV[3] = new document. With KEYS[2] (a job's lock key) and ARGV[4] (a
 * lock token), only while that key holds that token. Returns 1 when written, 0 when the state is
 * not an allowed one, -1 when the lock is not the writer's.
 */
const SET_IF_STATE = luaScript<number>(
  "scimOperationSetIfState",
  `${OPERATION_GUARD_LUA}
if not heldBy(KEYS[2], ARGV[4]) then return -1 end
local current = redis.call('HGET', KEYS[1], 'state')
if not stateIn(current, ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'doc', ARGV[3])
return 1
`,
);

/**
 * Creates an operation: KEYS[1] = operation hash, KEYS[2] = the sequence, KEYS[3] = the index of
 * all, KEYS[4] = the source's index; ARGV[1] = id, ARGV[2] = state, ARGV[3] = document. Scored by
 * the sequence, not the clock: operations created in the same millisecond keep their order.
 * Returns 1 when created, 0 (and nothing written) when the operation exists.
 */
const CREATE_OPERATION = luaScript<number>(
  "scimOperationCreate",
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'doc', ARGV[3])
local score = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[3], score, ARGV[1])
redis.call('ZADD', KEYS[4], score, ARGV[1])
return 1
`,
);

/**
 * Deletes keys only while a job's lock holds a token: KEYS[1] = lock key, KEYS[2..] = keys to
 * delete; ARGV[1] = token. Returns 1 when deleted, -1 when the lock is not the token's.
 */
const DEL_IF_HELD = luaScript<number>(
  "scimOperationDelIfHeld",
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if #KEYS > 1 then redis.call('DEL', unpack(KEYS, 2)) end
return 1
`,
);

/**
 * Adds members to sets only while a job's lock holds a token: KEYS[1] = lock key, KEYS[2..] = sets;
 * ARGV[1] = token, ARGV[2] = a TTL in seconds for each set added to (0: none), ARGV[3] = a JSON
 * array of the members of each set, in the order of KEYS[2..]. Members go in 1000 at a time (Lua's
 * unpack has a stack limit). Returns 1 when added, -1 when the lock is not the token's.
 */
const SADD_IF_HELD = luaScript<number>(
  "scimOperationAddIfHeld",
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local ttl = tonumber(ARGV[2])
local lists = cjson.decode(ARGV[3])
for i = 2, #KEYS do
  local members = lists[i - 1]
  for j = 1, #members, 1000 do
    redis.call('SADD', KEYS[i], unpack(members, j, math.min(j + 999, #members)))
  end
  if #members > 0 and ttl > 0 then redis.call('EXPIRE', KEYS[i], ttl) end
end
return 1
`,
);

/**
 * Counts an operation's embed removals and drops its embed sets, in one step: KEYS[1] = removed,
 * KEYS[2] = kept, KEYS[3] = members, KEYS[4] = a scratch set, KEYS[5] (optional) = a job's lock key;
 * ARGV[1] = its token. Returns {removed and not kept, members} and deletes the four sets; -1 (and
 * nothing counted or deleted) when the lock is not the token's.
 */
const COUNT_EMBED_REMOVALS = luaScript<[number, number] | number>(
  "scimOperationCountEmbedRemovals",
  `
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[1] then return -1 end
local planned = redis.call('SDIFFSTORE', KEYS[4], KEYS[1], KEYS[2])
local members = redis.call('SCARD', KEYS[3])
redis.call('DEL', KEYS[4], KEYS[1], KEYS[2], KEYS[3])
return {planned, members}
`,
);

/** How many operations a page of `OperationStore.pages` holds. */
const WALK_PAGE = 500;

/**
 * Operations kept in Redis: one hash per operation (state + JSON document), a sorted set per
 * source and one for all, ordered by creation time, trimmed to `keep` finished operations per
 * source: an unfinished one (queued, running, held for an admin's confirmation) is never trimmed,
 * however many operations come after it. Keys that hang off an operation (`<key>:<suffix>`) are
 * removed with it.
 */
export class OperationStore<S extends string, T extends StoredOperation<S>> {
  private readonly base: string;

  constructor(
    protected readonly redis: Redis,
    prefix: string,
    namespace: string,
    private readonly keep: number,
    /** Suffixes of keys owned by an operation (`<operation key>:<suffix>`), removed with it. */
    private readonly ownedSuffixes: readonly string[] = [],
    /** States of operations that are not finished: never trimmed (`keep` counts the others). */
    private readonly unfinished: readonly S[] = [],
  ) {
    this.base = `${prefix}:${namespace}`;
  }

  key(id: string, suffix?: string): string {
    return suffix ? `${this.base}:op:${id}:${suffix}` : `${this.base}:op:${id}`;
  }

  private indexKey(source?: string): string {
    return source ? `${this.base}:index:${source}` : `${this.base}:index`;
  }

  /**
   * Stores a new operation and lists it, in one script: a process killed part way never leaves a
   * record that no list shows (nor that a tick's re-enqueue of queued operations can find).
   */
  async create(op: T): Promise<void> {
    const written = await CREATE_OPERATION.run(
      this.redis,
      [this.key(op.id), `${this.base}:seq`, this.indexKey(), this.indexKey(op.source)],
      [op.id, op.state, JSON.stringify(op)],
    );
    if (written !== 1) throw new Error(`operation ${op.id} exists`);
    await this.trim(op.source);
  }

  async get(id: string): Promise<T | null> {
    const [state, doc] = await this.redis.hmget(this.key(id), "state", "doc");
    if (!state || !doc) return null;
    return { ...(JSON.parse(doc) as T), state: state as S };
  }

  /**
   * Writes `next` only if the stored state is one of `from`; false otherwise (a lost race, or a
   * wrong state). With `holder`, only while the job's lock is still the holder's, checked in the
   * same script as the write: a writer whose job was handed on meanwhile writes nothing and gets
   * OperationNotHeld (the next holder owns the record).
   */
  async transition(next: T, from: readonly S[], holder?: OperationHolder): Promise<boolean> {
    if (from.length === 0) throw new Error("transition needs at least one state to move from");
    const args = [from.join("|"), next.state, JSON.stringify(next)];
    const written = holder
      ? await SET_IF_STATE.run(this.redis, [this.key(next.id), holder.lockKey], [...args, holder.token])
      : await SET_IF_STATE.run(this.redis, [this.key(next.id)], args);
    if (written === -1) throw new OperationNotHeld(next.id);
    return written === 1;
  }

  /** Newest first. */
  async list(options: {
    source?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; items: T[] }> {
    const index = this.indexKey(options.source);
    const [total, ids] = await Promise.all([
      this.redis.zcard(index),
      this.redis.zrevrange(index, options.offset, options.offset + options.limit - 1),
    ]);
    return { total, items: await this.getAll(ids) };
  }

  /**
   * Every stored operation (of one source, or of all), newest first, `pageSize` at a time: what a
   * reader that must see them all goes through (held ones are never trimmed, however many came
   * after them). Operations are created and trimmed while it reads, so a page does not start at an
   * offset, which they shift, but below the creation sequence of the last operation read (each
   * score is a number of its own): one created during the walk is above it and is not read (it
   * came after the reading began), one trimmed during it moves nothing, so every operation there
   * from the first page to the last is read exactly once, however many start or go between two
   * pages. One trimmed before its page is read is left out.
   */
  async *pages(options: { source?: string; pageSize?: number } = {}): AsyncGenerator<T[]> {
    const index = this.indexKey(options.source);
    const pageSize = options.pageSize ?? WALK_PAGE;
    let below = "+inf";
    for (;;) {
      const entries = await this.redis.zrevrangebyscore(
        index,
        below,
        "-inf",
        "WITHSCORES",
        "LIMIT",
        0,
        pageSize,
      );
      const ids = entries.filter((_entry, i) => i % 2 === 0);
      if (ids.length > 0) yield await this.getAll(ids);
      if (ids.length < pageSize) return;
      below = `(${entries[entries.length - 1]}`;
    }
  }

  /** Every stored operation (of one source, or of all), newest first, read page by page (`pages`). */
  async listAll(options: { source?: string; pageSize?: number } = {}): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.pages(options)) all.push(...page);
    return all;
  }

  /** The operations of these ids that are still stored, in that order. */
  private async getAll(ids: readonly string[]): Promise<T[]> {
    const items: T[] = [];
    for (const op of await Promise.all(ids.map((id) => this.get(id)))) if (op) items.push(op);
    return items;
  }

  async remove(id: string, source: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.key(id), ...this.ownedSuffixes.map((suffix) => this.key(id, suffix)))
      .zrem(this.indexKey(), id)
      .zrem(this.indexKey(source), id)
      .exec();
  }

  /**
   * Removes the owned keys of an operation (e.g. repair lists once settled), keeping its document.
   * With `holder`, only while the job's lock is the holder's (else OperationNotHeld): a writer whose
   * job was handed on does not drop what the next holder wrote.
   */
  async dropOwnedKeys(id: string, holder?: OperationHolder): Promise<void> {
    await this.dropKeys(id, this.ownedSuffixes, holder);
  }

  /**
   * Removes some owned keys of an operation (`<operation key>:<suffix>` each): a run's working sets
   * as it starts over or ends. With `holder`, only while the job's lock is the holder's (else
   * OperationNotHeld), as dropOwnedKeys.
   */
  /**
   * Counts the embed users an operation would take out of every group it went through (in its
   * `removed` set and not its `kept` one) and those in its `members` set, and drops the three sets,
   * in one script. With `holder`, only while the job's lock is the holder's (else OperationNotHeld):
   * an old holder handed on neither counts nor drops the sets the next holder is building, whose
   * count of planned deprovisionings (invariant 8) would come up short.
   */
  async countEmbedRemovals(
    id: string,
    suffixes: { removed: string; kept: string; members: string },
    holder?: OperationHolder,
  ): Promise<{ planned: number; onPlatform: number }> {
    const removed = this.key(id, suffixes.removed);
    const keys = [removed, this.key(id, suffixes.kept), this.key(id, suffixes.members), `${removed}:only`];
    const counted = await COUNT_EMBED_REMOVALS.run(
      this.redis,
      holder ? [...keys, holder.lockKey] : keys,
      holder ? [holder.token] : [],
    );
    if (counted === -1 || typeof counted === "number") throw new OperationNotHeld(id);
    return { planned: Number(counted[0]), onPlatform: Number(counted[1]) };
  }

  async dropKeys(id: string, suffixes: readonly string[], holder?: OperationHolder): Promise<void> {
    if (suffixes.length === 0) return;
    const keys = suffixes.map((suffix) => this.key(id, suffix));
    if (!holder) {
      await this.redis.del(...keys);
      return;
    }
    const dropped = await DEL_IF_HELD.run(this.redis, [holder.lockKey, ...keys], [holder.token]);
    if (dropped === -1) throw new OperationNotHeld(id);
  }

  /**
   * Adds members to owned sets of an operation (`suffix` each), each set given `ttlSeconds` when
   * added to. With `holder`, in one script and only while the job's lock is the holder's (else
   * OperationNotHeld): a writer whose job was handed on adds nothing to the next holder's sets.
   */
  async addToOwnedSets(
    id: string,
    sets: ReadonlyArray<{ suffix: string; members: readonly string[] }>,
    holder?: OperationHolder,
    ttlSeconds = 0,
  ): Promise<void> {
    const filled = sets.filter((set) => set.members.length > 0);
    if (filled.length === 0) return;
    if (!holder) {
      const multi = this.redis.multi();
      for (const set of filled) {
        multi.sadd(this.key(id, set.suffix), ...set.members);
        if (ttlSeconds > 0) multi.expire(this.key(id, set.suffix), ttlSeconds);
      }
      await multi.exec();
      return;
    }
    const added = await SADD_IF_HELD.run(
      this.redis,
      [holder.lockKey, ...filled.map((set) => this.key(id, set.suffix))],
      [holder.token, ttlSeconds, JSON.stringify(filled.map((set) => set.members))],
    );
    if (added === -1) throw new OperationNotHeld(id);
  }

  /**
   * Removes the oldest finished operations beyond `keep`. Unfinished ones (above all those held for
   * an admin's confirmation) are skipped: they stay until settled and finished, then age out.
   */
  private async trim(source: string): Promise<void> {
    const index = this.indexKey(source);
    const ids = await this.redis.zrange(index, "0", "-1");
    if (ids.length <= this.keep) return;
    const states = await Promise.all(ids.map((id) => this.redis.hget(this.key(id), "state")));
    const finished = ids.filter((_id, i) => !this.unfinished.includes(states[i] as S));
    // Finished states are final: an operation found finished here cannot become unfinished again.
    const excess = finished.length - this.keep;
    for (const id of finished.slice(0, Math.max(0, excess))) await this.remove(id, source);
  }
}
