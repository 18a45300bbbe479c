import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const PLATFORM_USERS = 2_500;

/**
 * Invariant 6 (memory does not grow with directory size): a reconciliation reads the platform's
 * users page by page (the contract's pages hold at most 100), never in one answer, and still
 * counts every one of them.
 */
describe("reconciliation streams the platform's users", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-stream", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    h.emulator.seed({
      users: Array.from({ length: PLATFORM_USERS }, (_, i) => ({ userName: `seeded${i}@example.com` })),
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("reads 2,500 platform users in pages of at most 100", async () => {
    await h.scim("okta").createUser("mine@example.com");
    await h.waitForIdle();
    const before = h.emulator.count("listUsers");
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    const run = await waitFor(
      async () => {
        const r = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
        return r.body.state === "succeeded" ? r.body : null;
      },
      { timeoutMs: 20_000, what: "the run" },
    );
    expect(run.counts.orphans).toBe(PLATFORM_USERS);
    expect(h.emulator.count("listUsers") - before).toBeGreaterThanOrEqual(PLATFORM_USERS / 100);
  });
});
