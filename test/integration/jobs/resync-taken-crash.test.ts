/**
 * The sync processor takes the entity's resync request (jobs/sync-processor.ts takeResync) before the
 * sync reads the platform, and puts it back only from a `catch` (putBack) or, failing that, in the
 * job's data. A process killed after the take (SIGKILL, OOM, a node lost) runs neither. The request
 * rides in the job's data before it leaves the set, so the stalled job's re-run (BullMQ hands the
 * same job, with its data, to another worker) still reads the platform and repairs the drift the
 * request was for. **Was a bug** (found in review round r's crash-window audit): the request was
 * gone, and the re-run trusted the applied record, found nothing to do and marked the entity clean
 * with the drift left on the platform (a deactivation behind the bridge's back, a late write handed
 * on, an admin's resync).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import { flushNow, handJob, type JobsHarness, startJobsHarness } from "./jobs-harness.js";

let h: JobsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("a sync killed after it took the entity's resync request", () => {
  it("the stalled job's re-run still reads the platform again and repairs the drift", async () => {
    h = await startJobsHarness("resync-taken-crash", { workers: false });
    const u = await h.directory.createUser("okta", h.user("eve@example.com"));
    const ref = { source: "okta", kind: "user" as const, id: u.resource.id };
    expect(await h.syncProcessor(h.syncContext())(ref)).toBe("clean");
    const pid = h.platformUsers().get("eve@example.com")?.id as string;

    // Changed behind the bridge's back; reconciliation (or an admin) asks for a resync.
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    await h.state.requestResync([ref]);
    await h.directory.markDirty(ref);

    // The run dies while it reads the platform: nothing after that point runs (a killed process).
    const dying = new Proxy(h.platform, {
      get(target, name, receiver) {
        if (name === "getUser") return () => new Promise(() => {});
        return Reflect.get(target, name, receiver);
      },
    }) as PlatformClient;
    const job = handJob(ref);
    void h.syncProcessor(h.syncContext({ platform: dying }))(ref, job);
    await new Promise((r) => setTimeout(r, 200));

    // The stalled job runs again in another process, with the job's data.
    // It plans the user's activation again (a lifecycle change, flushed in bulk), not "clean".
    expect(await h.syncProcessor(h.syncContext())(ref, job)).toBe("lifecycle");
    await flushNow(h.syncContext());
    expect(h.platformUsers().get("eve@example.com")?.active).toBe(true);
  });
});
