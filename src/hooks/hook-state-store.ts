import type { Redis } from "ioredis";
import { deletedUserKeys } from "../directory/directory-keys.js";
import { guarded } from "../directory/redis-failure.js";
import type { HookMarks } from "./event-ordering.js";

/**
 * What the webhook intake remembers besides the directory, in Redis, every key with a TTL
 * (default 7 days) so that nothing grows without bound:
 *
 *   ${prefix}:hooks:${source}:okta:seen:<uuid>              STRING  an Okta event already applied
 *   ${prefix}:hooks:${source}:okta:marks:<kind>:<oktaId>    HASH    ordering marks (event-ordering.ts):
 *                                                                   v (seenVersion), f (floor), a:<aspect>
 *   ${prefix}:hooks:${source}:events:id:<webhook-id>        STRING  a signed delivery already applied
 *
 * A user's deletion is remembered in the directory's deletion records (directory-keys.ts, same TTL),
 * which every intake path's delete writes (SCIM, signed events, Okta), so that a late Okta event
 * published before the deletion does not bring the user back. Earlier versions kept it here, as
 *   ${prefix}:hooks:${source}:okta:deleted:ext:<oktaId> and ...:okta:deleted:login:<login>
 * which are still read until they expire.
 */
export const DEFAULT_HOOK_STATE_TTL_SECONDS = 7 * 24 * 3600;

export type MarkKind = "user" | "group";

/** SET each key to ARGV[1] (epoch ms) with TTL ARGV[2], unless it holds a later time. */
const RECORD_DELETION = `
for _, k in ipairs(KEYS) do
  local old = tonumber(redis.call('GET', k))
  if not old or old < tonumber(ARGV[1]) then redis.call('SET', k, ARGV[1], 'EX', ARGV[2]) end
end
return 1
`;

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

  /** The marks of one Okta entity, with only the named aspects loaded. */
  async getMarks(source: string, kind: MarkKind, oktaId: string, aspects: string[]): Promise<HookMarks> {
    const fields = ["v", "f", ...aspects.map((a) => `a:${a}`)];
    const values = await guarded(() => this.redis.hmget(this.marksKey(source, kind, oktaId), ...fields));
    const [v, f, ...rest] = values;
    const marks: HookMarks = { aspects: {} };
    if (v) marks.seenVersion = v;
    if (f) marks.floor = Number(f);
    aspects.forEach((aspect, i) => {
      const value = rest[i];
      if (value) marks.aspects[aspect] = Number(value);
    });
    return marks;
  }

  async setMarks(source: string, kind: MarkKind, oktaId: string, marks: HookMarks): Promise<void> {
    const key = this.marksKey(source, kind, oktaId);
    const fields: Record<string, string> = {};
    if (marks.seenVersion) fields.v = marks.seenVersion;
    if (marks.floor) fields.f = String(marks.floor);
    for (const [aspect, t] of Object.entries(marks.aspects)) fields[`a:${aspect}`] = String(t);
    if (Object.keys(fields).length === 0) return;
    await guarded(() => this.redis.multi().hset(key, fields).expire(key, this.ttl).exec());
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
    await guarded(() => this.redis.eval(RECORD_DELETION, keys.length, ...keys, String(at), this.ttl));
  }

  /** True when a signed delivery with this `webhook-id` was already applied. */
  async seenWebhookId(source: string, id: string): Promise<boolean> {
    return (await guarded(() => this.redis.exists(`${this.base(source)}:events:id:${id}`))) === 1;
  }

  async markWebhookIdSeen(source: string, id: string): Promise<void> {
    await guarded(() => this.redis.set(`${this.base(source)}:events:id:${id}`, "1", "EX", this.ttl));
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
