/**
 * Probes-j (reconciliation and bridge restarts): a run under way when the bridge is shut down (a
 * rolling deploy's SIGTERM), and a held run, across a restart: what GET /status and the run say,
 * and that the run ends as it would have without the restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { QUEUE_NAMES } from "../../jobs/queue-names.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

async function runOf(runId: string) {
  return (await h.admin().get(`/reconcile-runs/${runId}`)).body as {
    state: string;
    error?: string;
    counts: Record<string, number>;
    guard?: { plannedDeprovisions: number; tripped: boolean };
  };
}

/** A run's state as stored, read while no bridge runs. */
async function runOfStopped(runId: string): Promise<{ state: string }> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    return { state: (await redis.hget(`${h.prefix}:reconcile:op:${runId}`, "state")) ?? "gone" };
  } finally {
    redis.disconnect();
  }
}

async function settled(runId: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const run = await runOf(runId);
      return ["queued", "running"].includes(run.state) ? null : run;
    },
    { what: "the run to settle", timeoutMs },
  );
}

beforeAll(async () => {
  h = await startTestBridge("reconcile-probes-j-restart", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: { server: { port: 0, host: "127.0.0.1", shutdownTimeoutMs: 1_000 } },
  });
  const scim = h.scim("okta");
  for (let i = 0; i < 12; i++) await scim.createUser(`restart.j${i}@example.com`);
  await h.waitForIdle();
});
afterAll(async () => {
  await h?.close();
});

describe("a run under way when the bridge shuts down", () => {
  it("is run again by the next bridge and ends as it would have (not failed by the shutdown)", async () => {
    const pid = h.platformUsers().get("restart.j3@example.com")?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    // The run's group listing outlasts the shutdown timeout.
    h.emulator.addFault({ type: "slow", delayMs: 4_000, count: 1, match: { operation: "listGroups" } });
    const listed = h.emulator.count("listUsers");
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    await waitFor(() => h.emulator.count("listUsers") > listed, { what: "the run to list the users" });
    await h.stop();
    // Handed back by the shutdown: the run's job waits in its queue for the next bridge (not
    // `active` under the lock of a process that is gone, until it expires and a stalled check
    // finds it), and nothing failed it.
    const queue = new Queue(QUEUE_NAMES.reconcile, { connection: { url: TEST_REDIS_URL }, prefix: h.prefix });
    try {
      expect(await (await queue.getJob(`run-${started.body.runId}`))?.getState()).toBe("waiting");
    } finally {
      await queue.close();
    }
    expect((await runOfStopped(started.body.runId)).state).toBe("running");
    await h.start();
    const run = await settled(started.body.runId);
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    expect(run.counts.activeMismatch).toBe(1);
    await h.waitForIdle(60_000);
    expect(h.platformUsers().get("restart.j3@example.com")?.active).toBe(true);
    const metrics = await h.http.get("/metrics");
    expect(metrics.text).not.toMatch(/reconcile_runs_total\{[^}]*outcome="failed"/);
  }, 90_000);
});
