import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

/**
 * A lifecycle flush's bulk call is a platform write like a sync's (late-writes.ts, writeMarker): a
 * flusher process that dies with a bulk DEACTIVATE (or ACTIVATE) on the wire must leave a mark on
 * each of its users, so that a later change of those users that the held call would undo (an
 * ACTIVATE sent by the next flusher, a deleted user's deprovisioning) waits for it
 * (waitForLateCreate), and the sweeper reads them again once it could have landed. Unmarked, the
 * held call lands after the bridge went idle and the user stays as the late call left it.
 *
 * Real Redis, the strict emulator over HTTP (a bulk call held 1.5 s by its `slow` fault); no workers.
 */
describe("marks of a lifecycle flush's bulk call on the wire", () => {
  let h: JobsHarness;
  let ctx: SyncContext;
  let run: (ref: EntityRef) => Promise<string>;

  beforeAll(async () => {
    h = await startJobsHarness("lc-write-marks", { workers: false, sync: { lateWriteCheckMs: 60_000 } });
    ctx = h.syncContext();
    run = h.syncProcessor(ctx);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("each user of the call is marked while it is on the wire, and nothing is left once it is answered", async () => {
    const refs: EntityRef[] = [];
    for (const name of ["a", "b"]) {
      const rec = await h.directory.createUser("okta", h.user(`${name}@lc-marks.example`));
      const ref: EntityRef = { source: "okta", kind: "user", id: rec.resource.id };
      expect(await run(ref)).toBe("clean");
      await h.directory.updateUser("okta", rec.resource.id, (current) => ({
        ...current.resource,
        active: false,
      }));
      await run(ref);
      refs.push(ref);
    }
    h.emulator.addFault({ type: "slow", delayMs: 1_500, match: { operation: "bulkUsers" }, count: 1 });
    const flushed = flushNow(ctx);
    // While the bulk DEACTIVATE is held, a change of either user that it would undo waits for it.
    await waitFor(
      async () => (await Promise.all(refs.map((r) => h.state.checkDueAt(r)))).every((d) => d !== null),
      {
        timeoutMs: 1_200,
        what: "the bulk call's users to be marked while it is on the wire",
      },
    );
    expect(await flushed).toBe(1);
    for (const ref of refs) expect(await h.state.checkDueAt(ref)).toBeNull();
    expect(await h.state.countChecks()).toBe(0);
    expect(h.platformUsers().get("a@lc-marks.example")?.["active"]).toBe(false);
    expect(h.platformUsers().get("b@lc-marks.example")?.["active"]).toBe(false);
  });
});
