import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

const LIMIT = 10_000;

/** A removeOnComplete / removeOnFail option that bounds the finished set. */
function bounded(option: unknown): boolean {
  if (option === true) return true;
  if (typeof option === "number") return option >= 0 && option <= LIMIT;
  if (option && typeof option === "object") {
    const { count, age } = option as { count?: number; age?: number };
    return (count !== undefined && count <= LIMIT) || age !== undefined;
  }
  return false;
}

/**
 * Invariant 6 (finished jobs are trimmed), for every queue the bridge uses: after syncs, a
 * lifecycle batch, a reconciliation and a resync, every finished job of every queue under the
 * bridge's prefix carries a bounded removeOnComplete and removeOnFail. (The trim itself at scale
 * is test/integration/jobs/bulk-lifecycle.test.ts: 10,000 syncs leave at most 1,000.)
 */
describe("finished jobs are trimmed on every queue", () => {
  let h: TestBridge;
  let redis: Redis;
  beforeAll(async () => {
    h = await startTestBridge("inv-trim", { sources: { okta: { tokens: ["okta-token"] } } });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  it("every finished job has bounded retention", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("trim@example.com");
    await scim.createGroup("Trim", [u.id]);
    await h.waitForIdle();
    await scim.patchUser(u.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    const run = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${run.body.runId}`)).body.state === "succeeded",
      {
        what: "the run",
      },
    );
    const op = await h.admin().post("/sources/okta/resync", {});
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.body.id}`)).body.state === "succeeded", {
      what: "the resync",
    });
    await h.waitForIdle();

    const names = new Set<string>();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${h.prefix}:*:meta`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) names.add(key.slice(h.prefix.length + 1, -":meta".length));
    } while (cursor !== "0");
    expect([...names]).toEqual(expect.arrayContaining(["sync", "lifecycle", "reconcile", "resync"]));

    const unbounded: string[] = [];
    let finished = 0;
    for (const name of names) {
      const queue = new Queue(name, { connection: redis, prefix: h.prefix });
      try {
        for (const job of await queue.getJobs(["completed", "failed"])) {
          finished += 1;
          if (!bounded(job.opts.removeOnComplete) || !bounded(job.opts.removeOnFail))
            unbounded.push(`${name}/${job.name}: ${JSON.stringify(job.opts)}`);
        }
      } finally {
        await queue.close();
      }
    }
    expect(finished).toBeGreaterThanOrEqual(5);
    expect(unbounded).toEqual([]);
  });
});
