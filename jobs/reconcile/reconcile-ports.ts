import type { Redis } from "ioredis";
import type { ReconcileRunStore } from "../../src/admin/reconcile-run-store.js";
import type { Config } from "../../src/config/config-schema.js";
import type { DirectoryStore } from "../../src/directory/directory-types.js";
import type { AppliedEmbedMember } from "../../src/mapping/plan-types.js";
import type { Logger } from "../../src/observability/logger.js";
import type { Registry } from "../../src/observability/metrics.js";
import type { BulkUserAction, PlatformClient } from "../../src/platform/platform-types.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import type { DeadLetterRetryState } from "../../src/sync/dead-letter-retry.js";
import type { OwnerScope } from "../../src/sync/sync-keys.js";
import type { JobLease } from "../job-lease.js";
import type { SettleOptions } from "./repair-settlement.js";

/** What reconciliation reads of the sync side (RedisSyncStateStore plus a bulk owner lookup). */
export interface ReconcileSyncState {
  /** The owner (a refKey) of each platform key, null where no source owns it. */
  ownersOf(scope: OwnerScope, platformKeys: string[]): Promise<Array<string | null>>;
  getUserPlatformIds(source: string, ids: string[]): Promise<Array<string | null>>;
  getEmbedMembers(source: string, ids: string[]): Promise<Array<AppliedEmbedMember | null>>;
  getApplied<T>(ref: EntityRef): Promise<T | null>;
  /**
   * Users of an embed-tenant source the sync recorded as embed users, active or not (the
   * deprovisioning guard's "users the source owns" for such a source). Without it, the embed users
   * in the source's groups on the platform are counted.
   */
  countEmbedUsers?(source: string): Promise<number>;
  /**
   * The lifecycle change queued for a platform user's next bulk call, if any (the guard leaves out
   * a deprovisioning the identity provider's sync has under way: deprovision-under-way.ts).
   */
  queuedLifecycle?(platformId: string): Promise<BulkUserAction | null>;
  /**
   * Whether the identity provider wrote the entity after its last sync (the directory's generation
   * is newer than the one its status says was applied). Without it, any dirty entity is taken as so.
   */
  changedSinceSync?(ref: EntityRef): Promise<boolean>;
  /**
   * When each entity's sync last recorded it synced (ms since the epoch; null: no record of a
   * sync, or none finished). Which unseen entities a run reads again before calling them deleted
   * behind (scan-directory.ts). Without it, every entity is taken as synced a moment ago.
   */
  lastSyncedAt?(refs: readonly EntityRef[]): Promise<Array<number | null>>;
  /** The dead letters a run that applies its repairs hands over to a resync, once (src/sync/dead-letter-retry.ts). */
  deadLetters: DeadLetterRetryState;
}

/** Marks entities dirty and enqueues their syncs in resync mode (re-read the platform, apply what differs). */
export type ResyncRequester = (refs: EntityRef[]) => Promise<void>;

export interface ReconcileDeps {
  config: Config;
  /** For the run's working sets (seen ids, planned repairs); never holds a listing in memory. */
  redis: Redis;
  platform: PlatformClient;
  directory: Pick<
    DirectoryStore,
    "snapshotUser" | "snapshotGroup" | "scanIds" | "countEntities" | "findUserId"
  >;
  state: ReconcileSyncState;
  requestResync: ResyncRequester;
  runs: ReconcileRunStore;
  logger: Logger;
  /** Where drift found and repaired is counted (drift_found_total, drift_repaired_total). */
  registry?: Registry;
  /** Entities looked at together (one Redis round trip per step). Default 100. */
  pageSize?: number;
  /** Repairs enqueued per chunk. Default 500. */
  repairChunk?: number;
  /**
   * Tracks applied repairs until every entity synced or failed: the run stays `running` meanwhile
   * and ends `succeeded` only when none failed, and drift_repaired_total counts an entity's
   * differences once it synced. Without it (the benchmark) a run ends once its repairs are
   * enqueued, and counts none of them as repaired.
   */
  settle?: SettleOptions;
  /**
   * Attribute values cost one platform call per user (the platform has no listing of them), so a
   * run reads them for at most about this many users: a large source is split into slices, and
   * successive runs check successive slices. Default 2000.
   */
  maxAttributeChecksPerRun?: number;
  /**
   * Unseen entities with a platform id that a run reads once more on the platform before calling
   * them deleted behind, beside those synced since the run started (always read: scan-directory.ts).
   * Past it, the rest are taken as the listing found them. Default 100.
   */
  maxUnseenRereads?: number;
  /**
   * The job the run is processed under (per job, set by processReconcileJob): checked before each
   * chunk of the run's Redis work, so that a run whose job was handed back to the queue (a forced
   * close) or moved on (its lock ran out) stops here, quietly, while the next holder runs it.
   * Without it (tests, the benchmark) the run never stops for that.
   */
  lease?: JobLease;
}
