/**
 * Probes j (the operator's surface): a scheduled run held by the guard, then a newer scheduled run
 * that is not held (the drift that tripped the guard is gone, or below the share, and the newer
 * run applied it). The old held run shows drift that is no more: it is superseded (discarded by
 * the scheduler, `supersededBy` the newer run), as it is by a newer held scheduled run, and no
 * longer listed as waiting for an admin. A held run an admin started is left for the admin. And a
 * scheduled tick is skipped while any run of the source is in progress, not only the newest.
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../jobs/queue-names.js";
import { ReconcileRunStore } from "../../src/admin/reconcile-run-store.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;
let queue: Queue;
let runs: ReconcileRunStore;
const users: string[] = [];
const name = (i: number) => `sched.j${i}@example.com`;

beforeAll(async () => {
  h = await startTestBridge("probes-j-held-scheduled", {
    sources: { okta: { tokens: ["okta-token"] }, entra: { tokens: ["entra-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  redis = new Redis(TEST_REDIS_URL);
  queue = new Queue(QUEUE_NAMES.reconcile, {
    connection: new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
    prefix: h.prefix,
  });
  runs = new ReconcileRunStore(redis, h.prefix, 50);
  const scim = h.scim("okta");
  for (let i = 0; i < 10; i++) users.push((await scim.createUser(name(i))).id);
  for (const id of users.slice(0, 3))
    expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
  await h.waitForIdle();
  for (let i = 0; i < 3; i++)
    h.emulator.drift({
      action: "setUserActive",
      userId: h.platformUsers().get(name(i))?.id as string,
      active: true,
    });
});
afterAll(async () => {
  await queue?.close();
  redis?.disconnect();
  await h?.close();
});

/** A run as the schedule starts one (jobs/reconcile/reconcile-queue.ts, processScheduledTick). */
async function scheduledRun() {
  const run = await runs.createRun({ source: "okta", dryRun: false, trigger: "schedule" });
  await queue.add("run", { runId: run.runId, phase: "run" }, { jobId: `run-${run.runId}` });
  return waitFor(
    async () => {
      const body = (await h.admin().get(`/reconcile-runs/${run.runId}`)).body;
      return ["queued", "running"].includes(body.state) ? null : body;
    },
    { what: "the scheduled run" },
  );
}

describe("probes j: a held scheduled run, then a newer scheduled run that is not held", () => {
  it("the newer run supersedes it; the admin's held run stays", async () => {
    const byAdmin = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const held = await scheduledRun();
    expect(held).toMatchObject({ state: "awaiting-confirmation", guard: { plannedDeprovisions: 3 } });
    // The IdP turns two of the three on again: one left, below the share.
    for (const id of users.slice(1, 3))
      expect(
        (await h.scim("okta").patchUser(id, [{ op: "replace", path: "active", value: true }])).status,
      ).toBe(200);
    await h.waitForIdle();
    const newer = await scheduledRun();
    expect(newer).toMatchObject({ state: "succeeded", guard: { plannedDeprovisions: 1, tripped: false } });
    expect((await h.admin().get(`/reconcile-runs/${held.runId}`)).body).toMatchObject({
      state: "discarded",
      settledBy: "scheduler",
      supersededBy: newer.runId,
    });
    const status = (await h.admin().get("/status")).body;
    expect(status.awaitingConfirmation).toEqual([
      expect.objectContaining({ kind: "reconcile", id: byAdmin.body.runId }),
    ]);
    await h.waitForIdle();
    expect(h.platformUsers().get(name(0))?.active).toBe(false);
    expect(h.platformUsers().get(name(1))?.active).toBe(true);
  });

  it("a scheduled tick is skipped while a run waits for its repairs, also behind a newer dry run", async () => {
    const scim = h.scim("entra");
    for (let i = 0; i < 3; i++) await scim.createUser(`tick.j${i}@example.com`);
    await h.waitForIdle();
    // A repair whose sync is slow: the run waits for it, `running`.
    h.emulator.drift({
      action: "setUserActive",
      userId: h.platformUsers().get("tick.j0@example.com")?.id as string,
      active: false,
    });
    h.emulator.addFault({ type: "slow", delayMs: 3_000, count: 1, match: { operation: "getUser" } });
    const repairing = (await h.admin().post("/sources/entra/reconcile", { dryRun: false })).body
      .runId as string;
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${repairing}`)).body.repairs?.outcome !== undefined,
      { what: "the run to wait for its repairs" },
    );
    const dry = (await h.admin().post("/sources/entra/reconcile", { dryRun: true })).body.runId as string;
    await waitFor(async () => (await h.admin().get(`/reconcile-runs/${dry}`)).body.state === "succeeded", {
      what: "the dry run",
    });
    const ticks = new Queue(`${QUEUE_NAMES.reconcile}-schedule`, {
      connection: new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
      prefix: h.prefix,
    });
    try {
      const tick = await ticks.add("scheduled", { source: "entra", scheduled: true });
      const outcome = await waitFor(async () => (await ticks.getJob(tick.id as string))?.returnvalue, {
        what: "the tick",
      });
      expect(outcome).toBe("skipped: a run is in progress");
    } finally {
      await ticks.close();
    }
    expect((await h.admin().get("/reconcile-runs?source=entra")).body.items[0].runId).toBe(dry);
    await h.waitForIdle();
  });
});
