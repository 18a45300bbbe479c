/**
 * Faults-i (review): the sync's wait for Redis is bounded, and a resync request it took is not lost
 * when putting it back fails on Redis too. The processor runs here on a job of its own (its
 * moveToDelayed and updateData recorded), over the harness's real directory, state and platform.
 */
import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import type { SyncJobData } from "../../../jobs/sync-job.js";
import { REDIS_WAIT_LIMIT_MS, createSyncProcessor } from "../../../jobs/sync-processor.js";
import { toStoreError } from "../../../src/directory/redis-failure.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { NoopRequestBudget, type RequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/** What the store answers when its client's command timeout passes (`guarded`). */
const storeTimeout = () => toStoreError(new Error("Command timed out"));

/**
 * `target` (the harness's directory or sync state) with one method failing as `fail` says, each
 * time `when` (asked at every call's lookup) says so; every other member as it is.
 */
function failingOn<T extends object>(target: T, method: string, fail: () => Error, when = () => true): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      if (key === method && when()) return async () => Promise.reject(fail());
      const value = Reflect.get(object, key, receiver);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/** A job as a worker hands it over, recording what the processor does with it. */
function jobOf(ref: EntityRef, attempts = 2) {
  const job = {
    data: { ...ref } as Record<string, unknown>,
    attemptsMade: 0,
    attemptsStarted: 1,
    opts: { attempts, backoff: { type: "exponential", delay: 1_000 } },
    movedTo: [] as number[],
    async moveToDelayed(at: number, token?: string) {
      expect(token).toBe("token");
      job.movedTo.push(at);
    },
    async updateData(data: Record<string, unknown>) {
      job.data = data;
    },
  };
  return job;
}

/** One run of the job by a worker (lock token "token"); its next start counted. */
async function runAs(process: ReturnType<typeof createSyncProcessor>, job: ReturnType<typeof jobOf>) {
  try {
    return await process(job as unknown as Job<SyncJobData>, "token");
  } finally {
    job.attemptsStarted++;
  }
}

