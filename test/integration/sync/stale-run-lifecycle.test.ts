/**
 * A run frozen past its job's lock (a GC pause, a stopped VM) while another run synced the entity
 * must not queue a lifecycle change when it wakes: a queued change is a platform write deferred to
 * the flusher. Here a user is reactivated at the source; run A reads it and freezes; meanwhile the
 * user is deleted (onDelete: deactivate) and the re-run job syncs and purges it. A, woken, queued
 * ACTIVATE: the user deleted at the source stood active on the platform for good, with no record.
 */
import type { Job } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import type { SyncJobData } from "../../../jobs/sync-job.js";
import { createSyncProcessor } from "../../../jobs/sync-processor.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

describe("a run that lost its job's lock", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("queues no lifecycle change: a user deleted at the source meanwhile is not reactivated", async () => {
    h = await startJobsHarness("stale-run-lifecycle", { workers: false });
    const harness = h;
    const run = h.syncProcessor(h.syncContext());
    const u = await h.directory.createUser("okta", h.user("stale.run@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    await flushNow(h.syncContext());
    expect(h.platformUsers().get("stale.run@example.com")).toMatchObject({ active: false });
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: true }));

    // Run A reads the user, then "freezes": meanwhile the user is deleted at the source, and the
    // job's re-run (another worker) syncs it and the flusher settles its deactivation (purged).
    let frozen = false;
    const state = new Proxy(h.state, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "getAppliedUser") return value.bind(target);
        return async (...args: unknown[]) => {
          const read = await value.apply(target, args);
          if (!frozen) {
            frozen = true;
            await harness.directory.deleteUser("okta", ref.id);
            await run(ref);
            await flushNow(harness.syncContext());
          }
          return read;
        };
      },
    }) as RedisSyncStateStore;
    const processA = createSyncProcessor({
      ctx: h.syncContext({ state }),
      queue: h.syncQueue.queue,
      budget: new NoopRequestBudget(),
      metrics: syncMetrics(createMetricsRegistry({ defaultMetrics: false }), async () => ({})),
      logger: h.syncContext().logger,
    });
    // Its lock taken a minute ago and lost (another worker holds the job now).
    const staleJob = {
      data: { ...ref },
      attemptsMade: 0,
      opts: { attempts: 8 },
      processedOn: Date.now() - 60_000,
      extendLock: async () => 0,
      async updateData(data: SyncJobData) {
        staleJob.data = data;
      },
    } as unknown as Job<SyncJobData>;
    expect(await processA(staleJob, "token-a")).toBe("lock_lost");
    expect(frozen).toBe(true);
    await flushNow(h.syncContext());
    // The hand-on's sync finds the user gone, and leaves nothing of it.
    expect(await run(ref)).toBe("absent");
    await flushNow(h.syncContext());
    expect(h.platformUsers().get("stale.run@example.com")).toMatchObject({ active: false });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.state.getApplied(ref)).toBeNull();
    expect(await h.state.getStatus(ref)).toBeNull();
  });

  it("an embed user's member record a late run wrote after the user was purged is dropped by the next sync", async () => {
    h = await startJobsHarness("stale-run-embed", {
      workers: false,
      sources: { portal: { tokens: ["t"], target: { embedTenant: "acme" } } },
    });
    const run = h.syncProcessor(h.syncContext());
    // Written by a run that woke after the user's purge (no directory entity left).
    const ref: EntityRef = { source: "portal", kind: "user", id: "5f0c2a4e-purged" };
    await h.state.setEmbedMember("portal", ref.id, { externalId: "x-1", active: true });
    expect(await run(ref)).toBe("absent");
    expect(await h.state.getEmbedMembers("portal", [ref.id])).toEqual([null]);
  });
});
