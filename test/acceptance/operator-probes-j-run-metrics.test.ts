/**
 * Probes j (what operators alert on): `reconcile_runs_total{outcome="failed"}` counts every run
 * that ended failed, also one whose job failed for good (an error outside the run's own handling:
 * here a working set of the wrong type while the run waits for its repairs to settle), which the
 * run then reports as failed. docs/operations.md: a failed run's job may end `completed`, and the
 * counter is what shows a failed run.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;

beforeAll(async () => {
  h = await startTestBridge("probes-j-run-metrics", { sources: { okta: { tokens: ["okta-token"] } } });
  redis = new Redis(TEST_REDIS_URL);
  await h.scim("okta").createUser("metrics.j@example.com", { displayName: "Metrics J" });
  await h.waitForIdle();
});
afterAll(async () => {
  redis?.disconnect();
  await h?.close();
});

const failedRuns = async () => {
  const text = (await h.http.get("/metrics")).text;
  const line = text
    .split("\n")
    .find((l) => /^reconcile_runs_total\{/.test(l) && l.includes('outcome="failed"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
};

describe("probes j: a run failed by its job", () => {
  it("is reported failed and counted in reconcile_runs_total", async () => {
    const pid = h.platformUsers().get("metrics.j@example.com")?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    // The repair's sync is slow: the run waits for it, settling.
    h.emulator.addFault({ type: "slow", delayMs: 3_000, count: 1, match: { operation: "getUser" } });
    const before = await failedRuns();
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const runId = started.body.runId as string;
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${runId}`)).body.repairs?.outcome !== undefined,
      { what: "the run to wait for its repairs" },
    );
    // A working set of the wrong type: the next look at the repairs fails (WRONGTYPE), and so the job.
    await redis.set(`${h.prefix}:reconcile:op:${runId}:repairs`, "not a set");
    const run = await waitFor(
      async () => {
        const body = (await h.admin().get(`/reconcile-runs/${runId}`)).body;
        return body.state === "running" ? null : body;
      },
      { what: "the run to end" },
    );
    expect(run.state).toBe("failed");
    expect(run.error).toContain("job failed");
    expect(run.finishedAt).toEqual(expect.any(String));
    expect(await failedRuns()).toBe(before + 1);
    await h.waitForIdle();
  });

  it("a resync that fails says when it ended, as a failed run does", async () => {
    const scim = h.scim("okta");
    const off = await scim.createUser("metrics.off.j@example.com");
    expect((await scim.patchUser(off.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    await h.waitForIdle();
    // The guard reads the platform user of an inactive user: the platform refuses it for good.
    h.emulator.addFault({ type: "error", status: 403, count: 1, match: { operation: "getUser" } });
    const started = await h.admin().post("/sources/okta/resync", { users: [off.id] });
    const op = await waitFor(
      async () => {
        const body = (await h.admin().get(`/resyncs/${started.body.id}`)).body;
        return ["queued", "running"].includes(body.state) ? null : body;
      },
      { what: "the resync to end" },
    );
    expect(op.state).toBe("failed");
    expect(op.error).toContain("getUser");
    expect(op.finishedAt).toEqual(expect.any(String));
    expect(op.durationMs).toEqual(expect.any(Number));
  });
});
