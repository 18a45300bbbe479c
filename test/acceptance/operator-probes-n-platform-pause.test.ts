/**
 * Probes n (the operator's surface): the platform in maintenance answers 503 with `Retry-After: 120`.
 * docs/operations.md ("Platform rate limits"): a wait longer than a minute pauses the job queue for
 * every worker. The on-call operator then sees `idle: false`, jobs `waiting` and none `active`, for
 * minutes: `GET /status` and `scim-bridge status` must say why nothing moves and until when
 * (`pausedQueues`), not leave it to be guessed from one user's `lastError`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

beforeAll(async () => {
  h = await startTestBridge("probes-n-platform-pause", {
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes n: the platform asks for a pause longer than a minute", () => {
  it("status and the CLI name the paused queue and until when; nothing is a dead letter", async () => {
    const before = (await h.admin().get("/status")).body;
    expect(before.pausedQueues).toEqual([]);
    expect((await cli("status")).stdout).not.toMatch(/paused/);

    h.emulator.setFaults([{ id: "maintenance", type: "error", status: 503, retryAfterSeconds: 120 }]);
    const asked = Date.now();
    const user = await h.scim("okta").createUser("pause.a@example.com");
    await waitFor(
      async () =>
        (await h.admin().get(`/sources/okta/users/${user.id}`)).body.lastError?.code === "platform_server",
      { timeoutMs: 20_000, what: "the user's sync to meet the 503" },
    );

    const status = await h.admin().get("/status");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ idle: false, deadLetters: 0 });
    expect(status.body.pausedQueues).toHaveLength(1);
    const pause = status.body.pausedQueues[0] as { queue: string; until: string };
    expect(pause.queue).toBe("sync");
    const until = Date.parse(pause.until);
    expect(until).toBeGreaterThan(asked + 100_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 121_000);

    const text = await cli("status");
    expect(text.code).toBe(1);
    const line =
      /^paused: the sync queue waits for the platform until (\S+) \(it asked: Retry-After\)$/m.exec(
        text.stdout,
      );
    expect(line, text.stdout).not.toBeNull();
    expect(Math.abs(Date.parse(line?.[1] as string) - until)).toBeLessThanOrEqual(1_000);
    const json = JSON.parse((await cli("status", "--json")).stdout);
    expect(json.pausedQueues).toEqual([{ queue: "sync", until: expect.any(String) }]);
    h.emulator.setFaults([]);
  });

  it("a deactivation's bulk call asked to wait pauses the lifecycle queue, and status names it", async () => {
    // A bridge of its own: the shared platform pause of the other test would hold this one's calls.
    const h = await startTestBridge("probes-n-platform-pause-lifecycle", {
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
      },
    });
    const cli = (...args: string[]) => runCli(h.bridge.url as string, args);
    try {
      const user = await h.scim("entra").createUser("pause.leaving@example.com");
      await waitFor(
        async () => (await h.admin().get(`/sources/entra/users/${user.id}`)).body.state === "synced",
        {
          timeoutMs: 20_000,
          what: "the user synced",
        },
      );
      h.emulator.setFaults([
        {
          id: "limited",
          type: "error",
          status: 429,
          retryAfterSeconds: 90,
          match: { operation: "bulkUsers" },
        },
      ]);
      await h.scim("entra").patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
      await waitFor(
        async () =>
          ((await h.admin().get("/status")).body.pausedQueues as Array<{ queue: string }>).some(
            (p) => p.queue === "lifecycle",
          ),
        { timeoutMs: 20_000, what: "the lifecycle queue to be paused" },
      );
      const text = await cli("status");
      expect(text.stdout).toMatch(
        /^paused: the lifecycle queue waits for the platform until \S+ \(it asked: Retry-After\)$/m,
      );
      expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
    } finally {
      await h.close();
    }
  });
});
