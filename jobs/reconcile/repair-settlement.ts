import type { Redis } from "ioredis";
import {
  outcomeError,
  MAX_LISTED_FAILURES,
  type RepairFailure,
  type RepairOutcome,
} from "../../src/admin/repair-outcome.js";
import { dirtyKey } from "../../src/directory/directory-keys.js";
import { luaScript } from "../../src/lua-script.js";
import { type EntityRef, parseRefKey } from "../../src/scim/scim-types.js";
import { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";

/** Whether the sync an entity was enqueued for has ended: synced, failed (dead letter), or not yet. */
export interface RepairVerdict {
  verdict: "pending" | "synced" | "failed";
  code?: string;
  reason?: string;
}

/** Reads the verdicts of entities (refKeys) whose sync was requested. */
export type RepairStatusReader = (refKeys: readonly string[]) => Promise<RepairVerdict[]>;

/**
 * The verdicts from the pipeline's own records (read-only, a few round trips per chunk): an entity
 * still dirty has its sync ahead (or retrying); one that is no longer dirty has settled, as its
 * status says: `dead` failed, `synced` synced unless its resync request was not taken yet (a sync
 * that was already running cleared the marker; the requested one follows), no status at all is an
 * entity gone (purged) with nothing left to do. Anything else waits.
 */
export function redisRepairStatus(redis: Redis, prefix: string): RepairStatusReader {
  const state = new RedisSyncStateStore(redis, prefix);
  return async (refKeys) => {
    if (refKeys.length === 0) return [];
    const refs = refKeys.map((key) => {
      try {
        return parseRefKey(key);
      } catch {
        return null;
      }
    });
    const known = refs.filter((ref): ref is EntityRef => ref !== null);
    const [dirty, requested, knownStatuses] = await Promise.all([
      redis.zmscore(dirtyKey(prefix), ...refKeys),
      state.resyncsRequested(refKeys),
      state.getStatuses(known),
    ]);
    // The statuses of the well-formed references, back in the order of all of them.
    let next = 0;
    const statuses = refs.map((ref) => (ref ? (knownStatuses[next++] ?? null) : null));
    return refs.map((ref, index): RepairVerdict => {
      // A malformed reference names no entity: nothing will ever sync it.
      if (!ref) return { verdict: "failed", code: "malformed_reference", reason: "not an entity reference" };
      if (dirty[index] !== null) return { verdict: "pending" };
      const status = statuses[index];
      if (!status) return { verdict: "synced" };
      if (status.state === "dead") {
        return {
          verdict: "failed",
          code: status.lastError?.code ?? "unknown",
          reason: status.lastError?.message ?? "",
        };
      }
      if (status.state === "synced" && !requested[index]) return { verdict: "synced" };
      return { verdict: "pending" };
    });
  };
}

/**
 * Removes settled entities from the tracked set and counts them, atomically and once each (two
 * passes racing count an entity once): KEYS = tracked set, classes hash (refKey -> drift class
 * bits), counts hash (synced, failed), failures list; ARGV = max failures listed, then per entity
 * refKey, verdict, code, reason. Returns refKey, class bits of each entity that synced.
 */
const SETTLE = luaScript<string[]>(
  "scimRepairSettle",
  `
local max = tonumber(ARGV[1])
local ttl = ${7 * 24 * 3600}
local out = {}
for i = 2, #ARGV, 4 do
  local ref = ARGV[i]
  local verdict = ARGV[i + 1]
  if redis.call('SREM', KEYS[1], ref) == 1 then
    redis.call('HINCRBY', KEYS[3], verdict, 1)
    redis.call('EXPIRE', KEYS[3], ttl)
    local bits = redis.call('HGET', KEYS[2], ref)
    if bits then redis.call('HDEL', KEYS[2], ref) end
    if verdict == 'failed' and redis.call('LLEN', KEYS[4]) < max then
      redis.call('RPUSH', KEYS[4], cjson.encode({ref, ARGV[i + 2], ARGV[i + 3]}))
      redis.call('EXPIRE', KEYS[4], ttl)
    end
    if verdict == 'synced' then
      out[#out + 1] = ref
      out[#out + 1] = bits or '0'
    end
  end
end
return out
`,
);

/**
 * Adds drift class bits to entities of the classes hash: KEYS[1] = hash; ARGV = refKey, bits, ...
 */
const MERGE_CLASSES = luaScript<number>(
  "scimRepairMergeClasses",
  `
for i = 1, #ARGV, 2 do
  local bits = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  redis.call('HSET', KEYS[1], ARGV[i], bit.bor(bits, tonumber(ARGV[i + 1])))
end
return 1
`,
);

/** Records which drift classes each repaired entity had (for drift_repaired_total once it syncs). */
export async function mergeRepairClasses(
  redis: Redis,
  key: string,
  bits: Map<string, number>,
): Promise<void> {
  if (bits.size === 0) return;
  await MERGE_CLASSES.run(redis, [key], [...bits].flat());
}

/** The Redis keys of one tracked run or resync. */
export interface SettleKeys {
  /** SET of refKeys enqueued and not settled yet. */
  tracked: string;
  /** HASH refKey -> drift class bits (runs only; a resync's is never written). */
  classes: string;
  /** HASH synced, failed. */
  counts: string;
  /** LIST of the first failures, JSON [ref, code, reason]. */
  failures: string;
}

export interface SettleOptions {
  redis: Redis;
  reader: RepairStatusReader;
  /** The pause between two passes while entities are pending, ms. Default 1000. */
  tickMs?: number;
  /**
   * The tracking gives up when no entity settled for this long (a sync stuck behind a blocked
   * member, say): the run or resync then ends `failed`, naming how many never settled. Default 15 min.
   */
  stallMs?: number;
  /** Pending entities one pass looks at, at most (each pass reads from the start). Default 2000. */
  budget?: number;
}

/** How long the tracked keys live at most (a worker lost for good must not leave them forever). */
export const TRACKED_TTL_SECONDS = 7 * 24 * 3600;

/**
 * One pass over a tracked set: reads the verdicts chunk by chunk (SSCAN), removes and counts the
 * settled entities, and stops once it has seen `budget` entities still pending (they must settle
 * anyway before the whole does; the next pass starts over from the set's start, which has shrunk).
 * Memory holds one chunk. Answers the outcome so far and the class bits of entities synced now.
 */
export async function settlePass(
  options: SettleOptions,
  keys: SettleKeys,
  previous: RepairOutcome,
  chunk = 500,
): Promise<{ outcome: RepairOutcome; syncedBits: number[] }> {
  const { redis } = options;
  const budget = options.budget ?? 2000;
  const syncedBits: number[] = [];
  let pendingSeen = 0;
  let settledNow = 0;
  let cursor = "0";
  do {
    const [next, members] = await redis.sscan(keys.tracked, cursor, "COUNT", chunk);
    cursor = next;
    if (members.length === 0) continue;
    const verdicts = await options.reader(members);
    const args: string[] = [];
    members.forEach((ref, index) => {
      const v = verdicts[index];
      if (!v || v.verdict === "pending") {
        pendingSeen += 1;
        return;
      }
      args.push(ref, v.verdict, v.code ?? "", (v.reason ?? "").slice(0, 300));
    });
    if (args.length === 0) continue;
    const removed = await SETTLE.run(
      redis,
      [keys.tracked, keys.classes, keys.counts, keys.failures],
      [MAX_LISTED_FAILURES, ...args],
    );
    settledNow += args.length / 4;
    for (let i = 1; i < removed.length; i += 2) syncedBits.push(Number(removed[i]) || 0);
  } while (cursor !== "0" && pendingSeen < budget);
  const [pending, counts, failures] = await Promise.all([
    redis.scard(keys.tracked),
    redis.hmget(keys.counts, "synced", "failed"),
    redis.lrange(keys.failures, 0, MAX_LISTED_FAILURES - 1),
  ]);
  const outcome: RepairOutcome = {
    synced: Number(counts[0] ?? 0),
    failed: Number(counts[1] ?? 0),
    pending,
    settled: pending === 0,
    failures: failures.map((raw): RepairFailure => {
      const [ref = "", code = "", reason = ""] = JSON.parse(raw) as string[];
      return { ref: ref.split("|").join("/"), code, reason };
    }),
    lastSettledAt: settledNow > 0 ? new Date().toISOString() : previous.lastSettledAt,
  };
  return { outcome, syncedBits };
}

/** Whether the tracking should give up: nothing settled for `stallMs`. */
export function stalled(options: SettleOptions, outcome: RepairOutcome, now = Date.now()): boolean {
  return now - Date.parse(outcome.lastSettledAt) > (options.stallMs ?? 15 * 60_000);
}

/** Whether a pass changed nothing (the document need not be written again). */
export function sameProgress(a: RepairOutcome, b: RepairOutcome): boolean {
  return a.synced === b.synced && a.failed === b.failed && a.pending === b.pending;
}

/**
 * The fields that end a settled run or resync: `succeeded`, or `failed` with the error naming the
 * failures; its duration unless an admin's confirmation settled it (the wait for the admin is no
 * part of it).
 */
export function finishedFields(
  outcome: RepairOutcome,
  what: "repairs" | "entities",
  op: { startedAt?: string; settledBy?: string },
): { state: "succeeded" | "failed"; error?: string; finishedAt: string; durationMs?: number } {
  const error = outcomeError(outcome, what);
  const startedMs = op.startedAt ? Date.parse(op.startedAt) : Date.now();
  return {
    state: error ? "failed" : "succeeded",
    ...(error ? { error } : {}),
    finishedAt: new Date().toISOString(),
    ...(op.settledBy ? {} : { durationMs: Date.now() - startedMs }),
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
