/**
 * A user deleted at the source (onDelete: deactivate) gets a final DEACTIVATE in the lifecycle
 * batch; once the flusher settles it, the user is forgotten (applied record, status, link). The
 * flusher may settle it before the sync that queued it has recorded its status: the same entry
 * already queued (putLifecycle keeps an entry of the same action) and due at once, say, after a
 * bulk call held on the wire. That late status must not bring back a record of a user the source
 * no longer has (the admin API then showed it as "pending" for good, with its platform id).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

/**
 * A sync processor whose flusher runs the moment a change is queued (scheduleLifecycle), so that
 * it settles the change before the sync records its outcome.
 */
function syncWithImmediateFlush(harness: JobsHarness) {
  let flushes = 0;
  const ctx: SyncContext = harness.syncContext({
    scheduleLifecycle: async () => {
      flushes++;
      await flushNow(ctx);
    },
  });
  return { run: harness.syncProcessor(ctx), flushes: () => flushes };
}

describe("a final lifecycle change settled before its sync records", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("leaves no status of the deleted user behind", async () => {
    h = await startJobsHarness("final-lifecycle-settled-first", { workers: false });
    const { run, flushes } = syncWithImmediateFlush(h);
    const u = await h.directory.createUser("okta", h.user("settled.first@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    expect(await h.state.getStatus(ref)).toMatchObject({ state: "synced" });

    await h.directory.deleteUser("okta", ref.id);
    expect(await run(ref)).toBe("lifecycle");
    expect(flushes()).toBe(1);

    expect(h.platformUsers().get("settled.first@example.com")?.["active"]).toBe(false);
    expect(await h.state.countLifecycle()).toBe(0);
    expect(await h.directory.snapshotUser("okta", ref.id)).toBeNull();
    expect(await h.state.getApplied(ref)).toBeNull();
    expect(await h.state.getStatus(ref)).toBeNull();
  });

  it("still records the status of a non-final change the flusher settled first", async () => {
    h = await startJobsHarness("lifecycle-settled-first", { workers: false });
    const { run } = syncWithImmediateFlush(h);
    const u = await h.directory.createUser("okta", h.user("kept.first@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    expect(h.platformUsers().get("kept.first@example.com")?.["active"]).toBe(false);
    expect(await h.state.getApplied(ref)).toMatchObject({ lifecycle: "inactive" });
    // The flusher's record of the settled change stands (synced; crash-j: not the sync's later
    // `pending`): the entity is there, at its generation.
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "synced",
      platformId: expect.any(String),
      appliedGeneration: 2,
    });
  });

  it("a dead letter of an earlier change goes once the flusher settled the new one first", async () => {
    h = await startJobsHarness("lifecycle-settled-first-letter", { workers: false });
    const { run } = syncWithImmediateFlush(h);
    const u = await h.directory.createUser("okta", h.user("letter.first@example.com"));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    // An earlier change of the user failed for good.
    await h.state.addDeadLetter({
      ref,
      reason: "refused",
      code: "platform_bad_request",
      at: new Date().toISOString(),
      attempts: 1,
    });
    await h.state.setStatus({ ref, state: "dead" });
    await h.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
    expect(await run(ref)).toBe("lifecycle");
    expect(h.platformUsers().get("letter.first@example.com")?.["active"]).toBe(false);
    expect(await h.state.getStatus(ref)).toMatchObject({ state: "synced", appliedGeneration: 2 });
    expect(await h.state.countDeadLetters()).toBe(0);
  });

  it("a retry of a sync whose user was forgotten meanwhile drops the failure it noted", async () => {
    h = await startJobsHarness("lifecycle-forgotten-retry", { workers: false });
    const { run } = syncWithImmediateFlush(h);
    // A failure noted by a run that read the user just before it was forgotten and purged.
    const ref: EntityRef = { source: "okta", kind: "user", id: "0b7e5c1e-forgotten" };
    await h.state.setStatus({
      ref,
      state: "retrying",
      lastError: {
        message: "socket hang up",
        code: "platform_unavailable",
        at: new Date().toISOString(),
        attempts: 1,
      },
    });
    expect(await run(ref)).toBe("absent");
    expect(await h.state.getStatus(ref)).toBeNull();
  });
});
