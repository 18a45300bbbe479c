/**
 * recordSynced keeps the lifecycle flusher's note of failed bulk calls (RECORD_SYNCED_SCRIPT): a
 * sync of a user whose change still waits on a failing bulk call records `retrying` with that note,
 * not a bare `pending`, read and written in one step; in every other case the sync's status stands.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BULK_OPERATION, type LifecycleEntry } from "../../../src/sync/lifecycle-entry.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import type { EntitySyncStatus } from "../../../src/sync/sync-state-types.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("record-synced-waiting-note");
let redis: Redis;
let store: RedisSyncStateStore;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  store = new RedisSyncStateStore(redis, prefix);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const note = {
  code: "platform_server",
  operation: BULK_OPERATION,
  message: "platform answered 503; the bulk DEACTIVATE is tried again at 2026-11-28T05:00:00.000Z",
  at: "2026-11-28T04:59:59.000Z",
  attempts: 2,
  retryAt: "2026-11-28T05:00:00.000Z",
};

/** A user whose DEACTIVATE is queued (with `waited`), its status `current`; returns the sync's pending status. */
async function waitingUser(
  id: string,
  waited: Partial<LifecycleEntry>,
  current: Partial<EntitySyncStatus> | null,
): Promise<EntitySyncStatus> {
  const ref = { source: "okta", kind: "user" as const, id };
  const platformId = `p-${id}`;
  await store.putLifecycle({
    platformId,
    ref,
    action: "DEACTIVATE",
    generation: 1,
    final: false,
    attempts: 0,
    since: Date.now(),
    ...waited,
  });
  if (current) await store.setStatus({ ref, platformId, state: "pending", ...current });
  return { ref, platformId, state: "pending", appliedGeneration: 2, lastSyncedAt: new Date().toISOString() };
}

describe("recordSynced while a change waits on failing bulk calls", () => {
  it("keeps the note (and the sync's own fields) while the queued change has failed calls or attempts", async () => {
    for (const [id, waited] of [
      ["calls", { failedCalls: 2 }],
      ["attempts", { attempts: 1 }],
    ] as const) {
      const written = await waitingUser(id, waited, { state: "retrying", lastError: note });
      expect(await store.recordSynced(written, { onlyWhileQueued: written.platformId })).toBe(true);
      expect(await store.getStatus(written.ref)).toEqual({ ...written, state: "retrying", lastError: note });
    }
  });

  it("writes the sync's status as it is otherwise", async () => {
    const cases: Array<[string, Partial<LifecycleEntry>, Partial<EntitySyncStatus> | null]> = [
      ["fresh-entry", {}, { state: "retrying", lastError: note }],
      ["no-note", { failedCalls: 1 }, { state: "synced" }],
      [
        "other-failure",
        { failedCalls: 1 },
        { state: "retrying", lastError: { ...note, operation: "getUser" } },
      ],
      ["no-status", { failedCalls: 1 }, null],
    ];
    for (const [id, waited, current] of cases) {
      const written = await waitingUser(id, waited, current);
      expect(await store.recordSynced(written, { onlyWhileQueued: written.platformId })).toBe(true);
      expect(await store.getStatus(written.ref), id).toEqual(written);
    }
    // Not a bare pending (the sync's own failure): written as it is.
    const failed = await waitingUser(
      "own-failure",
      { failedCalls: 1 },
      { state: "retrying", lastError: note },
    );
    const own = { ...failed, lastError: { ...note, operation: "replaceUser", code: "platform_conflict" } };
    await store.recordSynced(own, { onlyWhileQueued: failed.platformId });
    expect(await store.getStatus(failed.ref)).toEqual(own);
  });
});
