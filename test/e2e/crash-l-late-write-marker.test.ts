/**
 * Crash-l: a worker process dies (SIGKILL) while its create of a user is on the wire, and the
 * request, stuck in the network, reaches the platform only later. Meanwhile the identity provider
 * deletes the user (onDelete delete) and another worker runs the user's sync again. The create may
 * still land until its late-write check is due: the other worker must wait for it as it would for
 * a create that timed out in its own run, although the dead worker never saw its call end.
 * Otherwise it looks, finds nothing, forgets the user, and the late create leaves an active
 * platform user that no source owns (ARCHITECTURE.md "Lost answers", invariant 2).
 *
 * Uses the crash tests' harness (worker processes with a 2 s lock and a 0.5 s stalled check, a
 * holding proxy before the emulator: test/e2e/sync/fixtures/crash-harness.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_USER } from "../../src/scim/scim-types.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { type CrashHarness, startCrashHarness } from "./sync/fixtures/crash-harness.js";

/** Longer than a worker's start plus the stalled job's hand-over; the late create lands before it. */
const LATE_WRITE_CHECK_MS = 8_000;

type PlatformUser = { id: string; userName: string; active: boolean };

describe("crash-l: a create on the wire when its worker died, landing after the user was deleted", () => {
  let h: CrashHarness;
  beforeAll(async () => {
    h = await startCrashHarness(
      "crash-l-late-marker",
      { hr: { tokens: ["hr-token"], onDelete: "delete" } },
      { lateWriteCheckMs: LATE_WRITE_CHECK_MS },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);

  it("the other worker waits for it, finds it and deletes it: no platform user is left", async () => {
    const userName = "cl.late@example.com";
    const first = await h.spawnWorker();
    const hold = h.proxy.hold((c) => c.method === "POST" && c.path === "/api/scim/v2/Users", {
      until: "request",
      late: true,
    });
    const rec = await h.directory.createUser("hr", { schemas: [SCHEMA_USER], userName, active: true });
    await hold.reached;
    await h.kill(first);
    await h.directory.deleteUser("hr", rec.resource.id);
    const lookups = () =>
      h.proxy.calls.filter((c) => c.method === "GET" && c.path === "/api/scim/v2/Users").length;
    const ref = { source: "hr", kind: "user" as const, id: rec.resource.id };
    await h.spawnWorker();
    // The other worker runs the user's sync: it looks the lost create up, or waits for it.
    await waitFor(
      async () =>
        lookups() > 0 || (await h.state.getStatus(ref))?.lastError?.code === "waiting_for_late_write",
      { timeoutMs: 15_000, what: "the other worker to run the user's sync" },
    );
    // The create reaches the platform now, before its late-write check is due.
    hold.release();
    await waitFor(() => h.proxy.calls.some((c) => c.method === "POST" && c.status === 201), {
      timeoutMs: 5_000,
      what: "the late create to land",
    });
    await h.waitIdle("the deletion", 30_000);
    expect(named(userName)).toEqual([]);
    await h.expectSettled();
  }, 60_000);
});
