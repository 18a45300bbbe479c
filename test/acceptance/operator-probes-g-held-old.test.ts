/**
 * Probes g (the operator's surface): a run held by the deprovisioning guard stays in
 * `GET /status` `awaitingConfirmation` (and so in `scim-bridge status`) however many runs came
 * after it. Held runs are never trimmed, but `/status` looked only through the newest 500 runs and
 * resyncs: past that (a `reconcile.keepRuns` above 500, or more than ten sources keeping 50 runs
 * each on a half-hourly schedule) the held run still waited and no status showed it.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReconcileRunStore } from "../../src/admin/reconcile-run-store.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;

beforeAll(async () => {
  h = await startTestBridge("probes-g-held-old", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 700 },
    },
  });
  redis = new Redis(TEST_REDIS_URL);
}, 30_000);
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

describe("probes g: an old held run", () => {
  it("is listed by GET /status after 520 later runs", async () => {
    await h.scim("okta").createUser("old.held@example.com");
    await h.waitForIdle();
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "old.orphan@example.com" } });
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const runId = started.body.runId as string;
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${runId}`)).body.state === "awaiting-confirmation",
      { what: "the run to be held" },
    );
    expect((await h.admin().get("/status")).body.awaitingConfirmation).toHaveLength(1);

    // 520 finished dry runs after it (what a year of scheduled runs of many sources leaves).
    const store = new ReconcileRunStore(redis, h.prefix, 700);
    for (let i = 0; i < 520; i++) {
      const run = await store.createRun({ source: "okta", dryRun: true, trigger: "schedule" });
      await store.transition({ ...run, state: "succeeded" }, ["queued"]);
    }
    expect((await h.admin().get(`/reconcile-runs/${runId}`)).body.state).toBe("awaiting-confirmation");

    const status = await h.admin().get("/status");
    expect(status.body.awaitingConfirmation).toEqual([
      expect.objectContaining({ kind: "reconcile", id: runId, source: "okta" }),
    ]);
  }, 60_000);
});
