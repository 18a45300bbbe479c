/**
 * A platform outage behind a gateway that answers 504 (or calls that time out) while a
 * deactivation waits in the lifecycle batch. A bulk call without an answer may still land, so its
 * users' late-write check is scheduled (docs/operations.md, "Writes that land late"); that check is
 * a resync, which reads the platform. Read during the outage, it failed like any sync and, once its
 * job's attempts were spent, dead-lettered the user: the "an outage never makes a deprovisioning a
 * dead letter" promise broken through the back door, and the user left `dead` (a `platform_server`
 * letter) after the deactivation had landed by itself. The check waits while the user's change is
 * still queued: it reads the platform once the change is settled, when the read can succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

interface Status {
  state: string;
  lastError: { code: string; operation?: string } | null;
}

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("lifecycle-outage-late-check-b", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      sync: {
        concurrency: 8,
        // Few attempts: a resync failing through the outage spends them in a few seconds.
        attempts: 2,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 200,
        sweepAfterMs: 500,
        lateWriteCheckMs: 300,
      },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

const statusOf = async (id: string) => (await h.admin().get(`/sources/okta/users/${id}`)).body as Status;

describe("lifecycle outage behind a 504 gateway: the late-write check does not dead-letter the user", () => {
  it("no dead letter while the platform is down; the deactivation lands and the user ends synced", async () => {
    const userName = "outage.late.check.b@example.com";
    const user = await h.scim("okta").createUser(userName);
    await h.waitForIdle();
    const since = Math.max(0, ...h.emulator.requests().map((r) => r.seq));
    h.emulator.setFaults([{ id: "gateway", type: "error", status: 504 }]);
    try {
      const off = await h.scim("okta").patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
      expect(off.status).toBe(200);
      await waitFor(
        () => h.emulator.requests().some((r) => r.seq > since && r.operation === "bulkUsers") || null,
        { what: "the bulk DEACTIVATE to meet the outage" },
      );
      await waitFor(async () => ((await statusOf(user.id)).state === "retrying" ? true : null), {
        what: "the user's status to say it waits on the platform",
      });
      // Long enough for late-write checks (every 300 ms after a call) to be handed on and for a
      // resync's two attempts (backoff about 1 s) to be spent many times over.
      const until = Date.now() + 8_000;
      while (Date.now() < until) {
        const status = (await h.admin().get("/status")).body as { deadLetters: number; idle: boolean };
        expect(status.deadLetters, "a dead letter while the platform was only down").toBe(0);
        expect(status.idle).toBe(false);
        const own = await statusOf(user.id);
        expect(own.state).toBe("retrying");
        expect(own.lastError).toMatchObject({ operation: "bulkUsers" });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(h.platformUsers().get(userName)?.active).toBe(true);
    } finally {
      h.emulator.clearFaults();
    }
    // The platform answers again: the deactivation lands by itself (flusher backoff at most 30 s),
    // and the user's late-write check reads it then.
    await waitFor(() => h.platformUsers().get(userName)?.active === false || null, {
      timeoutMs: 45_000,
      what: "the deactivation once the platform answers",
    });
    await h.waitForIdle(30_000);
    // The check was postponed, not lost: the user was read on the platform after the answered call.
    const answered = h.emulator
      .requests()
      .find((r) => r.seq > since && r.operation === "bulkUsers" && r.status === 200);
    expect(answered).toBeDefined();
    expect(
      h.emulator
        .requests()
        .some((r) => r.seq > (answered?.seq ?? 0) && r.operation === "getUser" && r.status === 200),
    ).toBe(true);
    const own = await statusOf(user.id);
    expect(own.state).toBe("synced");
    expect(own.lastError).toBeNull();
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    const metrics = (await h.http.get("/metrics")).text;
    expect(metrics).not.toMatch(/dead_letters_total\{source="okta"[^}]*\} [1-9]/);
  }, 90_000);
});
