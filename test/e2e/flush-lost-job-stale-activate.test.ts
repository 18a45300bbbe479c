/**
 * A deleted user left active by a lifecycle flush run that lost its job (ARCHITECTURE.md: invariant
 * 2, "Safe deprovisioning"; the product's worst failure, a user deleted at the identity provider
 * left active on the platform).
 *
 * The flush job (src/sync/lifecycle-flusher.ts, flushLifecycle) peeks the batch once per round and
 * sends its chunks one after the other. A sync run that outlives its job's lock (its process frozen:
 * a long GC pause, a VM or container frozen) stops writing once it finds out (sync-processor.ts,
 * lostJob as the watch's beforeWrite). **Was a bug** (found tracing a chaos-convergence failure):
 * a flush run did not: its WriteWatch had no beforeWrite, and sendChunk sent the entries it peeked
 * without reading them again (only a released tombstone's are dropped, withoutReleased). So:
 *
 * 1. X is deactivated at the source, then U (inactive) activated: DEACTIVATE(X) and ACTIVATE(U) wait
 *    in the batch (queued by worker W0, which then stops). Worker W1's flush run peeks both and sends
 *    DEACTIVATE(X) first, held by the proxy before the platform sees it.
 * 2. W1 freezes (SIGSTOP). U is deleted at the source (onDelete: deactivate). Its lock expired, the
 *    flush job goes to worker W2, which deactivates U, settles the final change and forgets U.
 * 3. W1 wakes up (SIGCONT). Its DEACTIVATE(X) is answered, and it sends the ACTIVATE(U) it peeked
 *    before the freeze: U's platform user is active again. Its settle finds no record (U forgotten),
 *    the entity it marks dirty is absent: nothing deactivates it again. U's platform user stays
 *    active, owned by no source (reconciliation would only report it as an orphan).
 *
 * Uses the crash tests' harness (worker processes with a 2 s lock and a 0.5 s stalled check, a
 * holding proxy before the emulator), as crash-j-stalled-rerun.test.ts does for a sync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_USER } from "../../src/scim/scim-types.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { type CrashHarness, startCrashHarness } from "./sync/fixtures/crash-harness.js";

type PlatformUser = { id: string; userName: string; active: boolean };
const WINDOW_MS = 2_000;

describe("a flush run that lost its job sends an ACTIVATE it peeked before the user was deleted", () => {
  let h: CrashHarness;
  beforeAll(async () => {
    // A wide batch window: both changes are in one peek of the flush run.
    h = await startCrashHarness(
      "flush-lost-job",
      { okta: { tokens: ["okta-token"], onDelete: "deactivate" } },
      { lifecycleBatchWindowMs: WINDOW_MS },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const platformUser = (id: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).find((u) => u.id === id);

  it("the deleted user's platform user ends inactive", async () => {
    const w0 = await h.spawnWorker();
    const x = await h.directory.createUser("okta", {
      schemas: [SCHEMA_USER],
      userName: "fl.x@example.com",
      active: true,
    });
    const u = await h.directory.createUser("okta", {
      schemas: [SCHEMA_USER],
      userName: "fl.u@example.com",
      active: false,
    });
    await h.waitIdle("X active, U inactive", 30_000);
    const [xPid, uPid] = (await h.state.getUserPlatformIds("okta", [x.resource.id, u.resource.id])) as [
      string,
      string,
    ];
    expect(platformUser(uPid)?.active).toBe(false);

    // DEACTIVATE(X), then ACTIVATE(U), queued within the batch window by W0, which then stops: both
    // wait in the batch, DEACTIVATE(X) first.
    await h.directory.updateUser("okta", x.resource.id, (c) => ({ ...c.resource, active: false }));
    await waitFor(async () => (await h.state.getLifecycle(xPid)) !== null, { what: "DEACTIVATE(X) queued" });
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: true }));
    await waitFor(async () => (await h.state.getLifecycle(uPid))?.entry.action === "ACTIVATE", {
      what: "ACTIVATE(U) queued",
    });
    await h.stop(w0);
    expect(h.proxy.calls.filter((c) => c.path === "/api/v1/users/bulk")).toHaveLength(0);
    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));

    // W1's flush run peeks both (both due) and sends DEACTIVATE(X) first: held before the platform.
    const hold = h.proxy.hold(
      (c) => c.path === "/api/v1/users/bulk" && JSON.stringify(c.body).includes(xPid),
      { until: "request" },
    );
    const w1 = await h.spawnWorker();
    const held = await hold.reached;
    expect(JSON.stringify(held.body)).not.toContain(uPid);
    w1.kill("SIGSTOP");
    let w2: Awaited<ReturnType<CrashHarness["spawnWorker"]>> | undefined;
    try {
      // U is deleted at the source; W2 takes the flush job over once W1's lock has expired.
      await h.directory.deleteUser("okta", u.resource.id);
      w2 = await h.spawnWorker();
      await waitFor(
        async () =>
          (await h.directory.snapshotUser("okta", u.resource.id)) === null &&
          platformUser(uPid)?.active === false,
        { timeoutMs: 15_000, what: "W2 to deprovision and forget U" },
      );
      w1.kill("SIGCONT");
      hold.release();
      // W1 goes on with the round it peeked before the freeze.
      await new Promise((r) => setTimeout(r, 1_500));
      await h.waitIdle("after W1 woke up", 30_000);
    } finally {
      w1.kill("SIGCONT");
    }
    // The bulk calls that name U, in the order the proxy saw them: the last one deactivates it.
    const namingU = h.proxy.calls
      .filter((c) => c.path === "/api/v1/users/bulk" && JSON.stringify(c.body).includes(uPid))
      .map((c) => (c.body as { action?: string }).action);
    // Was: W1's ACTIVATE(U) reached the platform after U was forgotten (its tombstone purged, no
    // owner left), and U's platform user stayed active for good. W1 now checks its job's lock
    // before each bulk call and stops.
    expect(await h.directory.snapshotUser("okta", u.resource.id)).toBeNull();
    expect(
      {
        active: platformUser(uPid)?.active,
        lastCallNamingU: namingU.at(-1),
        owner: await h.state.ownerOf("user", uPid),
      },
      "U was deleted at the source: its platform user must not be active",
    ).toEqual({ active: false, lastCallNamingU: "DEACTIVATE", owner: null });
    if (w2) await h.stop(w2).catch(() => {});
    await h.stop(w1).catch(() => {});
  }, 60_000);
});
