import type { Redis } from "ioredis";
import { deletedUserKeys } from "../directory/directory-keys.js";
import { RECORD_DELETION_LUA } from "../directory/directory-scripts.js";
import type { WriteGuard } from "../directory/directory-types.js";
import { guarded } from "../directory/redis-failure.js";
import { PreconditionFailedError } from "../errors.js";
import { luaScript } from "../lua-script.js";
import type { HookMarks } from "./event-ordering.js";

/**
 * What the webhook intake remembers besides the directory, in Redis, every key with a TTL
 * (default 7 days) so that nothing grows without bound:
 *
 *   ${prefix}:hooks:${source}:okta:seen:<uuid>              STRING  an Okta event already applied
 *   ${prefix}:hooks:${source}:okta:marks:<kind>:<oktaId>    HASH    ordering marks (event-ordering.ts):
 *                                                                   v (seenVersion), f (floor), a:<aspect>,
 *                                                                   g (generation), s:<aspect> (seen value),
 *                                                                   n (revision, +1 on every write)
 *
 * Ordering across processes: every decision is made from marks read at a revision, and its writes
 * (the directory write and the new marks, or the new marks alone) apply in one Redis script only if
 * the marks are still at that revision (a WriteGuard for the directory's scripts, SET_MARKS_IF
 * otherwise); else PreconditionFailedError, and the event is decided again on fresh state. So two
 * processes deciding about one entity at the same time cannot both act on the same marks.
 *   ${prefix}:hooks:${source}:events:id:<webhook-id>        STRING  a signed delivery already applied
 *   ${prefix}:hooks:${source}:events:claim:<webhook-id>     STRING  an attempt applying it now (a lease:
 *                                                                   its token, expires on its own)
 *
 * A user's deletion is remembered in the directory's deletion records (directory-keys.ts, same TTL),
 * which every intake path's delete writes (SCIM, signed events, Okta), so that a late Okta event
 * published before the deletion does not bring the user back. Earlier versions kept it here, as
 *   ${prefix}:hooks:${source}:okta:deleted:ext:<oktaId> and ...:okta:deleted:login:<login>
 * which are still read until they expire.
 */
export const DEFAULT_HOOK_STATE_TTL_SECONDS = 7 * 24 * 3600;

export type MarkKind = "user" | "group";

/**
 * Marks without a directory write: KEYS[1] the marks hash; ARGV: expected revision, ttl seconds,
 * deletedAt ('' = none), nFields, field, value, ...; KEYS[2..] deletion records to set to deletedAt
 * (never moved back). Returns 1, or 0 when the marks are no longer at the expected revision.
 */
const SET_MARKS_IF = luaScript<number>(
  "scimHookSetMarksIf",
  `${RECORD_DELETION_LUA}
if (redis.call('HGET', KEYS[1], 'n') or '0') ~= ARGV[1] then return 0 end
local nFields = tonumber(ARGV[4])
if nFields > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 5, 4 + nFields * 2)) end
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  for i = 2, #KEYS do recordDeletion(KEYS[i], ARGV[3], ARGV[2]) end
end
return 1
`,
);

/** SET each key to ARGV[1] (epoch ms) with TTL ARGV[2], unless it holds a later time. */
const RECORD_DELETION = luaScript<number>(
  "scimHookRecordDeletion",
  `${RECORD_DELETION_LUA}
for _, k in ipairs(KEYS) do recordDeletion(k, ARGV[1], ARGV[2]) end
return 1
`,
);

/**
 * Claims a signed delivery's webhook-id for one attempt: KEYS[1] the applied marker, KEYS[2] the
 * claim; ARGV: token, lease ms. "done" when it was applied already, "claimed" when this attempt
 * holds the claim now, "busy" while another attempt holds it.
 */
const CLAIM_WEBHOOK_ID = luaScript<string>(
  "scimHookClaimWebhookId",
  `if redis.call('EXISTS', KEYS[1]) == 1 then return 'done' end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'claimed' end
return 'busy'
`,
);

