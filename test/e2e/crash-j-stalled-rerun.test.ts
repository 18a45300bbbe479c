/**
 * Crash-j: a worker process frozen (SIGSTOP: a long GC pause, a VM or container frozen, a laptop
 * lid) in the middle of a sync, its PATCH on the wire. Its job's lock expires, BullMQ's stalled
 * check hands the job to another worker, which syncs the entity again, from a newer change, and
 * finishes. Then the frozen process wakes up (SIGCONT) and its PATCH, planned from the older
 * change, lands after the newer one. Invariants 2 and 3: the run that lost its job must not leave
 * its older write standing; once idle, the platform holds the last change.
 *
 * Uses the crash tests' harness (worker processes with a 2 s lock and a 0.5 s stalled check, a
 * holding proxy before the emulator: test/e2e/sync/fixtures/crash-harness.ts).
 *
 * The held writes are `late`: the frozen worker's write is marked on the wire (late-writes.ts), so
 * the bridge is not idle until the mark is due (2 × platform.timeoutMs) and the freeze outlasts the
 * worker's own request timeout; woken, its client gives up on the call at once, and the write on
 * the wire still reaches the platform, as a stuck request does. Without it, whether the platform
 * saw the write raced the client's give-up against the release.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../src/scim/scim-types.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";
import { type CrashHarness, startCrashHarness } from "./sync/fixtures/crash-harness.js";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };

describe("crash-j: a frozen worker's sync re-run by another worker, then the frozen one wakes up", () => {
  let h: CrashHarness;
  let redis: Redis;
  let prefix: string;
  beforeAll(async () => {
    h = await startCrashHarness("crash-j-stalled", {
      okta: { tokens: ["okta-token"] },
      hr: { tokens: ["hr-token"], onDelete: "delete" },
    });
    prefix = h.prefix;
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  const traces = (needles: string[]) => redisTraces(redis, prefix, needles);

  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);
  const groupNamed = (name: string) => h.emulator.state().groups.filter((g) => g.displayName === name);

  it("a user: the older displayName PATCHed late by the woken worker does not stand", async () => {
    const frozen = await h.spawnWorker();
    const rec = await h.directory.createUser("okta", {
      schemas: [SCHEMA_USER],
      userName: "cj.stalled@example.com",
      displayName: "d0",
      active: true,
    });
    await h.waitIdle("the user");
    const platformId = named("cj.stalled@example.com")[0]?.id as string;
    // The PATCH of d1 is held before the platform sees it; its worker is frozen meanwhile.
    const hold = h.proxy.hold((c) => c.method === "PATCH" && c.path === `/api/scim/v2/Users/${platformId}`, {
      until: "request",
      late: true,
    });
    await h.directory.updateUser("okta", rec.resource.id, (c) => ({ ...c.resource, displayName: "d1" }));
    await hold.reached;
    frozen.kill("SIGSTOP");
    try {
      await h.directory.updateUser("okta", rec.resource.id, (c) => ({ ...c.resource, displayName: "d2" }));
      const other = await h.spawnWorker();
      // The lock runs out, the job is handed to the other worker, which lands d2 and goes idle.
      await waitFor(() => named("cj.stalled@example.com")[0]?.displayName === "d2", {
        timeoutMs: 15_000,
        what: "the other worker to land d2",
      });
      await h.waitIdle("the other worker's syncs");
      frozen.kill("SIGCONT");
      hold.release();
      // The woken worker's PATCH of d1 reaches the platform after d2.
      await waitFor(() => h.proxy.calls.some((c) => c.method === "PATCH" && c.status !== 0 && isD1(c.body)), {
        timeoutMs: 10_000,
        what: "the woken worker's PATCH to land",
      });
      await new Promise((r) => setTimeout(r, 500));
      await h.waitIdle("convergence after the wake-up", 30_000);
      await h.stop(other);
    } finally {
      frozen.kill("SIGCONT");
    }
    await h.stop(frozen).catch(() => {});
    expect(named("cj.stalled@example.com")).toMatchObject([{ id: platformId, displayName: "d2" }]);
    expect(h.emulator.violations()).toEqual([]);
    expect(await h.directory.countDirty()).toBe(0);
    expect(await h.status.countDeadLetters()).toBe(0);
  }, 60_000);
  it("a group: the member added late by the woken worker, taken out at the source meanwhile, does not stay", async () => {
    const frozen = await h.spawnWorker();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (
          await h.directory.createUser("okta", {
            schemas: [SCHEMA_USER],
            userName: `cj.m${i}@example.com`,
            active: true,
          })
        ).resource.id,
      );
    }
    const g = await h.directory.createGroup("okta", { schemas: [SCHEMA_GROUP], displayName: "cj-team" }, [
      ids[0] as string,
    ]);
    await h.waitIdle("the group");
    const gid = groupNamed("cj-team")[0]?.id as string;
    const hold = h.proxy.hold((c) => c.method === "PATCH" && c.path === `/api/scim/v2/Groups/${gid}`, {
      until: "request",
      late: true,
    });
    // m1 joins: its add is held on the wire and its worker frozen; m1 leaves again, m2 joins.
    await h.directory.updateGroup("okta", g.resource.id, (current) => ({
      resource: current.resource,
      members: { add: [ids[1] as string], remove: [] },
    }));
    await hold.reached;
    frozen.kill("SIGSTOP");
    let other: Awaited<ReturnType<CrashHarness["spawnWorker"]>> | undefined;
    try {
      await h.directory.updateGroup("okta", g.resource.id, (current) => ({
        resource: current.resource,
        members: { add: [ids[2] as string], remove: [ids[1] as string] },
      }));
      other = await h.spawnWorker();
      const pids = await h.state.getUserPlatformIds("okta", ids);
      await waitFor(() => groupNamed("cj-team")[0]?.members.includes(pids[2] as string), {
        timeoutMs: 15_000,
        what: "the other worker to add m2",
      });
      await h.waitIdle("the other worker's syncs");
      frozen.kill("SIGCONT");
      hold.release();
      // The woken worker's add of m1 reaches the platform after m1 left at the source.
      await waitFor(
        () =>
          h.proxy.calls.some(
            (c) =>
              c.method === "PATCH" &&
              c.path === `/api/scim/v2/Groups/${gid}` &&
              c.status !== 0 &&
              JSON.stringify(c.body).includes(`"add"`) &&
              JSON.stringify(c.body).includes(pids[1] as string),
          ),
        { timeoutMs: 10_000, what: "the woken worker's add of m1 to land" },
      );
      await new Promise((r) => setTimeout(r, 500));
      await h.waitIdle("convergence after the wake-up", 30_000);
      expect([...(groupNamed("cj-team")[0]?.members ?? [])].sort()).toEqual([pids[0], pids[2]].sort());
    } finally {
      frozen.kill("SIGCONT");
    }
    if (other) await h.stop(other);
    await h.stop(frozen).catch(() => {});
    expect(h.emulator.violations()).toEqual([]);
    expect(await h.directory.countDirty()).toBe(0);
    expect(await h.status.countDeadLetters()).toBe(0);
  }, 60_000);
  /**
   * onDelete: delete. The frozen run's PATCH is on the wire when the source deletes the user; the
   * other worker deletes the platform user and forgets the entity. The woken run's PATCH meets a
   * 404 and, from the user it read before, would create it again: an active platform user for a
   * user the source deleted. The admin expects no platform user, and no record of the entity.
   */
  it("a user deleted meanwhile is not created again by the woken worker", async () => {
    const frozen = await h.spawnWorker();
    const rec = await h.directory.createUser("hr", {
      schemas: [SCHEMA_USER],
      userName: "cj.zombie@example.com",
      displayName: "z0",
      active: true,
    });
    await h.waitIdle("the user");
    const platformId = named("cj.zombie@example.com")[0]?.id as string;
    const hold = h.proxy.hold((c) => c.method === "PATCH" && c.path === `/api/scim/v2/Users/${platformId}`, {
      until: "request",
      late: true,
    });
    await h.directory.updateUser("hr", rec.resource.id, (c) => ({ ...c.resource, displayName: "z1" }));
    await hold.reached;
    frozen.kill("SIGSTOP");
    let other: Awaited<ReturnType<CrashHarness["spawnWorker"]>> | undefined;
    try {
      await h.directory.deleteUser("hr", rec.resource.id);
      other = await h.spawnWorker();
      // The frozen worker's PATCH is on the wire (marked before it went out): the deletion waits
      // until it can no longer land (its late-write check: twice the 10 s timeout).
      await waitFor(() => named("cj.zombie@example.com").length === 0, {
        timeoutMs: 35_000,
        what: "the other worker to delete the platform user",
      });
      await h.waitIdle("the other worker's syncs");
      expect(await h.directory.snapshotUser("hr", rec.resource.id)).toBeNull();
      frozen.kill("SIGCONT");
      hold.release();
      await waitFor(() => h.proxy.calls.some((c) => c.method === "PATCH" && c.status === 404), {
        timeoutMs: 10_000,
        what: "the woken worker's PATCH to meet the 404",
      });
      await new Promise((r) => setTimeout(r, 1_000));
      await h.waitIdle("convergence after the wake-up", 30_000);
    } finally {
      frozen.kill("SIGCONT");
    }
    if (other) await h.stop(other);
    await h.stop(frozen).catch(() => {});
    expect(named("cj.zombie@example.com")).toEqual([]);
    // Nothing of the entity left in Redis (invariant 6): no record, claim or hold on its name.
    expect(await traces([rec.resource.id, platformId])).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
    expect(await h.directory.countDirty()).toBe(0);
    expect(await h.status.countDeadLetters()).toBe(0);
  }, 90_000);
});

function isD1(body: unknown): boolean {
  return JSON.stringify(body ?? "").includes('"d1"');
}
