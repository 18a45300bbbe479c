/**
 * Bounded re-reads (scan-directory.ts) and an embed-tenant source: an embed group the run does not
 * read again counts as deletedBehind and its members are not read, so neither those it keeps (a
 * member the run takes out of another group counts as deprovisioned: the run is held for an admin)
 * nor those its repair (a resync) takes out (a deprovisioning the guard never counted). So an
 * unseen embed group is always read again, whatever the cap, and classified as listed
 * (reconcile-embed-reread.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import { reconcileSyncState } from "../../../jobs/reconcile/sync-state-adapter.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";

describe("an embed group the listing missed, past the re-read cap", () => {
  let h: JobsHarness;
  const users: string[] = [];
  const groups: string[] = [];

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-embed-reread-cap", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
    });
    for (let i = 0; i < 4; i++) {
      const user = { ...h.user(`c${i}@example.com`), externalId: `ext-${i}` };
      users.push((await h.directory.createUser("acme", user)).resource.id);
    }
    groups.push((await h.directory.createGroup("acme", h.group("Analysts"), users.slice(0, 2))).resource.id);
    groups.push((await h.directory.createGroup("acme", h.group("Viewers"), users.slice(2, 4))).resource.id);
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("is read again, whatever the cap: its members are kept, and the run is not held for them", async () => {
    const applied = (id: string) =>
      h.state.getApplied<AppliedEmbedGroup>({
        source: "acme",
        kind: "group",
        id,
      }) as Promise<AppliedEmbedGroup>;
    const [analysts, viewers] = [await applied(groups[0]!), await applied(groups[1]!)];
    // ext-2 (in Viewers at the source) put in Analysts behind the bridge's back: the run takes it
    // out of Analysts, and leaves it in Viewers.
    await h.platform.addEmbedGroupMembers("acme", analysts.platformId!, [{ externalId: "ext-2" }]);
    // Viewers is not in the run's listing (one that shifted under deletions), and no sync of it
    // ran during the run.
    const platform = new Proxy(h.platform, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key !== "listEmbedGroups") return typeof value === "function" ? value.bind(target) : value;
        return async function* (tenant: string) {
          for await (const group of target.listEmbedGroups(tenant)) {
            if (group.id !== viewers.platformId) yield group;
          }
        };
      },
    }) as PlatformClient;
    const runs = new ReconcileRunStore(h.storeRedis, h.prefix, 10);
    const deps: ReconcileDeps = {
      config: h.config,
      redis: h.storeRedis,
      platform,
      directory: h.directory,
      state: reconcileSyncState(h.state, h.storeRedis, h.prefix),
      requestResync: async () => {},
      runs,
      logger: createLogger("silent"),
      maxUnseenRereads: 0,
    };
    const run = await runs.createRun({ source: "acme", dryRun: false, trigger: "admin" });
    // The run starts well after the groups' syncs: neither counts as synced during the run.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    const done = await runReconcile(deps, run.runId).finally(() => vi.useRealTimers());

    // Classified as listed: ext-2, kept by Viewers, is no planned deprovisioning.
    expect(done?.counts).toMatchObject({ membership: 1, deletedBehind: 0 });
    expect(done?.guard).toMatchObject({ plannedDeprovisions: 0, tripped: false });
    expect(done?.state).toBe("succeeded");
  }, 30_000);
});
