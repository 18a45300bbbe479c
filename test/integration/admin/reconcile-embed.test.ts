import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import type { AppliedEmbedGroup } from "../../../src/mapping/plan-types.js";
import type { ReconcileRun } from "../../../src/reconcile/reconcile-run.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("reconciliation of an embed-tenant source", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  const groups: string[] = [];

  const run = async (dryRun: boolean): Promise<ReconcileRun> => {
    const { runId } = await jobs.service.triggerReconcile("acme", dryRun, admin);
    return runSettled(jobs, runId);
  };
  const embedGroup = (name: string) =>
    h.emulator
      .state()
      .embedTenants.find((t) => t.name === "acme")
      ?.groups.find((g) => g.name === name);

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-embed", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
    });
    jobs = await startAdminJobsOver(h);
    for (let i = 0; i < 4; i++) {
      users.push(
        (await h.directory.createUser("acme", { ...h.user(`e${i}@example.com`), externalId: `ext-${i}` }))
          .resource.id,
      );
    }
    groups.push((await h.directory.createGroup("acme", h.group("Analysts"), users.slice(0, 3))).resource.id);
    groups.push((await h.directory.createGroup("acme", h.group("Viewers"), users.slice(2, 4))).resource.id);
    await h.waitForIdle();
    expect(embedGroup("Analysts")?.members.sort()).toEqual(["ext-0", "ext-1", "ext-2"]);
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("finds a member removed and a group deleted behind the bridge's back, and repairs both", async () => {
    expect((await run(true)).counts).toMatchObject({ membership: 0, deletedBehind: 0, orphans: 0 });
    const analysts = await h.state.getApplied<AppliedEmbedGroup>({
      source: "acme",
      kind: "group",
      id: groups[0]!,
    });
    const viewers = await h.state.getApplied<AppliedEmbedGroup>({
      source: "acme",
      kind: "group",
      id: groups[1]!,
    });
    h.emulator.drift({
      action: "removeEmbedGroupMember",
      tenant: "acme",
      groupId: analysts!.platformId!,
      externalId: "ext-1",
    });
    const deleted = await h.platform.deleteEmbedGroup("acme", viewers!.platformId!);
    expect(deleted).toBe(true);

    const dry = await run(true);
    expect(dry.counts).toMatchObject({ membership: 1, deletedBehind: 1, activeMismatch: 0, changed: 0 });
    expect(dry.samples.membership[0]).toMatchObject({ kind: "group", id: groups[0] });
    expect(embedGroup("Analysts")?.members).not.toContain("ext-1");

    const repaired = await run(false);
    expect(repaired).toMatchObject({ state: "succeeded", repairs: { entities: 2, applied: true } });
    await h.waitForIdle();
    expect(embedGroup("Analysts")?.members.sort()).toEqual(["ext-0", "ext-1", "ext-2"]);
    expect(embedGroup("Viewers")?.members.sort()).toEqual(["ext-2", "ext-3"]);
    expect((await run(true)).counts).toMatchObject({ membership: 0, deletedBehind: 0 });
  });

  it("expects a deactivated user to have left the tenant's groups", async () => {
    await h.directory.updateUser("acme", users[2]!, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(embedGroup("Viewers")?.members).toEqual(["ext-3"]);
    expect((await run(true)).counts).toMatchObject({ membership: 0 });
  });
});
