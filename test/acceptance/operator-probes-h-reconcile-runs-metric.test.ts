/**
 * Probes h (the operator's surface): a reconciliation run that fails shows in a metric. Its BullMQ
 * job ends `completed` (the run records its failure and returns), GET /status is silent about it,
 * and a scheduled run failing at every tick left no trace an alert could use.
 * `reconcile_runs_total{source,outcome}` counts each run's outcome: succeeded, failed,
 * awaiting_confirmation (held by the guard), discarded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

const DONE = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

async function runs(outcome: string): Promise<number> {
  const text = (await h.http.get("/metrics")).text;
  const line = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith("reconcile_runs_total{") &&
        l.includes('source="okta"') &&
        l.includes(`outcome="${outcome}"`),
    );
  return line ? Number(line.split(" ").pop()) : 0;
}

async function reconcile(dryRun: boolean): Promise<{ runId: string; state: string }> {
  const started = await h.admin().post("/sources/okta/reconcile", { dryRun });
  expect(started.status).toBe(202);
  const runId = started.body.runId as string;
  return waitFor(
    async () => {
      const run = (await h.admin().get(`/reconcile-runs/${runId}`)).body;
      return DONE.includes(run.state) ? run : null;
    },
    { timeoutMs: 20_000, what: "the run to end" },
  );
}

beforeAll(async () => {
  h = await startTestBridge("probes-h-reconcile-runs-metric", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  await h.scim("okta").createUser("runs.metric@example.com");
  await h.waitForIdle();
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes h: reconcile_runs_total", () => {
  it("counts a run failing on a platform listing that answers 500, and every other outcome", async () => {
    expect(await runs("failed")).toBe(0);
    h.emulator.addFault({ type: "error", status: 500, match: { operation: "listUsers" } });
    const failed = await reconcile(true);
    expect(failed.state).toBe("failed");
    expect(await runs("failed")).toBe(1);
    const again = await reconcile(false);
    expect(again.state).toBe("failed");
    expect(await runs("failed")).toBe(2);
    h.emulator.clearFaults();

    expect((await reconcile(true)).state).toBe("succeeded");
    expect(await runs("succeeded")).toBe(1);

    h.emulator.drift({ action: "addOrphanUser", user: { userName: "runs.orphan@example.com" } });
    const held = await reconcile(false);
    expect(held.state).toBe("awaiting-confirmation");
    expect(await runs("awaiting_confirmation")).toBe(1);
    expect((await h.admin().post(`/reconcile-runs/${held.runId}/discard`)).status).toBeLessThan(300);
    expect(await runs("discarded")).toBe(1);
    expect(await runs("failed")).toBe(2);
  }, 60_000);
});
