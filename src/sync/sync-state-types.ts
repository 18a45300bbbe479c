import type { EntityRef } from "../scim/scim-types.js";

/**
 * What the sync side remembers per entity (owned by the sync pipeline, read by the admin API).
 * Kept in Redis next to the directory, under the same key prefix.
 */
export type SyncState = "pending" | "synced" | "retrying" | "dead";

export interface SyncErrorInfo {
  message: string;
  /** e.g. "platform_conflict", "attribute_type_clash", "ownership_conflict". */
  code: string;
  /** The platform operation that failed, when there was one. */
  operation?: string;
  at: string;
  attempts: number;
  /**
   * When it is tried again (ISO time), for a failure that heals by itself and is retried on a
   * schedule of its own: a user's lifecycle change waiting on a failing bulk call (the flusher).
   */
  retryAt?: string;
  /** Set when an admin discarded the dead letter of this error: who, and when. */
  discardedBy?: string;
  discardedAt?: string;
}

export interface EntitySyncStatus {
  ref: EntityRef;
  state: SyncState;
  /** The platform's id of the object (user id, group id, or embed group id). */
  platformId?: string;
  /** Generation of the directory entity that was last applied. */
  appliedGeneration?: number;
  lastSyncedAt?: string;
  lastError?: SyncErrorInfo;
}

export interface DeadLetter {
  ref: EntityRef;
  reason: string;
  code: string;
  operation?: string;
  at: string;
  attempts: number;
  /**
   * When a reconciliation handed this letter to a sync again (src/sync/dead-letter-retry.ts). A
   * letter written again for the entity while it is still at `autoRetriedGeneration` keeps it (the
   * sync it was handed to failed too): it is not handed over again, it waits for an admin. A letter
   * of a newer change of the entity does not. Gone with the letter once the entity syncs.
   */
  autoRetriedAt?: string;
  /**
   * The entity's generation when the reconciliation handed the letter over (with `autoRetriedAt`;
   * kept in the store, not listed by listDeadLetters).
   */
  autoRetriedGeneration?: number;
}

/**
 * A dead letter as read, and the very string it was stored as: what a removal "unless a sync wrote
 * another since" compares, so that it never depends on how the letter was serialised.
 */
export interface StoredDeadLetter {
  letter: DeadLetter;
  stored: string;
}

export interface SyncStateReader {
  getStatus(ref: EntityRef): Promise<EntitySyncStatus | null>;
  listDeadLetters(options: {
    source?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; items: DeadLetter[] }>;
  /** listDeadLetters, each letter with the string it was stored as. */
  listStoredDeadLetters(options: {
    source?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; items: StoredDeadLetter[] }>;
  /**
   * Every dead letter present when the walk begins (of one source, or of all), oldest first, a
   * page at a time, each exactly once: one removed before its page is read is left out, one
   * written again meanwhile is read as it is then, and one added meanwhile is not read.
   */
  deadLetterPages(options?: { source?: string; pageSize?: number }): AsyncIterable<StoredDeadLetter[]>;
  countDeadLetters(): Promise<number>;
  /** Removes the dead letter (discard). true if there was one. */
  removeDeadLetter(ref: EntityRef): Promise<boolean>;
  getDeadLetter(ref: EntityRef): Promise<StoredDeadLetter | null>;
  /** Removes a dead letter read before, unless a sync has written another one since (another string). */
  removeDeadLetterIfUnchanged(read: StoredDeadLetter): Promise<boolean>;
  setStatus(status: EntitySyncStatus): Promise<void>;
  /**
   * When no write of `ref` can land late any more (epoch ms): its late-write check, or a write of
   * it on the wire, whichever is later; null when there is neither (src/sync/late-writes.ts).
   */
  checkDueAt(ref: EntityRef): Promise<number | null>;
  /** Late-write checks and marks to come, and when the last is due (GET /status `lateWrites`). */
  lateWrites(): Promise<{ count: number; until: number | null }>;
}
