import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

/**
 * Outside interface: `GET /admin/v1/status` answers `idle, pending, deadLetters, queues`; `idle`
 * stays false while a lifecycle batch is open and while a reconciliation runs.
 */
describe("GET /admin/v1/status and idle", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-status", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        sync: {
          concurrency: 8,
          attempts: 8,
          // A long batch window: the deactivation waits in an open batch for a while.
          lifecycleBatchWindowMs: 1_500,
          sweepIntervalMs: 500,
          sweepAfterMs: 1_000,
        },
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const status = async () => {
    const res = await h.admin().get("/status");
    expect(res.status).toBe(200);
    return res.body as {
      idle: boolean;
      pending: number;
      deadLetters: number;
      queues: Record<string, unknown>;
    };
  };

  it("has the contract's fields, and is idle once converged", async () => {
    await h.scim("okta").createUser("idle@example.com");
    await h.waitForIdle();
    expect(await status()).toMatchObject({
      idle: true,
      pending: 0,
      deadLetters: 0,
      queues: expect.any(Object),
    });
  });

  it("is not idle while a deactivation waits in an open lifecycle batch", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("batched@example.com");
    await h.waitForIdle();
    expect((await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    const seen: boolean[] = [];
    await waitFor(
      async () => {
        const s = await status();
        const done = h.platformUsers().get("batched@example.com")?.active === false;
        if (!done) seen.push(s.idle);
        return done;
      },
      { intervalMs: 40, what: "the batch to be flushed" },
    );
    expect(seen.length).toBeGreaterThan(5); // the window was observed
    expect(seen.filter((idle) => idle)).toEqual([]);
  });

  it("is not idle while a reconciliation runs", async () => {
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 1_200, count: 1, match: { operation: "listUsers" } });
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    expect(started.status).toBe(202);
    const seen: boolean[] = [];
    await waitFor(
      async () => {
        const s = await status();
        const run = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        const done = !["queued", "running"].includes(run.body.state);
        if (!done) seen.push(s.idle);
        return done;
      },
      { intervalMs: 40, what: "the run to settle" },
    );
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.filter((idle) => idle)).toEqual([]);
    await h.waitForIdle();
    expect((await status()).idle).toBe(true);
  });
});
