import type { BulkUserAction } from "../platform/platform-types.js";
import type { EntityRef } from "../scim/scim-types.js";
import type { EntitySyncStatus, SyncErrorInfo } from "./sync-state-types.js";

/** One user's lifecycle change waiting for a bulk call (one per platform user; the latest wins). */
export interface LifecycleEntry {
  platformId: string;
  ref: EntityRef;
  action: BulkUserAction;
  /** The directory generation this entry was planned from. */
  generation: number;
  /** true for a deleted user: once applied, its records are removed. */
  final: boolean;
  /** Failed bulk attempts for this user so far (the platform refused or lost this user's change). */
  attempts: number;
  /**
   * Bulk calls of this change that failed as a whole with a failure that heals by itself (5xx, a
   * timeout, a dropped connection): the platform down, not this user's change refused. They set the
   * backoff and are shown on the status, but spend no attempt: the change is never dead-lettered
   * for an outage, it lands by itself once the platform answers (absent: none).
   */
  failedCalls?: number;
  /** Epoch ms when the entry is due: when it was queued, or after a failed attempt's backoff. */
  since: number;
  /** Epoch ms when the sync queued it (kept across attempts; absent in entries of older versions). */
  queuedAt?: number;
  /**
   * The sync that queued it ends blocked (waiting for the user's manager, or for a userName to be
   * freed): once applied, the user is not marked synced and clean, it stays dirty for that sync to
   * come back. Set before the entry is queued, so a flush settling before the sync has recorded
   * its blocked status reads it all the same.
   */
  blocked?: true;
}

/** An entry as read, with its raw JSON (for compare-and-delete). */
export interface StoredLifecycleEntry {
  entry: LifecycleEntry;
  raw: string;
}

/** The operation the flusher's own failures name (on a user's status, its dead letter). */
export const BULK_OPERATION = "bulkUsers";

/**
 * The status of a user whose queued change `entry` waits on a failing bulk call: `retrying`, with
 * the failure (its code, and when it is tried again). Null when the status holds a failure of the
 * sync that queued the change (another write refused or failing since, a wait for its manager):
 * that one says why the user is not synced, and stays. Pure.
 */
export function waitingStatus(
  status: EntitySyncStatus | null,
  entry: LifecycleEntry,
  failure: SyncErrorInfo,
): EntitySyncStatus | null {
  const own = status?.state !== "synced" && status?.lastError?.attempts ? status.lastError : undefined;
  if (own && own.operation !== BULK_OPERATION && Date.parse(own.at) >= (entry.queuedAt ?? entry.since)) {
    return null;
  }
  return {
    ...status,
    ref: entry.ref,
    platformId: status?.platformId ?? entry.platformId,
    state: "retrying",
    lastError: failure,
  };
}
