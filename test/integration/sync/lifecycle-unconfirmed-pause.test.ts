/**
 * The lifecycle flush reads a user on the platform when a bulk answer names it nowhere (neither
 * succeeded nor failed). That read is a queue job's call like the bulk call itself: when another
 * call's 429 or 503 set a shared pause longer than the client sits out (maxRetryAfterMs), it must
 * not wait the pause out with the flush job active (docs/operations.md, "Platform rate limits":
 * none active), nor count the pause as this user's failure. It fails at once as rate limited, and
 * the flush job is put back with the user's attempts unspent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PauseTooLong, type RequestBudget } from "../../../src/platform/client/request-budget.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";
import { patched, queuedDeactivation } from "./lifecycle-fixtures.js";

/** A budget paused for two minutes once `paused` is set: a call that sits pauses out says so. */
class PausedBudget implements RequestBudget {
  paused = false;
  satOut = 0;
  async acquire(options: { maxWaitMs?: number } = {}): Promise<void> {
    if (!this.paused) return;
    if (options.maxWaitMs !== undefined && options.maxWaitMs < 120_000) throw new PauseTooLong(120_000);
    // A caller that would sit the two minutes out: the test fails on it instead of waiting.
    this.satOut++;
    throw new Error("this call would have sat out a two-minute pause");
  }
  async pauseUntil(): Promise<void> {}
  async pausedUntil(): Promise<number> {
    return this.paused ? Date.now() + 120_000 : 0;
  }
}

describe("the lifecycle flush's read of a user its bulk answer left out", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("does not sit out a long pause: the flush is put back, rate limited, the user's attempts unspent", async () => {
    const budget = new PausedBudget();
    h = await startJobsHarness("lifecycle-unconfirmed-pause", { workers: false, budget });
    const { ctx, ref } = await queuedDeactivation(h, "unconfirmed@pause.example");
    budget.paused = true;
    let reads = 0;
    const flushCtx: SyncContext = {
      ...ctx,
      platform: patched(h.platform, {
        // The bulk call was answered before the pause, naming the user nowhere…
        bulkUsers: async () => ({ succeeded: [], failed: [] }),
        // …and the read that should tell goes through the paused budget.
        getUser: async (id) => {
          reads++;
          return h!.platform.getUser(id);
        },
      }),
    };
    const letters: string[] = [];
    await expect(
      flushNow(flushCtx, {
        maxAttempts: 1,
        deadLetter: async ({ code }) => {
          letters.push(code);
        },
      }),
    ).rejects.toMatchObject({ code: "platform_rate_limited", retryAfterMs: 120_000 });
    expect(reads).toBe(1);
    expect(budget.satOut).toBe(0);
    expect(letters).toEqual([]);
    const [entry] = await h.state.peekLifecycle(10);
    expect(entry?.entry).toMatchObject({ ref, action: "DEACTIVATE", attempts: 0 });
  });

  it("settles the other users of the call before the flush is put back", async () => {
    h = await startJobsHarness("lifecycle-unconfirmed-pause-others", { workers: false });
    const paused = await queuedDeactivation(h, "paused@pause.example");
    const slow = await queuedDeactivation(h, "slow@pause.example");
    const pausedId = (await h.state.getStatus(paused.ref))?.platformId as string;
    const flushCtx: SyncContext = {
      ...paused.ctx,
      platform: patched(h.platform, {
        // The bulk call deactivated both, naming neither…
        bulkUsers: async (action, ids) => {
          await h!.platform.bulkUsers(action, ids);
          return { succeeded: [], failed: [] };
        },
        // …one user's read meets a long pause at once, the other's answers a little later.
        getUser: async (id) => {
          if (id === pausedId) {
            throw new PlatformError("getUser: not sent, the platform asked every call to pause", {
              operation: "getUser",
              failure: "rate_limited",
              transient: true,
              retryAfterMs: 120_000,
              heldBack: true,
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 300));
          return h!.platform.getUser(id);
        },
      }),
    };
    await expect(flushNow(flushCtx, { maxAttempts: 1, deadLetter: async () => {} })).rejects.toMatchObject({
      code: "platform_rate_limited",
    });
    // Put back, the flush has nothing of the other user's still running: it was settled.
    const left = await h.state.peekLifecycle(10);
    expect(left.map((e) => e.entry.ref)).toEqual([paused.ref]);
    expect(left[0]?.entry.attempts).toBe(0);
    expect((await h.state.getStatus(slow.ref))?.state).toBe("synced");
  });
});
