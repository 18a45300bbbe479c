/**
 * Found in review (round q3; fixed by a dedupe against the run's seen set): the guard's denominator counts every owned user the platform listing yields, page by
 * page (scan-platform-users.ts: `ctx.ownedUsers += mine.length`), with no check that a user came
 * twice. A platform that lists newest first (the emulator's `order: "reverse"`, an answer the
 * contract allows) shifts every later page by one on each create during the walk: fewer than a
 * page's worth of creates between two pages gives a next page that starts with the tail of the
 * previous one again, which scimPages does not detect (its check is only on a page's FIRST id, and
 * only for a repeat of an earlier page's first). Each repeated owned user is counted again as an
 * owned user, so the share planned/owned shrinks and a run above maxDeprovisionShare applies
 * without an admin.
 *
 * Here: 150 owned users, 16 of them inactive at the source and active again on the platform
 * (behind the bridge's back): 16/150 = 10.7% > 10%, the run must wait. While the listing reads its
 * first page, 20 users are created on the platform (by another application, owned by no source):
 * the run counts 170 owned users, 16/170 = 9.4%, and deactivates the 16 at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import { startAdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { PlatformClient, PlatformScimUser } from "../../../src/platform/platform-types.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };

describe("a newest-first listing that grows during the walk", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const toDeactivate: string[] = [];
  let armed = false;

  const activeOnPlatform = () => h.emulator.state().users.filter((u) => u.active !== false).length;

  beforeAll(async () => {
    h = await startJobsHarness("review-q3-newest-first");
    // The admin jobs read the platform through a client whose unfiltered user listing sees 20
    // users created on the platform while it reads its first page (creates during the walk).
    const real = h.platform;
    const platform = new Proxy(real, {
      get(target, prop) {
        if (prop === "listUsers") {
          return (options: { filter?: string; pageSize?: number } = {}) =>
            (async function* (): AsyncGenerator<PlatformScimUser> {
              let n = 0;
              for await (const user of target.listUsers(options)) {
                yield user;
                n += 1;
                if (armed && !options.filter && n === 100) {
                  armed = false;
                  h.emulator.seed({
                    users: Array.from({ length: 20 }, (_, i) => ({ userName: `other-app-${i}@example.com` })),
                  });
                }
              }
            })();
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as PlatformClient;
    jobs = await startAdminJobs({
      config: {
        ...h.config,
        reconcile: { ...h.config.reconcile, orphans: "report", maxDeprovisionShare: 0.1 },
      },
      connection: h.queueRedis,
      redis: h.storeRedis,
      directory: h.directory,
      syncState: h.state,
      queueStatus: h.status,
      logger: createLogger("silent"),
      platform,
      schedule: false,
    });
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      ids.push((await h.directory.createUser("okta", h.user(`n${i}@example.com`))).resource.id);
    }
    await h.waitForIdle(30_000);
    // The 16 oldest platform users (the last ones of a newest-first listing: never repeated).
    const pids = await h.state.getUserPlatformIds("okta", ids);
    const byPid = new Map(pids.map((pid, index) => [pid as string, ids[index]!]));
    for (const u of h.emulator.state().users.slice(0, 16)) toDeactivate.push(byPid.get(String(u.id))!);
    for (const id of toDeactivate) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await h.waitForIdle(30_000);
    expect(activeOnPlatform()).toBe(134);
    // Behind the bridge's back, the 16 are active again on the platform.
    const leaverPids = await h.state.getUserPlatformIds("okta", toDeactivate);
    for (const pid of leaverPids)
      h.emulator.drift({ action: "setUserActive", userId: pid as string, active: true });
    expect(activeOnPlatform()).toBe(150);
    h.emulator.setVariations({ order: "reverse" });
  }, 60_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("holds a run that would deactivate 16 of the 150 users the source owns (10.7%)", async () => {
    armed = true;
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    await h.waitForIdle(30_000);
    // 150 owned + 20 new unowned users: 170 active unless the 16 were deactivated.
    expect({ state: run.state, guard: run.guard, activeAfter: activeOnPlatform() }).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 16, ownedUsers: 150, tripped: true },
      activeAfter: 170,
    });
  });
});
