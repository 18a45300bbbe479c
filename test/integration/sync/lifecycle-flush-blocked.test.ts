import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * A user sync that ends blocked (waiting for its manager) queues its lifecycle change first and
 * records its status after. A lifecycle flush settling in between must not mark the user synced and
 * clean: it would never be synced again, and never get its manager.
 *
 * Deterministic: the test's scheduleLifecycle (called by the sync right after it queued the change)
 * runs the whole flush there and then, inside that window. Real Redis, the real sync processor and
 * flusher, the strict emulator over HTTP; no workers.
 */
describe("a lifecycle flush inside a blocked user sync", () => {
  let h: JobsHarness;
  let ctx: SyncContext;
  let flushInsideSync = false;
  let flushes = 0;
  let run: (ref: EntityRef) => Promise<string>;

  beforeAll(async () => {
    h = await startJobsHarness("flush-blocked", { workers: false });
    ctx = h.syncContext({
      scheduleLifecycle: async () => {
        if (!flushInsideSync) return;
        flushes++;
        await flushNow(ctx, {
          deadLetter: async ({ code }) => {
            throw new Error(`unexpected lifecycle dead letter ${code}`);
          },
        });
      },
    });
    run = h.syncProcessor(ctx);
  });
  afterAll(async () => {
    await h?.close();
  });

  const platformUser = (userName: string) => h.platformUsers().get(userName) as Record<string, unknown>;

  it("leaves the user dirty and waiting; it gets its manager once the manager lands", async () => {
    const emp = await h.directory.createUser("okta", h.user("emp@flush.example"));
    const empRef: EntityRef = { source: "okta", kind: "user", id: emp.resource.id };
    expect(await run(empRef)).toBe("clean");
    expect(await h.isDirty(empRef)).toBe(false);

    // The manager is in the directory, not on the platform yet (its sync has not run).
    const boss = await h.directory.createUser("okta", h.user("boss@flush.example"));
    const bossRef: EntityRef = { source: "okta", kind: "user", id: boss.resource.id };
    await h.directory.updateUser("okta", emp.resource.id, (current) => ({
      ...current.resource,
      active: false,
      schemas: [...current.resource.schemas, ENT],
      [ENT]: { manager: { value: boss.resource.id } },
    }));

    flushInsideSync = true;
    expect(await run(empRef)).toBe("blocked");
    flushInsideSync = false;
    expect(flushes).toBe(1);
    // The flush did run inside the sync: the deactivation is on the platform.
    expect(platformUser("emp@flush.example")["active"]).toBe(false);
    const status = await h.state.getStatus(empRef);
    expect(status?.state).toBe("pending");
    expect(status?.lastError?.code).toBe("waiting_for_manager");
    // Still dirty: the sweeper comes back to it.
    expect(await h.isDirty(empRef)).toBe(true);

    // The manager lands; the user's next sync (the sweeper's) sets it, and only then is it clean.
    expect(await run(bossRef)).toBe("clean");
    expect(await run(empRef)).toBe("clean");
    const bossPlatformId = platformUser("boss@flush.example")["id"];
    expect((platformUser("emp@flush.example")[ENT] as { manager?: { value?: string } }).manager?.value).toBe(
      bossPlatformId,
    );
    expect((await h.state.getStatus(empRef))?.state).toBe("synced");
    expect(await h.isDirty(empRef)).toBe(false);
    expect(h.emulator.violations()).toEqual([]);
  });
});
