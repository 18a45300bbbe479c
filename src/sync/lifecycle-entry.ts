import type { BulkUserAction } from "../platform/platform-types.js";
import type { EntityRef } from "../scim/scim-types.js";

/** One user's lifecycle change waiting for a bulk call (one per platform user; the latest wins). */
export interface LifecycleEntry {
  platformId: string;
  ref: EntityRef;
  action: BulkUserAction;
  /** The directory generation this entry was planned from. */
  generation: number;
  /** true for a deleted user: once applied, its records are removed. */
  final: boolean;
  /** Failed bulk attempts for this user so far. */
  attempts: number;
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