describe("faults-i: the sync's wait for Redis", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  function contextOf(
    harness: JobsHarness,
    overrides: Partial<SyncContext> = {},
    budget: RequestBudget = new NoopRequestBudget(),
  ) {
    const logger = createLogger("silent");
    const ctx: SyncContext = {
      config: harness.config,
      directory: harness.directory,
      platform: harness.platform,
      state: harness.state,
      attributes: new AttributeDefinitions(harness.platform),
      logger,
      scheduleLifecycle: async () => {},
      ...overrides,
    };
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const process = createSyncProcessor({
      ctx,
      queue: harness.syncQueue.queue,
      budget,
      metrics: syncMetrics(registry, async () => ({})),
      logger,
    });
    return { process, registry };
  }

  it("a read that always times out waits for REDIS_WAIT_LIMIT_MS at most, then ends as a redis_unavailable dead letter", async () => {
    h = await startJobsHarness("redis-wait-limit", { workers: false });
    const u = await h.directory.createUser("okta", h.user("heavy@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    // This one entity's read always outlasts the store client's command timeout; Redis is fine.
    const directory = failingOn(h.directory, "snapshotUser", storeTimeout);
    const { process, registry } = contextOf(h, { directory });
    const job = jobOf(ref, 2);

    // First failure: the job waits (moved back to delayed, no attempt), the wait's start kept.
    await expect(runAs(process, job)).rejects.toBeInstanceOf(DelayedError);
    expect(job.movedTo).toHaveLength(1);
    const since = job.data["redisWaitSince"];
    expect(typeof since).toBe("number");
    await expect(runAs(process, job)).rejects.toBeInstanceOf(DelayedError);
    expect(job.data["redisWaitSince"]).toBe(since);

    // Ten minutes of waits later: the failure spends an attempt like any other.
    job.data["redisWaitSince"] = Date.now() - REDIS_WAIT_LIMIT_MS - 1;
    await expect(runAs(process, job)).rejects.toThrow(/unavailable/);
    expect(job.movedTo).toHaveLength(2);
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "retrying",
      lastError: { code: "redis_unavailable" },
    });
    // The last attempt: a visible dead letter.
    job.attemptsMade = 1;
    await expect(runAs(process, job)).rejects.toBeInstanceOf(UnrecoverableError);
    expect(job.movedTo).toHaveLength(2);
    expect((await h.state.getDeadLetter(ref))?.letter).toMatchObject({ code: "redis_unavailable" });
    expect(await h.state.getStatus(ref)).toMatchObject({ state: "dead" });
    const jobs = (await registry.getSingleMetric("sync_jobs_total")?.get())?.values ?? [];
    const count = (outcome: string) => jobs.find((v) => v.labels.outcome === outcome)?.value;
    expect([count("redis_unavailable"), count("retry"), count("dead")]).toEqual([2, 1, 1]);
  });

  it("a resync request taken by a run that fails on Redis, and that cannot be put back, rides in the job", async () => {
    h = await startJobsHarness("redis-wait-resync", { workers: false });
    const u = await h.directory.createUser("okta", h.user("flag@limit.example", { displayName: "Real" }));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    const synced = contextOf(h);
    expect(await runAs(synced.process, jobOf(ref))).toBe("clean");
    const pid = h.platformUsers().get("flag@limit.example")?.["id"] as string;
    // Changed on the platform behind the bridge's back; a reconciliation asks for a resync.
    await h.platform.patchUser(pid, [{ op: "replace", path: "displayName", value: "Drifted" }]);
    await h.state.requestResync([ref]);

    // The run takes the request, its read fails on Redis, and so does putting the request back.
    let reads = 0;
    const directory = failingOn(h.directory, "snapshotUser", storeTimeout, () => reads++ === 0);
    const state = failingOn(h.state, "requestResync", () => new Error("Command timed out"));
    const failing = contextOf(h, { directory, state });
    const job = jobOf(ref);
    await expect(runAs(failing.process, job)).rejects.toBeInstanceOf(DelayedError);
    expect(await h.state.isResyncRequested(ref)).toBe(false);

    // Redis serves again: the job's next run reads the platform and repairs the drift.
    expect(await runAs(synced.process, job)).toBe("clean");
    expect(h.platformUsers().get("flag@limit.example")?.["displayName"]).toBe("Real");
  });

  /** The directory with this entity's read failing as `fail` says. */
  const failingReads = (harness: JobsHarness, fail: () => Error) =>
    failingOn(harness.directory, "snapshotUser", fail);

  it("the limit bounds consecutive waits only: a blip long after a wait the job recovered from waits again", async () => {
    h = await startJobsHarness("redis-wait-consecutive", { workers: false });
    const u = await h.directory.createUser("okta", h.user("blip@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    const { process } = contextOf(h, { directory: failingReads(h, storeTimeout) });
    const job = jobOf(ref, 2);
    // 09:00: a wait of a few seconds.
    await expect(runAs(process, job)).rejects.toBeInstanceOf(DelayedError);
    const longAgo = Date.now() - REDIS_WAIT_LIMIT_MS - 2 * 60_000;
    job.data["redisWaitSince"] = longAgo;
    // Then a run that did something else (rate limited by the platform: no attempt spent).
    job.attemptsStarted++;
    // 09:12: a blip. It waits (no attempt spent), from now; it spent an attempt at once before.
    await expect(runAs(process, job)).rejects.toBeInstanceOf(DelayedError);
    expect(job.movedTo).toHaveLength(2);
    expect(job.data["redisWaitSince"]).toBeGreaterThan(longAgo + REDIS_WAIT_LIMIT_MS);
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "pending",
      lastError: { code: "redis_unavailable" },
    });
  });

  it("past the limit, a Redis failure outside the sync's own handling still ends as a dead letter on the last attempt", async () => {
    h = await startJobsHarness("redis-wait-budget", { workers: false });
    const u = await h.directory.createUser("okta", h.user("budget@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    // The request budget shares the store's slow client: its read fails before the sync's try.
    const budget = new NoopRequestBudget();
    budget.pausedUntil = async () => Promise.reject(new Error("Command timed out"));
    const { process, registry } = contextOf(h, {}, budget);
    const job = jobOf(ref, 2);
    // Waited for ten minutes already, one attempt spent past them: the last attempt.
    job.attemptsMade = 1;
    job.attemptsStarted = 5;
    job.data["redisWaitSince"] = Date.now() - REDIS_WAIT_LIMIT_MS - 1;
    job.data["redisWaitRun"] = 4;
    await expect(runAs(process, job)).rejects.toBeInstanceOf(UnrecoverableError);
    expect(job.movedTo).toHaveLength(0);
    // Before: the job failed for good with the client's error, no dead letter, the user `pending`.
    expect((await h.state.getDeadLetter(ref))?.letter).toMatchObject({
      code: "redis_unavailable",
      attempts: 2,
    });
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "redis_unavailable" },
    });
    const letters = (await registry.getSingleMetric("dead_letters_total")?.get())?.values ?? [];
    expect(letters.find((v) => v.labels.code === "redis_unavailable")?.value).toBe(1);
  });

  it("a resync request that cannot be put back does not hide the sync's own failure", async () => {
    h = await startJobsHarness("redis-wait-putback", { workers: false });
    const u = await h.directory.createUser("okta", h.user("hidden@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    await h.state.requestResync([ref]);
    // A bug in the sync (not Redis's fault), and putting the taken request back fails on Redis.
    const directory = failingReads(h, () => new TypeError("Cannot read properties of undefined"));
    const state = failingOn(h.state, "requestResync", () => new Error("Command timed out"));
    const { process } = contextOf(h, { directory, state });
    const job = jobOf(ref, 1);
    // Before: the put-back's Redis failure was thrown instead, and the job waited for Redis.
    await expect(runAs(process, job)).rejects.toBeInstanceOf(UnrecoverableError);
    expect(job.movedTo).toHaveLength(0);
    expect((await h.state.getDeadLetter(ref))?.letter).toMatchObject({ code: "internal" });
  });
  it("a dead letter written, then its dirty marker failing on Redis: the job ends, the letter counted once", async () => {
    h = await startJobsHarness("redis-wait-after-letter", { workers: false });
    const u = await h.directory.createUser("okta", h.user("refused@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    // The platform refuses the create for good; then the store times out on the marker.
    h.emulator.addFault({ type: "error", status: 403, match: { operation: "createUser" } });
    const directory = failingOn(h.directory, "markClean", storeTimeout);
    const { process, registry } = contextOf(h, { directory });
    const job = jobOf(ref, 3);
    // Before: the marker's failure made the job wait, and every later run wrote and counted the
    // letter again.
    await expect(runAs(process, job)).rejects.toBeInstanceOf(UnrecoverableError);
    expect(job.movedTo).toHaveLength(0);
    expect((await h.state.getDeadLetter(ref))?.letter).toMatchObject({ code: "platform_forbidden" });
    const letters = (await registry.getSingleMetric("dead_letters_total")?.get())?.values ?? [];
    expect(letters.reduce((sum, v) => sum + v.value, 0)).toBe(1);
  });

  it("the platform part done, its recording failing on the last attempt: no dead letter for a synced entity", async () => {
    h = await startJobsHarness("redis-wait-after-sync", { workers: false });
    const u = await h.directory.createUser("okta", h.user("landed@limit.example"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    const directory = failingOn(h.directory, "markClean", storeTimeout);
    const { process, registry } = contextOf(h, { directory });
    const job = jobOf(ref, 1);
    job.data["redisWaitSince"] = Date.now() - REDIS_WAIT_LIMIT_MS - 1; // no more waiting
    job.data["redisWaitRun"] = 0;
    await expect(runAs(process, job)).rejects.toThrow(/unavailable/);
    expect((await h.platformUsers()).has("landed@limit.example")).toBe(true);
    // Before: a redis_unavailable dead letter and the status `dead` for a user that is on the platform.
    expect(await h.state.getDeadLetter(ref)).toBeNull();
    expect((await h.state.getStatus(ref))?.state).not.toBe("dead");
    const letters = (await registry.getSingleMetric("dead_letters_total")?.get())?.values ?? [];
    expect(letters.reduce((sum, v) => sum + v.value, 0)).toBe(0);
  });
});
