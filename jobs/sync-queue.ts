import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { ChangeNotifier } from "../src/directory/directory-types.js";
import type { Logger } from "../src/observability/logger.js";
import type { EntityRef } from "../src/scim/scim-types.js";
import { QUEUE_NAMES } from "./queue-names.js";
import { SYNC_JOB_NAME, type SyncJobData, type SyncJobTuning, syncJobOptions } from "./sync-job.js";

export interface SyncQueueOptions extends SyncJobTuning {
  connection: Redis;
  /** config.redis.prefix (a hash tag, so BullMQ's keys share one Redis Cluster slot). */
  prefix: string;
  logger: Logger;
  /** Queue name (tests use their own). Default QUEUE_NAMES.sync. */
  name?: string;
}

export interface SyncQueue {
  /** Enqueues one sync per entity (deduplicated); the directory calls it after every write. */
  notify: ChangeNotifier;
  queue: Queue<SyncJobData>;
  /** Safe to call twice. */
  close(): Promise<void>;
}

export function createSyncQueue(options: SyncQueueOptions): SyncQueue {
  const { connection, prefix, logger } = options;
  const queue = new Queue<SyncJobData>(options.name ?? QUEUE_NAMES.sync, { connection, prefix });
  queue.on("error", (err) => logger.warn({ err: err.message, queue: queue.name }, "sync queue error"));
  const notify: ChangeNotifier = async (refs: EntityRef[]) => {
    // Never put more than the reference in the job (no personal data, no secrets).
    await Promise.all(
      refs.map((ref) =>
        queue.add(
          SYNC_JOB_NAME,
          { source: ref.source, kind: ref.kind, id: ref.id },
          syncJobOptions(ref, options),
        ),
      ),
    );
  };
  let closing: Promise<void> | undefined;
  return {
    notify,
    queue,
    close: () => {
      closing ??= queue
        .close()
        .catch((err: unknown) => logger.warn({ err }, "closing the sync queue failed"));
      return closing;
    },
  };
}
