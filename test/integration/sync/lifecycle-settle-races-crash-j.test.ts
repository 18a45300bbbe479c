/**
 * Crash-j: the lifecycle flusher settles a user's bulk change (it writes the applied record's
 * `lifecycle`, then drops the entry) while a sync of the same user runs. Both read and write the
 * user's applied record; neither may plan from, or write back, what the other has changed
 * meanwhile. Each test puts the flush at one exact point of the sync (or the sync at one exact
 * point of the flush) and then drains the entity as the workers would: the platform must end as
 * the directory says, with nothing left dirty or queued.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { EntityRef, JsonObject } from "../../../src/scim/scim-types.js";
import { syncUser } from "../../../src/sync/sync-user.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

/**
 * `target` (a state store, a platform client, a Redis client) with a hook run once, right after the first call of any of `after` has answered
 * (it may run another actor to completion there), or before the first call of any of `before`.
 */
function hooked<T extends object>(
  target: T,
  at: { after?: string[]; before?: string[] },
  hook: () => Promise<unknown>,
): T {
  let fired = false;
  const fire = async () => {
    if (fired) return;
    fired = true;
    await hook();
  };
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver);
      if (typeof value !== "function") return value;
      if (!at.before?.includes(String(key)) && !at.after?.includes(String(key))) return value.bind(object);
      return async (...args: unknown[]) => {
        if (at.before?.includes(String(key))) await fire();
        const result = await value.apply(object, args);
        if (at.after?.includes(String(key))) await fire();
        return result;
      };
    },
  });
}

/** The sync's first read of the user's applied record (with what is queued for it, since crash-j). */
const APPLIED_READ = ["getApplied", "getAppliedUser"];

