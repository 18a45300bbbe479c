import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { DirectoryStore } from "../src/directory/directory-types.js";
import { RedisSyncStateStore } from "../src/sync/redis-sync-state-store.js";
import { QUEUE_NAMES } from "./queue-names.js";

export const COUNTED_STATES = [
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
  "failed",
] as const;
const BUSY_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

/**
 * The queue that holds each source's next scheduled reconciliation as a delayed job (a BullMQ job
 * scheduler): the reconcile queue's name and `-schedule`, as jobs/reconcile/reconcile-queue.ts
 * names it.
 */
export function scheduleQueueName(reconcileQueue: string): string {
  return `${reconcileQueue}-schedule`;
}

export interface QueueStatus {
  /**
   * Jobs per work queue and state (GET /admin/v1/status `queues`). The schedule queue is not among
   * them: the admin status reads `idle` from these counts, and the schedule's delayed jobs are
   * always there.
   */
  queueCounts(): Promise<Record<string, Record<string, number>>>;
  /**
   * Jobs per queue and state for the `queue_jobs` and `queue_depth` metrics: the work queues and
   * the schedule queue (`reconcile-schedule`), whose delayed jobs are the sources' next scheduled runs.
   */
  depthCounts(): Promise<Record<string, Record<string, number>>>;
  /**
   * The work queues paused for the platform (a `Retry-After` longer than a minute: the sync or
   * lifecycle processor's `queue.rateLimit`), with when each pause ends (epoch ms); none when no
   * queue is paused.
   */
  pausedQueues(): Promise<Array<{ queue: string; until: number }>>;
  /** Dirty entities, queued lifecycle changes and late-write checks to come (sync/late-writes.ts). */
  pending(): Promise<number>;
  /**
   * No dirty entity, no job waiting, running or delayed in any queue, no open lifecycle batch and no
   * late-write check to come (ARCHITECTURE.md, GET /admin/v1/status). Dead-lettered entities do
   * not hold it false.
   */
  isIdle(): Promise<boolean>;
  /** Late-write checks and marks to come, and when the last is due (epoch ms; the `late_writes` gauge). */
  lateWrites(): Promise<{ count: number; until: number | null }>;
  countDeadLetters(): Promise<number>;
  /**
   * The size of each named source's dead-letter list (0 for a source with none), and of any other
   * source's that still has letters (a source taken out of the configuration).
   */
  deadLettersBySource(sources: readonly string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export function createQueueStatus(options: {
  connection: Redis;
  prefix: string;
  directory: DirectoryStore;
  /** Queue names (tests use their own). Default QUEUE_NAMES. */
  names?: Partial<Record<keyof typeof QUEUE_NAMES, string>>;
}): QueueStatus {
  const { connection, prefix, directory } = options;
  const names = { ...QUEUE_NAMES, ...options.names };
  const queues = Object.values(names).map((name) => new Queue(name, { connection, prefix }));
  const scheduleQueue = new Queue(scheduleQueueName(names.reconcile), { connection, prefix });
  for (const q of [...queues, scheduleQueue]) q.on("error", () => {});
  const state = new RedisSyncStateStore(connection, prefix);

  const countsOf = async (of: Queue[]) => {
    const out: Record<string, Record<string, number>> = {};
    for (const q of of) out[q.name] = await q.getJobCounts(...COUNTED_STATES);
    return out;
  };
  const queueCounts = () => countsOf(queues);
  let closing: Promise<void> | undefined;
  return {
    queueCounts,
    depthCounts: () => countsOf([...queues, scheduleQueue]),
    async pausedQueues() {
      const now = Date.now();
      // Every queue asked at once; the answer keeps the queues' order.
      // A manual pause sets the limiter's count to MAX_SAFE_INTEGER; asking with that as maxJobs
      // leaves out the workers' own per-second count (their limiter never limits by count).
      const ttls = await Promise.all(queues.map((q) => q.getRateLimitTtl(Number.MAX_SAFE_INTEGER)));
      const paused: Array<{ queue: string; until: number }> = [];
      queues.forEach((q, i) => {
        const ttl = ttls[i] as number;
        // Whole seconds, rounded up: what an operator reads, and stable from one look to the next.
        if (ttl > 0) paused.push({ queue: q.name, until: Math.ceil((now + ttl) / 1000) * 1000 });
      });
      return paused;
    },
    pending: async () =>
      (await directory.countDirty()) + (await state.countLifecycle()) + (await state.countChecks()),
    async isIdle() {
      if ((await directory.countDirty()) > 0) return false;
      if ((await state.countLifecycle()) > 0) return false;
      // A platform write without an answer may still land: not idle until it was checked.
      if ((await state.countChecks()) > 0) return false;
      for (const q of queues) {
        const counts = await q.getJobCounts(...BUSY_STATES);
        if (Object.values(counts).some((n) => n > 0)) return false;
      }
      return true;
    },
    lateWrites: () => state.lateWrites(),
    countDeadLetters: () => state.countDeadLetters(),
    async deadLettersBySource(sources) {
      const sizeOf = async (source: string) =>
        (await state.listDeadLetters({ source, offset: 0, limit: 0 })).total;
      const sizes = await Promise.all(sources.map(sizeOf));
      const counts: Record<string, number> = Object.fromEntries(
        sources.map((source, index) => [source, sizes[index] ?? 0]),
      );
      // Letters of sources no longer configured (kept, listed and counted in /status) are counted
      // too; they are looked for only when the configured sources' counts leave some unaccounted.
      const known = Object.values(counts).reduce((sum, n) => sum + n, 0);
      if ((await state.countDeadLetters()) > known) {
        for (const source of await state.deadLetterSources()) counts[source] ??= await sizeOf(source);
      }
      return counts;
    },
    close: () => {
      closing ??= Promise.all([...queues, scheduleQueue].map((q) => q.close())).then(() => undefined);
      return closing;
    },
  };
}
