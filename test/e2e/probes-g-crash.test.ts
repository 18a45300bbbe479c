/**
 * Probes-g: the same entity changed many times while its sync is active (BullMQ keeps one more
 * job while one is active: invariant 2), and the worker process running that sync SIGKILLed in the
 * middle; more changes arrive while no worker runs. Uses the crash tests' harness (a holding proxy
 * between worker processes and the emulator: test/e2e/sync/fixtures/crash-harness.ts).
 *
 * Judge: after a fresh worker drains the queues, the platform holds the last state written to the
 * directory (nothing older reinstated), no dead letter, nothing left dirty or queued.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../src/scim/scim-types.js";
import { type CrashHarness, startCrashHarness } from "./sync/fixtures/crash-harness.js";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };

describe("probes-g: many changes to one entity during its sync, the worker killed mid-sync", () => {
  let h: CrashHarness;
  beforeAll(async () => {
    h = await startCrashHarness("probes-g-crash", { okta: { tokens: ["okta-token"] } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);
  const groupNamed = (name: string) => h.emulator.state().groups.filter((g) => g.displayName === name);

  /**
   * The user's PATCH is applied by the platform and its answer held; twelve displayName changes
   * land meanwhile (the sync is active); the worker dies; two more changes (a rename and a
   * deactivation) land with no worker. The admin expects the last displayName, the new userName,
   * inactive, once.
   */
  it("a user: the last of fourteen changes wins after the kill", async () => {
    const worker = await h.spawnWorker();
    const rec = await h.directory.createUser("okta", {
      schemas: [SCHEMA_USER],
      userName: "gk.user@example.com",
      displayName: "d0",
      active: true,
    });
    await h.waitIdle("the user");
    const platformId = named("gk.user@example.com")[0]?.id as string;
    const hold = h.proxy.hold((c) => c.method === "PATCH" && c.path === `/api/scim/v2/Users/${platformId}`, {
      until: "answer",
    });
    await h.directory.updateUser("okta", rec.resource.id, (c) => ({ ...c.resource, displayName: "d1" }));
    await hold.reached;
    for (let i = 2; i <= 12; i++) {
      await h.directory.updateUser("okta", rec.resource.id, (c) => ({ ...c.resource, displayName: `d${i}` }));
    }
    await h.kill(worker);
    hold.release();
    await h.directory.updateUser("okta", rec.resource.id, (c) => ({
      ...c.resource,
      userName: "gk.renamed@example.com",
      displayName: "d13",
    }));
    await h.directory.updateUser("okta", rec.resource.id, (c) => ({ ...c.resource, active: false }));

    const next = await h.spawnWorker();
    await h.waitIdle("convergence after the restart", 30_000);
    await h.stop(next);
    await h.expectSettled();
    expect(named("gk.user@example.com")).toEqual([]);
    expect(named("gk.renamed@example.com")).toMatchObject([
      { id: platformId, displayName: "d13", active: false },
    ]);
  }, 60_000);

  /**
   * A group's membership PATCH is held before the platform sees it; the membership is toggled ten
   * times meanwhile; the worker dies; the group is renamed with no worker. The admin expects the
   * renamed group with exactly the directory's last members.
   */
  it("a group: the last membership and name win after the kill", async () => {
    let worker = await h.spawnWorker();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        (
          await h.directory.createUser("okta", {
            schemas: [SCHEMA_USER],
            userName: `gk.m${i}@example.com`,
            active: true,
          })
        ).resource.id,
      );
    }
    const g = await h.directory.createGroup("okta", { schemas: [SCHEMA_GROUP], displayName: "gk-team" }, [
      ids[0] as string,
    ]);
    await h.waitIdle("the group");
    const gid = groupNamed("gk-team")[0]?.id as string;
    const hold = h.proxy.hold((c) => c.method === "PATCH" && c.path === `/api/scim/v2/Groups/${gid}`, {
      until: "request",
    });
    const toggle = async (add: string[], remove: string[]) =>
      h.directory.updateGroup("okta", g.resource.id, (current) => ({
        resource: current.resource,
        members: { add, remove },
      }));
    await toggle([ids[1] as string], []);
    await hold.reached;
    for (let i = 0; i < 10; i++) {
      const who = ids[2 + (i % 2)] as string;
      await (i < 2 ? toggle([who], []) : i % 4 < 2 ? toggle([], [who]) : toggle([who], []));
    }
    await toggle([], [ids[0] as string]);
    await h.kill(worker);
    hold.release();
    await h.directory.updateGroup("okta", g.resource.id, (current) => ({
      resource: { ...current.resource, displayName: "gk-team-2" },
    }));
    const want =
      (await h.directory.getGroup("okta", g.resource.id, { withMembers: true }))?.members?.map(
        (m) => m.value,
      ) ?? [];

    worker = await h.spawnWorker();
    await h.waitIdle("convergence after the restart", 30_000);
    await h.stop(worker);
    await h.expectSettled();
    expect(want).toEqual([ids[1]]);
    const pids = (await h.state.getUserPlatformIds("okta", want)).sort();
    expect(groupNamed("gk-team")).toEqual([]);
    expect(groupNamed("gk-team-2").map((x) => [...x.members].sort())).toEqual([pids]);
  }, 60_000);
});
