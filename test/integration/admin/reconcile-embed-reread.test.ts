/**
 * An embed group the run's listing did not contain (its sync created it after the listing had
 * passed) and that the directory pass finds on the platform when it reads it again is classified
 * as if listed: its members count as kept by the deprovisioning guard, so an embed user the run
 * takes out of another group but leaves in this one is no planned deprovisioning, and does not
 * hold the run for an admin's confirmation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import { reconcileSyncState } from "../../../jobs/reconcile/sync-state-adapter.js";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";

describe("an embed group found on re-read", () => {
  let h: JobsHarness;
  const users: string[] = [];
  const groups: string[] = [];

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-embed-reread", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
    });
    for (let i = 0; i < 4; i++) {
      const user = { ...h.user(`r${i}@example.com`), externalId: `ext-${i}` };
      users.push((await h.directory.createUser("acme", user)).resource.id);
    }
    groups.push((await h.directory.createGroup("acme", h.group("Analysts"), users.slice(0, 2))).resource.id);
    groups.push((await h.directory.createGroup("acme", h.group("Viewers"), users.slice(2, 4))).resource.id);
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("keeps its members: one taken out of another group but left in it is no planned deprovisioning", async () => {
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
    // Viewers is not in the run's listing (as if its sync created it after the listing had passed).
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
    };
    const run = await runs.createRun({ source: "acme", dryRun: false, trigger: "admin" });

    const done = await runReconcile(deps, run.runId);

    expect(done?.counts).toMatchObject({ membership: 1, deletedBehind: 0 });
    expect(done?.guard).toMatchObject({ plannedDeprovisions: 0, tripped: false });
    expect(done?.state).toBe("succeeded");
  }, 30_000);
});
