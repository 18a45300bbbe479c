/**
 * Creating an operation (a reconciliation run, a resync: OperationStore.create) stores its record
 * and lists it. A process killed part way must not leave a record that no list shows: GET /status,
 * the admin's list and the scheduled tick's re-enqueue of `queued` operations all find operations
 * through the lists, so such a record would never run, never be settled and never be trimmed.
 * **Was a bug** (noticed in stop 29's crash-window audit): the hash, the sequence (INCR) and the
 * two index entries were three round trips; a kill after the first left the hash alone.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import { deleteKeys, TEST_REDIS_URL, testPrefix } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("operation-create-crash");
let redis: Redis;
let dying: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
  dying = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
  await dying.quit();
});

/** The client as a process killed right after its first command reached Redis sees it: nothing after. */
function killedAfterFirstCommand(client: Redis): Redis {
  let sent = 0;
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function" || prop === "defineCommand") return value;
      return (...args: unknown[]) => {
        if (sent++ >= 1) throw new Error("killed");
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe("creating an operation, killed after its first write", () => {
  it("leaves nothing, or a record the lists show", async () => {
    const killed = new ReconcileRunStore(killedAfterFirstCommand(dying), prefix, 50);
    const outcome = await killed.createRun({ source: "okta", dryRun: false, trigger: "schedule" }).then(
      () => "created",
      (err: Error) => err.message,
    );
    expect(["created", "killed"]).toContain(outcome);

    const store = new ReconcileRunStore(redis, prefix, 50);
    const listed = await store.listAll({ source: "okta" });
    const records = await redis.keys(`${prefix}:reconcile:op:*`);
    expect(listed.map((run) => run.state)).toEqual(records.length ? ["queued"] : []);
    expect(records).toHaveLength(listed.length);
    expect((await store.list({ offset: 0, limit: 10 })).total).toBe(listed.length);
  });

  it("a second create of the same id writes nothing", async () => {
    const twice = testPrefix("operation-create-twice");
    const store = new ReconcileRunStore(redis, twice, 50);
    const run = await store.createRun({ source: "okta", dryRun: false, trigger: "admin" });
    await expect(store.create({ ...run, state: "succeeded" })).rejects.toThrow(/exists/);
    expect((await store.get(run.runId))?.state).toBe("queued");
    expect((await store.listAll({ source: "okta" })).map((r) => r.runId)).toEqual([run.runId]);
    await deleteKeys(redis, twice);
  });
});
