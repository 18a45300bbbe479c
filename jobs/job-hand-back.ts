import type { Job, Processor, Worker } from "bullmq";
import type { Logger } from "../src/observability/logger.js";
import type { PlatformClient } from "../src/platform/platform-types.js";

/** How long a forced close waits for its jobs to be handed back (then the process exits anyway). */
export const HAND_BACK_MS = 1_000;

/**
 * The jobs a process runs, with their lock tokens: what a forced close hands back to the queue, so
 * that another process (or this one after a restart) runs them again at once rather than after
 * their locks expired and a stalled check found them.
 */
export class HeldJobs {
  private readonly held = new Map<Job, string>();

  /** The processor, with each job it runs held until it ends. */
  wrap<D, R>(processor: Processor<D, R>): Processor<D, R> {
    return async (job, token) => {
      if (token) this.held.set(job, token);
      try {
        return await processor(job, token);
      } finally {
        this.held.delete(job);
      }
    };
  }

  /**
   * Moves every held job back to wait with its lock token, within HAND_BACK_MS. The caller froze
   * their platform first (gatePlatform), so none of them makes a further platform call here.
   */
  async handBack(logger: Logger, message: string): Promise<void> {
    const jobs = [...this.held];
    logger.warn({ jobs: jobs.length }, message);
    const handedBack = jobs.map(([job, token]) =>
      job.moveToWait(token).then(
        () => true,
        (err: unknown) => {
          // Finished meanwhile, or Redis away: its lock expires and the stalled check moves it.
          logger.warn({ jobId: job.id, err: (err as Error).message }, "could not hand a job back");
          return false;
        },
      ),
    );
    await Promise.race([
      Promise.all(handedBack),
      new Promise((resolve) => setTimeout(resolve, HAND_BACK_MS).unref()),
    ]);
  }
}

/**
 * Closes workers gracefully, their running jobs given `timeoutMs` to finish: true when they did.
 * (A worker's close(true) after its close() only waits for that close: it forces nothing.)
 */
export function closeWithin(workers: readonly Worker[], timeoutMs: number): Promise<boolean> {
  const graceful = Promise.all(workers.map((w) => w.close())).then(() => true);
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
  return Promise.race([graceful, timeout]);
}

/**
 * The platform client of the processors, which a forced close freezes: from then on every call
 * (and every next page of a listing) waits forever instead of reaching the platform, so a frozen
 * job neither writes nor records a failure; the process exits with it pending.
 */
export function gatePlatform(platform: PlatformClient): { platform: PlatformClient; freeze(): void } {
  let frozen = false;
  const never = new Promise<never>(() => {});
  const gated = (result: unknown): unknown => {
    if (result instanceof Promise)
      return result.then(
        (value) => (frozen ? never : value),
        (err: unknown) => (frozen ? never : Promise.reject(err)),
      );
    if (result && typeof result === "object" && Symbol.asyncIterator in result) {
      const pages = result as AsyncIterable<unknown>;
      return {
        [Symbol.asyncIterator]: () => {
          const it = pages[Symbol.asyncIterator]();
          return {
            next: () => (frozen ? never : gated(it.next())),
            return: (value?: unknown) => it.return?.(value) ?? Promise.resolve({ done: true, value }),
          } as AsyncIterator<unknown>;
        },
      };
    }
    return result;
  };
  const proxy = new Proxy(platform, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => (frozen ? never : gated(value.apply(target, args)));
    },
  });
  return {
    platform: proxy,
    freeze: () => {
      frozen = true;
    },
  };
}