/** Marks the delivery applied and drops the claim, if this attempt's token still holds it. */
const SETTLE_WEBHOOK_ID = luaScript<number>(
  "scimHookSettleWebhookId",
  `if ARGV[2] == 'applied' then redis.call('SET', KEYS[1], '1', 'EX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`,
);

export type WebhookIdClaim = "done" | "claimed" | "busy";

export class HookStateStore {
  private readonly ttl: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: { ttlSeconds?: number } = {},
  ) {
    this.ttl = options.ttlSeconds ?? DEFAULT_HOOK_STATE_TTL_SECONDS;
  }

  private base(source: string): string {
    return `${this.prefix}:hooks:${source}`;
  }

  /** Which of these Okta event uuids were already applied. */
  async seenOktaEvents(source: string, uuids: string[]): Promise<Set<string>> {
    if (uuids.length === 0) return new Set();
    const keys = uuids.map((u) => `${this.base(source)}:okta:seen:${u}`);
    const values = await guarded(() => this.redis.mget(...keys));
    return new Set(uuids.filter((_u, i) => values[i] !== null));
  }

  async markOktaEventSeen(source: string, uuid: string): Promise<void> {
    await guarded(() => this.redis.set(`${this.base(source)}:okta:seen:${uuid}`, "1", "EX", this.ttl));
  }

  private marksKey(source: string, kind: MarkKind, oktaId: string): string {
    return `${this.base(source)}:okta:marks:${kind}:${oktaId}`;
  }

  /** The marks of one Okta entity, with only the named aspects loaded, and their revision. */
  async getMarks(source: string, kind: MarkKind, oktaId: string, aspects: string[]): Promise<HookMarks> {
    const fields = ["n", "v", "f", "g", ...aspects.flatMap((a) => [`a:${a}`, `s:${a}`])];
    const values = await guarded(() => this.redis.hmget(this.marksKey(source, kind, oktaId), ...fields));
    const [revision, v, f, g, ...rest] = values;
    const marks: HookMarks = { revision: revision ?? "0", aspects: {} };
    if (v) marks.seenVersion = v;
    if (f) marks.floor = Number(f);
    if (g) marks.generation = Number(g);
    aspects.forEach((aspect, i) => {
      const time = rest[i * 2];
      const seen = rest[i * 2 + 1];
      if (time) marks.aspects[aspect] = Number(time);
      if (seen) marks.seen = { ...marks.seen, [aspect]: seen };
    });
    return marks;
  }

  /**
   * True when the marks are still at `read`'s revision: no hook write to the entity happened since
   * they were read. A decision that writes nothing ("stale") is checked with it, so that it was
   * made from marks and a record of the same moment.
   */
  async stillAt(source: string, kind: MarkKind, oktaId: string, read: HookMarks): Promise<boolean> {
    const revision = await guarded(() => this.redis.hget(this.marksKey(source, kind, oktaId), "n"));
    return (revision ?? "0") === (read.revision ?? "0");
  }

  /**
   * A WriteGuard for a directory write decided from `read`: it applies only if the marks are still
   * at `read`'s revision, and stores `next` with it (and, with `stampVersion`, the version the
   * write gives the entity as seenVersion).
   */
  guard(
    source: string,
    kind: MarkKind,
    oktaId: string,
    read: HookMarks,
    next: HookMarks,
    stampVersion: boolean,
  ): WriteGuard {
    return {
      key: this.marksKey(source, kind, oktaId),
      expected: read.revision ?? "0",
      fields: markFields(next),
      ...(stampVersion ? { versionField: "v" } : {}),
      ttlSeconds: this.ttl,
    };
  }

  /**
   * Stores `next` (and a deletion record dated `deletion.at`, when given) only if the marks are
   * still at `read`'s revision; else PreconditionFailedError (decide again).
   */
  async setMarksIf(
    source: string,
    kind: MarkKind,
    oktaId: string,
    read: HookMarks,
    next: HookMarks,
    deletion?: { user: { oktaId?: string; login?: string }; at: number },
  ): Promise<void> {
    const fields = Object.entries(markFields(next)).flat();
    const keys = [
      this.marksKey(source, kind, oktaId),
      ...(deletion ? this.deletedKeys(source, deletion.user) : []),
    ];
    const args = [
      read.revision ?? "0",
      this.ttl,
      deletion ? String(deletion.at) : "",
      fields.length / 2,
      ...fields,
    ];
    const applied = await guarded(() => SET_MARKS_IF.run(this.redis, keys, args));
    if (Number(applied) !== 1) throw new PreconditionFailedError("the event's ordering marks changed");
  }

  /** Keys of the previous layout (read only, until they expire). */
  private legacyDeletedKeys(source: string, user: { oktaId?: string; login?: string }): string[] {
    const keys: string[] = [];
    if (user.oktaId) keys.push(`${this.base(source)}:okta:deleted:ext:${user.oktaId}`);
    if (user.login) keys.push(`${this.base(source)}:okta:deleted:login:${user.login.toLowerCase()}`);
    return keys;
  }

  private deletedKeys(source: string, user: { oktaId?: string; login?: string }): string[] {
    return deletedUserKeys(this.prefix, source, {
      externalId: user.oktaId,
      userName: user.login,
    });
  }

  /**
   * The latest recorded deletion time of a user known by Okta id (externalId) or login (userName),
   * or null. Deletions through any intake path count (the directory records them).
   */
  async deletedAt(source: string, user: { oktaId?: string; login?: string }): Promise<number | null> {
    const keys = [...this.deletedKeys(source, user), ...this.legacyDeletedKeys(source, user)];
    if (keys.length === 0) return null;
    const values = await guarded(() => this.redis.mget(...keys));
    const times = values.filter((v): v is string => v !== null).map(Number);
    return times.length === 0 ? null : Math.max(...times);
  }

  /** Records a deletion of a user the directory does not hold (never moves a record back in time). */
  async recordDeletion(source: string, user: { oktaId?: string; login?: string }, at: number): Promise<void> {
    const keys = this.deletedKeys(source, user);
    if (keys.length === 0) return;
    await guarded(() => RECORD_DELETION.run(this.redis, keys, [String(at), this.ttl]));
  }

  private webhookIdKeys(source: string, id: string): [string, string] {
    return [`${this.base(source)}:events:id:${id}`, `${this.base(source)}:events:claim:${id}`];
  }

  /**
   * One attempt at a signed delivery claims its `webhook-id` before applying it, for `leaseMs`
   * (the lease ends on its own should the process die): "done" when the delivery was applied
   * already, "busy" while another attempt (any process) holds the claim.
   */
  async claimWebhookId(source: string, id: string, token: string, leaseMs: number): Promise<WebhookIdClaim> {
    const keys = this.webhookIdKeys(source, id);
    return (await guarded(() => CLAIM_WEBHOOK_ID.run(this.redis, keys, [token, leaseMs]))) as WebhookIdClaim;
  }

  /** Ends this attempt's claim; `applied` marks the delivery applied (kept for the TTL). */
  async settleWebhookId(source: string, id: string, token: string, applied: boolean): Promise<void> {
    const keys = this.webhookIdKeys(source, id);
    await guarded(() =>
      SETTLE_WEBHOOK_ID.run(this.redis, keys, [token, applied ? "applied" : "failed", this.ttl]),
    );
  }

  /** Removes every hooks key of a source (tests and source removal). */
  async clear(source: string): Promise<void> {
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${this.base(source)}:*`, "COUNT", 500);
      if (keys.length > 0) await this.redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  }
}

/** The hash fields of marks (the revision `n` is the scripts' business). */
function markFields(marks: HookMarks): Record<string, string> {
  const fields: Record<string, string> = {};
  if (marks.seenVersion) fields.v = marks.seenVersion;
  if (marks.floor) fields.f = String(marks.floor);
  if (marks.generation) fields.g = String(marks.generation);
  for (const [aspect, value] of Object.entries(marks.seen ?? {})) fields[`s:${aspect}`] = value;
  for (const [aspect, t] of Object.entries(marks.aspects)) fields[`a:${aspect}`] = String(t);
  return fields;
}
