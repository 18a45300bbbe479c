import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppliedUser } from "../../../src/mapping/plan-types.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

const N = 10_000;

describe("lifecycle batching", () => {
  let h: JobsHarness;
  const ids: string[] = [];
  beforeAll(async () => {
    h = await startJobsHarness("bulk", {
      sync: { concurrency: 32, lifecycleBatchWindowMs: 200, sweepAfterMs: 10_000, sweepIntervalMs: 1_000 },
    });
    // Start from a converged directory: platform users exist and are recorded as applied
    // (seeded directly, so this file measures the deactivations alone).
    const seeded = h.emulator.seed({
      users: Array.from({ length: N }, (_, i) => ({ userName: `user${i}@example.com`, active: true })),
    });
    // A directory view that does not enqueue: the converged starting point needs no jobs.
    const quiet = new RedisDirectoryStore({
      redis: h.storeRedis,
      prefix: h.prefix,
      notify: async () => {},
      matchesFilter,
    });
    const lanes = 32;
    const made: string[] = new Array(N);
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        for (let i = lane; i < N; i += lanes) {
          const rec = await quiet.createUser("okta", h.user(`user${i}@example.com`));
          const ref = { source: "okta", kind: "user" as const, id: rec.resource.id };
          const applied: AppliedUser = {
            platformId: seeded.users[i],
            profile: { userName: `user${i}@example.com` },
            lifecycle: "active",
            attributes: {},
          };
          await Promise.all([
            h.state.putApplied(ref, applied),
            h.state.setUserPlatformId("okta", ref.id, seeded.users[i] as string),
            h.state.claimOwner("user", seeded.users[i] as string, ref),
            quiet.markClean(ref, rec.generation),
          ]);
          made[i] = rec.resource.id;
        }
      }),
    );
    ids.push(...made);
    await h.waitForIdle();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it("10,000 deactivations cost at most 110 bulk calls", async () => {
    const writesBefore = h.writes();
    await Promise.all(
      Array.from({ length: 32 }, async (_, lane) => {
        for (let i = lane; i < N; i += 32) {
          await h.directory.updateUser("okta", ids[i] as string, (c) => ({ ...c.resource, active: false }));
        }
      }),
    );
    await h.waitForIdle(75_000);
    const inactive = h.emulator.state().users.filter((u) => u.active === false).length;
    expect(inactive).toBe(N);
    const bulk = h.emulator.count("bulkUsers");
    expect(bulk).toBeGreaterThanOrEqual(100);
    expect(bulk).toBeLessThanOrEqual(110);
    expect(h.writes() - writesBefore).toBe(bulk); // nothing but bulk calls
    expect(h.emulator.violations()).toEqual([]);
    // Finished jobs are trimmed (invariant 6): 10,000 syncs leave at most the configured 1,000.
    const counts = await h.syncQueue.queue.getJobCounts("completed", "failed");
    expect(counts.completed ?? 0).toBeLessThanOrEqual(1_000);
  }, 90_000);
});
