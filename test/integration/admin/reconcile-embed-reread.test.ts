/**
 * An embed group the run's listing did not contain (its sync created it after the listing had
 * passed) and that the directory pass finds on the platform when it reads it again is classified
 * as if listed: its members count as kept by the deprovisioning guard, so an embed user the run
 * takes out of another group but leaves in this one is no planned deprovisioning, and does not
 * hold the run for an admin's confirmation.
 *
 * Bounded re-reads (scan-directory.ts): an embed group the run did not read again would count as
 * deletedBehind with its members unread, so neither those it keeps (the run held for an admin)
 * nor those its repair (a resync) takes out (a deprovisioning the guard never counted). So an
 * unseen embed group is always read again, whatever the cap, and classified as listed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runReconcile } from "../../../jobs/reconcile/reconcile-runner.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import { type JobsHarness, reconcileDeps, startJobsHarness } from "../jobs/jobs-harness.js";

/**
 * Two embed groups of source acme, Analysts (ext-0, ext-1) and Viewers (ext-2, ext-3), synced;
 * then ext-2 put in Analysts behind the bridge's back (the run takes it out of Analysts and leaves
 * it in Viewers), and `run` runs a reconciliation whose platform listing leaves Viewers out.
 */
function viewersUnlisted(name: string, stem: string) {
  let h: JobsHarness;
  const users: string[] = [];
  const groups: string[] = [];

  beforeAll(async () => {
    h = await startJobsHarness(name, {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
    });
    for (let i = 0; i < 4; i++) {
      const user = { ...h.user(`${stem}${i}@example.com`), externalId: `ext-${i}` };
      users.push((await h.directory.createUser("acme", user)).resource.id);
    }
    groups.push((await h.directory.createGroup("acme", h.group("Analysts"), users.slice(0, 2))).resource.id);
    groups.push((await h.directory.createGroup("acme", h.group("Viewers"), users.slice(2, 4))).resource.id);
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  return async function run(overrides: Partial<ReconcileDeps> = {}, startLater = false) {
    const applied = (id: string) =>
      h.state.getApplied<AppliedEmbedGroup>({
        source: "acme",
        kind: "group",
        id,
      }) as Promise<AppliedEmbedGroup>;
    const [analysts, viewers] = [await applied(groups[0]!), await applied(groups[1]!)];
    await h.platform.addEmbedGroupMembers("acme", analysts.platformId!, [{ externalId: "ext-2" }]);
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
    const deps = reconcileDeps(h, { platform, ...overrides });
    const started = await deps.runs.createRun({ source: "acme", dryRun: false, trigger: "admin" });
    if (startLater) vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    return runReconcile(deps, started.runId).finally(() => vi.useRealTimers());
  };
}

describe("an embed group found on re-read", () => {
  // Viewers is not in the run's listing (as if its sync created it after the listing had passed).
  const run = viewersUnlisted("reconcile-embed-reread", "r");

  it("keeps its members: one taken out of another group but left in it is no planned deprovisioning", async () => {
    const done = await run();

    expect(done?.counts).toMatchObject({ membership: 1, deletedBehind: 0 });
    expect(done?.guard).toMatchObject({ plannedDeprovisions: 0, tripped: false });
    expect(done?.state).toBe("succeeded");
  }, 30_000);
});

describe("an embed group the listing missed, past the re-read cap", () => {
  // Viewers is not in the run's listing (one that shifted under deletions), and no sync of it ran
  // during the run: the run starts well after the groups' syncs, and may read nothing again.
  const run = viewersUnlisted("reconcile-embed-reread-cap", "c");

  it("is read again, whatever the cap: its members are kept, and the run is not held for them", async () => {
    const done = await run({ maxUnseenRereads: 0 }, true);

    // Classified as listed: ext-2, kept by Viewers, is no planned deprovisioning.
    expect(done?.counts).toMatchObject({ membership: 1, deletedBehind: 0 });
    expect(done?.guard).toMatchObject({ plannedDeprovisions: 0, tripped: false });
    expect(done?.state).toBe("succeeded");
  }, 30_000);
});
