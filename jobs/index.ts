export { QUEUE_NAMES, type QueueName } from "./queue-names.js";
export { createQueueStatus, type QueueStatus } from "./queue-status.js";
export {
  startWorkers,
  type RunningWorkers,
  type StartWorkersOptions,
  type WorkerTuning,
} from "./start-workers.js";
export { createSyncQueue, type SyncQueue, type SyncQueueOptions } from "./sync-queue.js";
export { syncJobOptions, type SyncJobData } from "./sync-job.js";
