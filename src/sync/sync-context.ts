import type { Config } from "../config/config-schema.js";
import type { DirectoryStore } from "../directory/directory-types.js";
import type { Logger } from "../observability/logger.js";
import type { PlatformClient } from "../platform/platform-types.js";
import type { AttributeDefinitions } from "./attribute-definitions.js";
import type { RedisSyncStateStore } from "./redis-sync-state-store.js";

/** Everything a sync of one entity needs. */
export interface SyncContext {
  config: Config;
  directory: DirectoryStore;
  platform: PlatformClient;
  state: RedisSyncStateStore;
  attributes: AttributeDefinitions;
  logger: Logger;
  /** Makes sure a lifecycle flush is scheduled (the jobs layer queues one). */
  scheduleLifecycle(): Promise<void>;
}

/**
 * How a sync ended:
 * - clean: the platform matches `generation`; the caller marks the entity clean.
 * - lifecycle: a lifecycle change is queued; the flush marks it clean once applied.
 * - purged: a deleted entity is deprovisioned and its records are gone.
 * - absent: the directory has no such entity (already purged).
 */
export interface SyncOutcome {
  result: "clean" | "lifecycle" | "purged" | "absent";
  generation: number;
  platformId?: string;
  warnings: Array<{ code: string; message: string }>;
}

/** Filled in while a sync runs, so that a failure can still name the generation it was at. */
export interface SyncProgress {
  generation?: number;
}
