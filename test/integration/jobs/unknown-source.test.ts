/**
 * A sync of an entity whose source is out of the configuration (its dead letter retried, say) fails
 * before it reads the entity: the processor reads the entity's generation itself, so that the dead
 * letter drops the dirty marker (the sweeper would enqueue it again at every sweep, for ever). Two
 * edge cases of that read (covered together by acceptance/operator-probes-g-removed-source):
 * - Redis failing during it: the sync's own error (`unknown_source`) is what the job ends with and
 *   what the dead letter says, not the Redis failure; the marker stays for the sweeper.
 * - the entity gone from the directory: no generation to compare, yet never "superseded" (retried
 *   as if its desired state had moved on): one dead letter at the first attempt, the marker gone.
 *
 * Real Redis, the real sync processor run by hand (no workers), as a worker runs a job's first of
 * eight attempts.
 */
import { UnrecoverableError } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/** A source the directory still holds entities of, and the configuration no longer names. */
const RETIRED = "retired";

describe("a sync of an unknown source's entity", () => {
  let h: JobsHarness;
  /** A client that never connected and queues nothing: every command fails, as with Redis down. */
  let down: Redis;
  const registry = createMetricsRegistry({ defaultMetrics: false });

  beforeAll(async () => {
    h = await startJobsHarness("unknown-source", { workers: false });
    down = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
  });
  afterAll(async () => {
    down?.disconnect();
    await h?.close();
  });

  /** The processor over the harness, its directory replaced by `directory`. */
  const processorOver = (directory: SyncContext["directory"]) =>
    h.syncProcessor(h.syncContext({ directory }), registry);
  /** The job's fate as a worker takes it: no retry (UnrecoverableError), with the sync's own error. */
  const expectDeadAtOnce = async (run: Promise<string>) => {
    const err = await run.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toBe(`unknown_source: unknown source ${RETIRED}`);
  };
  const expectDeadLetter = async (ref: EntityRef) => {
    expect((await h.state.getDeadLetter(ref))?.letter).toMatchObject({
      ref,
      code: "unknown_source",
      attempts: 1,
    });
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "unknown_source", message: `unknown source ${RETIRED}` },
    });
  };
  const jobsCounted = async (outcome: string) => {
    const metric = (await registry.getSingleMetric("sync_jobs_total")?.get())?.values ?? [];
    return metric.filter((v) => v.labels["outcome"] === outcome).reduce((sum, v) => sum + v.value, 0);
  };

  it("Redis failing while its generation is read: the job ends with the sync's own error, dead-lettered; the marker stays", async () => {
    const user = await h.directory.createUser(RETIRED, h.user("kept.dirty@example.com"));
    const ref: EntityRef = { source: RETIRED, kind: "user", id: user.resource.id };
    expect(await h.isDirty(ref)).toBe(true);
    const failing = new RedisDirectoryStore({
      redis: down,
      prefix: h.prefix,
      notify: async () => {},
      matchesFilter,
    });
    await expect(failing.snapshotUser(RETIRED, ref.id)).rejects.toThrow(/unavailable/);

    await expectDeadAtOnce(processorOver(failing)(ref));
    await expectDeadLetter(ref);
    // The generation was not read: the marker is left for the sweeper, whose next sync drops it.
    expect(await h.isDirty(ref)).toBe(true);
    await expectDeadAtOnce(processorOver(h.directory)(ref));
    expect(await h.isDirty(ref)).toBe(false);
  });

  it("its entity gone from the directory: dead-lettered at the first attempt, never 'superseded'; the marker goes", async () => {
    const retriedBefore = await jobsCounted("retry");
    const user = await h.directory.createUser(RETIRED, h.user("gone@example.com"));
    const group = await h.directory.createGroup(RETIRED, h.group("Gone"), []);
    for (const ref of [
      { source: RETIRED, kind: "user", id: user.resource.id },
      { source: RETIRED, kind: "group", id: group.resource.id },
    ] satisfies EntityRef[]) {
      if (ref.kind === "user") await h.directory.deleteUser(RETIRED, ref.id);
      else await h.directory.deleteGroup(RETIRED, ref.id);
      const tombstone = await (ref.kind === "user"
        ? h.directory.snapshotUser(RETIRED, ref.id)
        : h.directory.snapshotGroup(RETIRED, ref.id));
      expect(await h.directory.purgeTombstone(ref, tombstone?.generation as number)).toBe(true);
      // A marker that outlived it (a retry of its dead letter marks it dirty again).
      await h.directory.markDirty(ref);
      expect(await h.isDirty(ref)).toBe(true);

      await expectDeadAtOnce(processorOver(h.directory)(ref));
      await expectDeadLetter(ref);
      expect(await h.isDirty(ref)).toBe(false);
    }
    expect(await jobsCounted("retry")).toBe(retriedBefore);
  });
});