describe("crash-j: a lifecycle settle racing a sync of the same user", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /**
   * Runs the entity's syncs as the workers would: the follow-up job the race enqueued (BullMQ keeps
   * one while a sync is active, whatever the dirty marker says), then flushes and syncs until it is
   * clean; at most `max` runs.
   */
  async function drain(ref: EntityRef, max = 6): Promise<void> {
    const run = (h as JobsHarness).syncProcessor((h as JobsHarness).syncContext());
    await run(ref);
    for (let i = 0; i < max; i++) {
      if ((await h?.state.countLifecycle()) ?? 0) await flushNow((h as JobsHarness).syncContext());
      if (!(await h?.isDirty(ref))) return;
      await run(ref);
    }
    throw new Error("the entity did not settle");
  }

  /**
   * The user is deactivated (a DEACTIVATE queued), then reactivated and renamed. The sync of the
   * reactivation reads the applied record (still active); the DEACTIVATE is applied and settled
   * (record inactive, entry dropped); the sync then finds no entry queued. The admin expects the
   * user active, renamed.
   */
  it("a reactivation planned while the deactivation is settled ends active", async () => {
    h = await startJobsHarness("crash-j-settle-reactivate", { workers: false });
    const ctx = h.syncContext();
    const run = h.syncProcessor(ctx);
    const u = await h.directory.createUser("okta", h.user("cj.react@example.com", { displayName: "A" }));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    expect(await h.state.countLifecycle()).toBe(1);

    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: true, displayName: "B" }));
    // The flush lands right after the sync read the applied record.
    const flusher = h.syncContext();
    const racing = h.syncProcessor(
      h.syncContext({ state: hooked(h.state, { after: APPLIED_READ }, () => flushNow(flusher)) }),
    );
    await racing(ref);
    await drain(ref);

    expect(h.platformUsers().get("cj.react@example.com")).toMatchObject({ active: true, displayName: "B" });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
  });

  /**
   * The same, the reactivation's sync a resync (the platform read, not the record): the DEACTIVATE
   * lands and is settled right after the platform was read (still active).
   */
  it("a reactivation planned from a platform read taken just before the deactivation landed ends active", async () => {
    h = await startJobsHarness("crash-j-settle-resync", { workers: false });
    const ctx = h.syncContext();
    const run = h.syncProcessor(ctx);
    const u = await h.directory.createUser("okta", h.user("cj.resync@example.com", { displayName: "A" }));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");

    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: true, displayName: "B" }));
    await h.state.requestResync([ref]);
    const flusher = h.syncContext();
    const racing = h.syncProcessor(
      h.syncContext({ platform: hooked(h.platform, { after: ["getUser"] }, () => flushNow(flusher)) }),
    );
    await racing(ref);
    await drain(ref);

    expect(h.platformUsers().get("cj.resync@example.com")).toMatchObject({ active: true, displayName: "B" });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
  });

  /**
   * The reactivation's sync (with a rename) reads the user while the DEACTIVATE is still queued,
   * the DEACTIVATE is applied and settled, the sync PATCHes the rename, records it, and its process
   * dies before it queues the ACTIVATE. The next sync must not trust a record the dead one wrote
   * over the settled DEACTIVATE: the admin expects the user active, renamed.
   */
  it("a sync killed before it queues the reactivation, after the deactivation settled, ends active", async () => {
    h = await startJobsHarness("crash-j-settle-killed", { workers: false });
    const run = h.syncProcessor(h.syncContext());
    const u = await h.directory.createUser("okta", h.user("cj.killed@example.com", { displayName: "A" }));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: true, displayName: "B" }));

    const flusher = h.syncContext();
    const afterRead = hooked(h.state, { after: APPLIED_READ }, () => flushNow(flusher));
    const killed = hooked(afterRead, { before: ["putLifecycle"] }, async () => {
      throw new Error("killed before queueing the lifecycle change");
    });
    await expect(syncUser(h.syncContext({ state: killed }), ref, { resync: false }, {})).rejects.toThrow(
      "killed",
    );
    expect(h.platformUsers().get("cj.killed@example.com")).toMatchObject({ active: false, displayName: "B" });
    await drain(ref);

    expect(h.platformUsers().get("cj.killed@example.com")).toMatchObject({ active: true, displayName: "B" });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
  });

  /**
   * Invariant 6. A DEACTIVATE is out when the user is deleted at the source and its platform user
   * deleted behind the bridge's back; the bulk answer says NOT_FOUND. Right after the flusher read
   * the user's applied record, the tombstone's sync (a resync: a late-write check, say) finds the
   * platform user gone and forgets the user. The flusher must not write the record back: nothing
   * would ever remove it.
   */
  it("a settle does not bring back the record of a user forgotten meanwhile", async () => {
    h = await startJobsHarness("crash-j-settle-forgotten", { workers: false });
    const run = h.syncProcessor(h.syncContext());
    const u = await h.directory.createUser("okta", h.user("cj.gone@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    const platformId = String(h.platformUsers().get("cj.gone@example.com")?.["id"]);
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    await h.directory.deleteUser("okta", ref.id);
    expect(await h.platform.deleteUser(platformId)).toBe(true);
    await h.state.requestResync([ref]);

    // The flusher's own connection, whose read of the applied record lets the sync run first.
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    try {
      const sync = h.syncProcessor(h.syncContext());
      let synced = "";
      const appliedKey = (key: unknown, field: unknown) =>
        String(key).includes(":applied:") && field === ref.id;
      const client = new Proxy(redis, {
        get(object, key, receiver) {
          const value = Reflect.get(object, key, receiver);
          if (key !== "hget" || typeof value !== "function") return value;
          return async (k: string, f: string) => {
            const answer = await value.call(object, k, f);
            if (appliedKey(k, f) && synced === "") synced = await sync(ref);
            return answer;
          };
        },
      });
      const state = new RedisSyncStateStore(client, h.prefix);
      await flushNow(h.syncContext({ state }));
      expect(synced).toBe("purged");
    } finally {
      redis.disconnect();
    }
    await drain(ref);

    expect(await h.directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await h.state.getApplied(ref)).toBeNull();
    expect(await h.state.countApplied("okta", "user")).toBe(0);
    expect(await h.state.getStatus(ref)).toBeNull();
    expect(await h.state.countLifecycle()).toBe(0);
  });

  /**
   * A bulk DEACTIVATE fails for the user alone (INTERNAL: retried); the user is reactivated, and
   * its sync runs right as the flusher puts the failed change back for a retry. The sync must see
   * the change queued (it takes it back) or the change must be gone for good: the DEACTIVATE the
   * source no longer wants never reaches the platform again.
   */
  it("a change put back for a retry is never missing for a sync in between: no stale DEACTIVATE", async () => {
    h = await startJobsHarness("crash-j-retry-gap", { workers: false });
    const run = h.syncProcessor(h.syncContext());
    const u = await h.directory.createUser("okta", h.user("cj.retry@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    const platformId = String(h.platformUsers().get("cj.retry@example.com")?.["id"]);
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    h.emulator.drift({ action: "failBulkFor", userId: platformId, code: "INTERNAL" });
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: true }));

    const deactivations: string[] = [];
    let reactivationSynced = false;
    const watched = new Proxy(h.platform, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "bulkUsers") return value.bind(object);
        return (action: string, ids: string[]) => {
          if (action === "DEACTIVATE" && ids.includes(platformId))
            deactivations.push(reactivationSynced ? "after" : "before");
          return value.call(object, action, ids);
        };
      },
    });
    // The platform heals and the reactivation's sync runs right after the failed change was settled.
    const state = hooked(h.state, { after: ["settleLifecycle"] }, async () => {
      h?.emulator.data.bulkFailures.delete(platformId);
      await run(ref);
      reactivationSynced = true;
    });
    await flushNow(h.syncContext({ platform: watched, state }));
    expect(reactivationSynced).toBe(true);
    await drain(ref);

    expect(deactivations).toEqual(["before"]);
    expect(h.platformUsers().get("cj.retry@example.com")).toMatchObject({ active: true });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
  });
  /**
   * RFC 7644 §3.3: the platform may store a new user otherwise than asked (here: inactive). The
   * sync queues the ACTIVATE, and the flush settles it at once (the record: active); the sync then
   * records the user's hand-off to its groups (notifyGroups) with the state it knew before, and
   * must not write "inactive" back over it. Else a later deactivation plans nothing: the user stays
   * active.
   */
  it("the record written after a queued change (the groups' hand-off) does not undo its settle", async () => {
    h = await startJobsHarness("crash-j-settle-handoff", { workers: false });
    const harness = h;
    const platform = new Proxy(h.platform, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "createUser") return value.bind(object);
        // A platform that creates users inactive (and says so).
        return async (body: JsonObject) => {
          const created = await object.createUser(body);
          await object.bulkUsers("DEACTIVATE", [created.id]);
          return { ...created, active: false };
        };
      },
    });
    const ctx: SyncContext = h.syncContext({
      platform,
      scheduleLifecycle: async () => {
        await flushNow(harness.syncContext());
      },
    });
    const run = h.syncProcessor(ctx);
    const u = await h.directory.createUser("okta", h.user("cj.handoff@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("lifecycle");
    expect(h.platformUsers().get("cj.handoff@example.com")).toMatchObject({ active: true });
    // The settle stands in the record (the hand-off only drops its flag): a rename then makes no
    // lifecycle call again (invariant 4), and the guard reads the user's state.
    expect(await h.state.getApplied(ref)).toMatchObject({ lifecycle: "active" });
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, displayName: "Renamed" }));
    expect(await run(ref)).toBe("clean");

    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    await drain(ref);

    expect(h.platformUsers().get("cj.handoff@example.com")).toMatchObject({ active: false });
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.isDirty(ref)).toBe(false);
  });
});
