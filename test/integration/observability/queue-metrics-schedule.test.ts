import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

/**
 * The reconcile schedule's next runs wait as delayed jobs in the `reconcile-schedule` queue (one
 * BullMQ job scheduler per source): the queue_jobs and queue_depth metrics show them, and they do
 * not keep the bridge from being idle.
 */
describe("queue metrics: the reconcile schedule", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("queue-metrics-schedule", {
      config: {
        reconcile: { schedule: "0 3 * * *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("queue_jobs and queue_depth count each source's next scheduled run, delayed", async () => {
    const text = (await h.http.get("/metrics").expect(200)).text;
    // Two sources (okta and entra): two schedulers, each with its next run delayed.
    expect(text).toMatch(/^queue_jobs\{queue="reconcile-schedule",state="delayed"\} 2$/m);
    expect(text).toMatch(/^queue_depth\{queue="reconcile-schedule",state="delayed"\} 2$/m);
    expect(text).toMatch(/^queue_jobs\{queue="sync",state="waiting"\} 0$/m);
  });

  it("the scheduled runs do not hold idle false", async () => {
    await h.waitForIdle(10_000);
    const status = await h.admin().get("/status").expect(200);
    expect(status.body.idle).toBe(true);
  });
});
