/**
 * Crash-n: a worker process dies (SIGKILL) while the bulk DEACTIVATE of a user deleted at the
 * source (onDelete deactivate) is on the wire, and the request, stuck in the network, reaches the
 * platform only later. Meanwhile another worker sends the DEACTIVATE again (answered), and the
 * identity provider creates the user again under the same userName (a rehire). The new entity
 * adopts the deactivated platform user (its create meets a 409) and activates it. The old
 * DEACTIVATE still on the wire must not lock the rehired user out: the old entity keeps its claim
 * on the platform user until no write of it can land late (its mark, left by the dead worker, is
 * due), and the new one adopts the platform user only then, as that write left it.
 *
 * Uses the crash tests' harness (worker processes with a 2 s lock and a 0.5 s stalled check, a
 * holding proxy before the emulator: test/e2e/sync/fixtures/crash-harness.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_USER } from "../../src/scim/scim-types.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { type CrashHarness, startCrashHarness } from "./sync/fixtures/crash-harness.js";

const BULK_PATH = "/api/v1/users/bulk";

type PlatformUser = { id: string; userName: string; active: boolean };
type BulkBody = { action: string; userIds: string[] };

describe("crash-n: a deprovisioning on the wire when its worker died, landing after a rehire", () => {
  let h: CrashHarness;
  beforeAll(async () => {
    h = await startCrashHarness(
      "crash-n-late-deprovision",
      { okta: { tokens: ["okta-token"], onDelete: "deactivate" } },
      { lateWriteCheckMs: 8_000 },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);
  const answered = (action: string, pid: string) =>
    h.proxy.calls.some(
      (c) =>
        c.path === BULK_PATH &&
        c.status === 200 &&
        (c.body as BulkBody).action === action &&
        (c.body as BulkBody).userIds.includes(pid),
    );

  it("the rehired user ends active", async () => {
    const userName = "cn.rehire@example.com";
    const first = await h.spawnWorker();
    const old = await h.directory.createUser("okta", { schemas: [SCHEMA_USER], userName, active: true });
    await h.waitIdle("the user");
    const pid = named(userName)[0]?.id as string;
    const hold = h.proxy.hold((c) => c.path === BULK_PATH, { until: "request", late: true });
    await h.directory.deleteUser("okta", old.resource.id);
    const held = await hold.reached;
    await h.kill(first);
    let other: Awaited<ReturnType<CrashHarness["spawnWorker"]>> | undefined;
    try {
      other = await h.spawnWorker();
      // The other worker's flush sends the DEACTIVATE again; the platform answers it.
      await waitFor(() => answered("DEACTIVATE", pid), { timeoutMs: 15_000, what: "the DEACTIVATE again" });
      const rehired = await h.directory.createUser("okta", {
        schemas: [SCHEMA_USER],
        userName,
        active: true,
      });
      const ref = { source: "okta", kind: "user" as const, id: rehired.resource.id };
      // The new entity's sync ran: it activated the platform user, or waits for the old entity.
      await waitFor(
        async () =>
          answered("ACTIVATE", pid) ||
          (await h.state.getStatus(ref))?.lastError?.code === "waiting_for_previous_owner",
        { timeoutMs: 15_000, what: "the new entity's sync" },
      );
      // The dead worker's DEACTIVATE reaches the platform now.
      hold.release();
      await waitFor(() => held.status === 200, { timeoutMs: 5_000, what: "the held DEACTIVATE to land" });
      await h.waitIdle("convergence", 30_000);
      expect(named(userName).map((u) => ({ id: u.id, active: u.active }))).toEqual([
        { id: pid, active: true },
      ]);
      expect(await h.state.getStatus(ref)).toMatchObject({ state: "synced", platformId: pid });
    } finally {
      hold.release();
    }
    if (other) await h.stop(other);
    await h.expectSettled();
  }, 60_000);
});
