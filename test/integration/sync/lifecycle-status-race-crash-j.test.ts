/**
 * Crash-j: the sibling of ede6104 for a change that is not a user's last. A sync that queues a
 * lifecycle change records the user `pending` once it has queued it; the flusher may settle the
 * change before that (a full call goes at once, an entry of the same action already queued is
 * kept and may be due), and records what became of it: `synced`, or a dead letter when the
 * platform refuses it for good. The sync's late `pending` must not write over either: the user
 * showed `pending` for good (the entity clean, nothing queued), and the dead letter of a refused
 * DEACTIVATE was removed (recordSynced drops the letter), the user left active with no trace.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLifecycleProcessor } from "../../../jobs/lifecycle-processor.js";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";

/** A sync context whose lifecycle flush (the real flush job's processor) runs as soon as a change is queued. */
function flushingAtOnce(h: JobsHarness, maxAttempts: number): SyncContext {
  const logger = createLogger("silent");
  const ctx: SyncContext = h.syncContext({
    scheduleLifecycle: async () => {
      await flush();
    },
  });
  const flush = createLifecycleProcessor({
    ctx,
    queue: h.syncQueue.queue,
    budget: new NoopRequestBudget(),
    metrics: syncMetrics(createMetricsRegistry({ defaultMetrics: false }), async () => ({})),
    logger,
    windowMs: 0,
    maxAttempts,
    stopping: () => false,
  });
  return ctx;
}

describe("crash-j: a lifecycle change settled before its sync recorded", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("leaves the user synced, not pending", async () => {
    h = await startJobsHarness("crash-j-settled-status", { workers: false });
    const run = h.syncProcessor(flushingAtOnce(h, 3));
    const u = await h.directory.createUser("okta", h.user("cj.status@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");

    expect(h.platformUsers().get("cj.status@example.com")).toMatchObject({ active: false });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
    expect(await h.state.getStatus(ref)).toMatchObject({ state: "synced", appliedGeneration: 2 });
  });

  it("keeps the dead letter of a DEACTIVATE the platform refused for good", async () => {
    h = await startJobsHarness("crash-j-settled-dead", { workers: false });
    const run = h.syncProcessor(flushingAtOnce(h, 1));
    const u = await h.directory.createUser("okta", h.user("cj.refused@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    const platformId = String(h.platformUsers().get("cj.refused@example.com")?.["id"]);
    h.emulator.drift({ action: "failBulkFor", userId: platformId, code: "FORBIDDEN" });
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");

    // Refused: the user is still active, and that shows (invariant 7).
    expect(h.platformUsers().get("cj.refused@example.com")).toMatchObject({ active: true });
    expect((await h.state.listDeadLetters({ offset: 0, limit: 10 })).items).toEqual([
      expect.objectContaining({ ref, code: "platform_bulk_forbidden" }),
    ]);
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "platform_bulk_forbidden" },
    });
  });
});
