import type { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { AdminPrincipals } from "../../src/admin/admin-principals.js";
import { AdminService, type AdminJobPorts } from "../../src/admin/admin-service.js";
import { AuditLog } from "../../src/admin/audit-log.js";
import { ReconcileRunStore } from "../../src/admin/reconcile-run-store.js";
import { ResyncStore } from "../../src/admin/resync-store.js";
import type { Config } from "../../src/config/config-schema.js";
import type { DirectoryStore } from "../../src/directory/directory-types.js";
import type { Logger } from "../../src/observability/logger.js";
import type { Registry } from "../../src/observability/metrics.js";
import type { PlatformClient } from "../../src/platform/platform-types.js";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { forgetAbsent } from "../../src/sync/forget-absent.js";
import type { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import { HeldJobs, closeWithin, gatePlatform } from "../job-hand-back.js";
import { QUEUE_NAMES } from "../queue-names.js";
import type { QueueStatus } from "../queue-status.js";
import { createResyncQueue, requeueQueuedResyncs, startResyncWorker } from "../resync/resync-queue.js";
import { redisDirtyReader } from "./deprovision-under-way.js";
import { createReconcileQueue, startReconcileWorker } from "./reconcile-queue.js";
import { type SettleOptions, redisRepairStatus } from "./repair-settlement.js";
import { reconcileSyncState } from "./sync-state-adapter.js";

export interface AdminJobsOptions {
  config: Config;
  /** ioredis for BullMQ (maxRetriesPerRequest: null). */
  connection: Redis;
  /** ioredis for stores (runs, resyncs, audit, working sets). */
  redis: Redis;
  directory: DirectoryStore;
  syncState: RedisSyncStateStore;
  /** The pipeline's queue status (jobs/queue-status.ts): counts per queue and pending. */
  queueStatus: Pick<QueueStatus, "queueCounts" | "pending" | "pausedQueues">;
  logger: Logger;
  /** Present in processes that run workers (role all | worker): starts the reconcile and resync workers. */
  platform?: PlatformClient;
  /** Register the per-source job schedulers (default: when workers run). */
  schedule?: boolean;
  names?: { reconcile?: string; resync?: string };
  /** The process's metrics: jobs of the reconcile and resync queues, drift found and repaired. */
  registry?: Registry;
  /** How runs and resyncs track what they enqueued until it settles (tests shorten the waits). */
  settle?: Pick<SettleOptions, "tickMs" | "stallMs" | "budget">;
}

export interface AdminJobs {
  service: AdminService;
  principals: AdminPrincipals;
  audit: AuditLog;
  runs: ReconcileRunStore;
  resyncs: ResyncStore;
  ports: AdminJobPorts;
  /** The queues of this feature (for Bull Board, with the pipeline's). */
  queues: Queue[];
  /** Marks entities dirty and enqueues their syncs in resync mode. */
  requestResync(refs: EntityRef[]): Promise<void>;
  /** Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Builds the admin feature: stores, the admin service, the reconcile and resync queues, and (in
 * worker processes) their workers and the per-source reconciliation schedulers.
 */
export async function startAdminJobs(options: AdminJobsOptions): Promise<AdminJobs> {
  const { config, connection, redis, directory, syncState, logger } = options;
  const prefix = config.redis.prefix;
  const names = {
    reconcile: options.names?.reconcile ?? QUEUE_NAMES.reconcile,
    resync: options.names?.resync ?? QUEUE_NAMES.resync,
  };
  const runs = new ReconcileRunStore(redis, prefix, config.reconcile.keepRuns);
  const resyncs = new ResyncStore(redis, prefix);
  const audit = new AuditLog(redis, prefix);
  const reconcileQueue = createReconcileQueue({ connection, prefix, logger, name: names.reconcile });
  const resyncQueue = createResyncQueue({ connection, prefix, logger, name: names.resync });
  const state = reconcileSyncState(syncState, redis, prefix);

  const requestResync = async (refs: EntityRef[]): Promise<void> => {
    if (refs.length === 0) return;
    await syncState.requestResync(refs);
    await Promise.all(refs.map((ref) => directory.markDirty(ref)));
  };
  const ports: AdminJobPorts = {
    queueCounts: () => options.queueStatus.queueCounts(),
    pending: () => options.queueStatus.pending(),
    pausedQueues: () => options.queueStatus.pausedQueues(),
    enqueueReconcile: (runId, phase) => reconcileQueue.enqueue(runId, phase),
    enqueueResync: (id, phase) => resyncQueue.enqueue(id, phase),
    requestResync,
    forgetAbsent: (ref) => forgetAbsent({ state: syncState }, ref),
  };
  const service = new AdminService({
    config,
    directory,
    syncState,
    runs,
    resyncs,
    audit,
    jobs: ports,
    operationQueues: [names.reconcile, names.resync],
    registry: options.registry,
  });

  const workers: Worker[] = [];
  // The runs' and resyncs' platform, frozen on a forced close: a job handed back to the queue is
  // no longer worked on here (nor failed by the shutdown) while the next process runs it again.
  // Their Redis work stops too: each checks its job's lock before each chunk (jobs/job-lease.ts).
  const gate = options.platform ? gatePlatform(options.platform) : undefined;
  const held = new HeldJobs();
  if (gate) {
    const platform = gate.platform;
    // Each worker and run adds its own `module` (reconcile-worker, reconcile, resync-worker,
    // resync): one more here would repeat the key in every line.
    const registry = options.registry;
    // Runs and resyncs end when what they enqueued synced or failed, not when it was enqueued.
    const settle: SettleOptions = { ...options.settle, redis, reader: redisRepairStatus(redis, prefix) };
    workers.push(
      ...startReconcileWorker({
        connection,
        prefix,
        queue: reconcileQueue,
        deps: { config, redis, platform, directory, state, requestResync, runs, logger, registry, settle },
        held,
        requeueResyncs: (source) => requeueQueuedResyncs(resyncs, source, resyncQueue.enqueue),
      }),
      startResyncWorker({
        connection,
        prefix,
        name: names.resync,
        registry,
        held,
        deps: {
          config,
          platform,
          directory,
          state,
          requestResync,
          resyncs,
          logger,
          settle,
          dirty: redisDirtyReader(redis, prefix),
        },
      }),
    );
  }
  if (options.schedule ?? options.platform !== undefined) await reconcileQueue.schedule(config);

  let closing: Promise<void> | undefined;
  return {
    service,
    principals: new AdminPrincipals(config),
    audit,
    runs,
    resyncs,
    ports,
    queues: [reconcileQueue.queue, reconcileQueue.scheduleQueue, resyncQueue.queue],
    requestResync,
    close() {
      closing ??= (async () => {
        // As the sync workers close (start-workers.ts): a run or resync still streaming at the
        // shutdown timeout goes back to its queue at once, and the next process starts it over
        // (runs and resyncs are started over safely); its job's lock would otherwise hold it,
        // `running`, until it expired and a stalled check found it (up to a minute).
        if (!(await closeWithin(workers, config.server.shutdownTimeoutMs))) {
          gate?.freeze();
          await held.handBack(
            logger,
            "reconciliation or resync still running at the shutdown timeout; handed back",
          );
        }
        await Promise.all([reconcileQueue.close(), resyncQueue.close()]);
      })();
      return closing;
    },
  };
}
