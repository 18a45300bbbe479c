import type { Redis } from "ioredis";

export interface AuditEntry {
  at: string;
  /** The admin token's name (never the token). */
  actor: string;
  role: "viewer" | "admin";
  /** e.g. "reconcile.trigger", "reconcile.confirm", "resync.trigger", "dead-letters.retry". */
  action: string;
  /** What the action named: a source, a run id, an entity reference. */
  target?: string;
  outcome: "accepted" | "refused" | "failed";
  details?: Record<string, string | number | boolean>;
}

/** The admin audit log: who did what, when. Newest first, capped at `maxEntries`. */
export class AuditLog {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly maxEntries = 10_000,
  ) {
    this.key = `${prefix}:admin:audit`;
  }

  async record(entry: Omit<AuditEntry, "at"> & { at?: string }): Promise<void> {
    const full: AuditEntry = { ...entry, at: entry.at ?? new Date().toISOString() };
    await this.redis
      .multi()
      .lpush(this.key, JSON.stringify(full))
      .ltrim(this.key, 0, this.maxEntries - 1)
      .exec();
  }

  async list(options: { offset: number; limit: number }): Promise<{ total: number; items: AuditEntry[] }> {
    const [total, raw] = await Promise.all([
      this.redis.llen(this.key),
      this.redis.lrange(this.key, options.offset, options.offset + options.limit - 1),
    ]);
    return { total, items: raw.map((line) => JSON.parse(line) as AuditEntry) };
  }
}
