import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeMarker } from "../../../src/sync/late-writes.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";
import { createLogger } from "../../../src/observability/logger.js";

/**
 * A platform write is marked before it is sent (late-writes.ts, writeMarker): while it is on the
 * wire, a change that a late write would undo waits (checkDueAt); once it is answered, nothing
 * waits for it; once it timed out, its check stands; a mark left by a process that died with the
 * write on the wire becomes a check when due.
 */
const prefix = testPrefix("write-marks");
const AFTER_MS = 60_000;
let redis: Redis;
let state: RedisSyncStateStore;
let ctx: Pick<SyncContext, "state" | "config" | "logger">;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  state = new RedisSyncStateStore(redis, prefix);
  ctx = {
    state,
    config: { sync: { lateWriteCheckMs: AFTER_MS }, platform: { timeoutMs: 1_000 } } as SyncContext["config"],
    logger: createLogger("silent"),
  };
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe("marks of platform writes on the wire", () => {
  it("an answered write: waited for while on the wire, then nothing waits and nothing is left", async () => {
    const ref = { source: "okta", kind: "user" as const, id: "answered" };
    const other = { source: "okta", kind: "user" as const, id: "answered-other" };
    const before = Date.now();
    const settle = await writeMarker(ctx, ref)();
    const due = await state.checkDueAt(ref);
    expect(due).toBeGreaterThanOrEqual(before + AFTER_MS);
    expect(await state.checkDueAt(other)).toBeNull();
    expect(await state.countChecks()).toBe(1);
    await settle({ mayLandLate: false, sentAt: Date.now() });
    expect(await state.checkDueAt(ref)).toBeNull();
    expect(await state.countChecks()).toBe(0);
  });

  it("a write that timed out: its check stands at its send time plus the wait, and the mark is gone", async () => {
    const ref = { source: "okta", kind: "user" as const, id: "timed-out" };
    const settle = await writeMarker(ctx, ref)();
    const sentAt = Date.now();
    await settle({ mayLandLate: true, sentAt });
    expect(await state.checkDueAt(ref)).toBe(sentAt + AFTER_MS);
    expect(await state.countChecks()).toBe(1);
    await state.clearCheck(ref, sentAt + AFTER_MS);
    expect(await state.countChecks()).toBe(0);
  });

  it("a mark left by a process that died: a check once due, handed on at its own time", async () => {
    const ref = { source: "okta", kind: "group" as const, id: "crashed" };
    await state.markWrite(ref, "w1", 1_000);
    await state.markWrite(ref, "w2", 5_000);
    expect(await state.checkDueAt(ref)).toBe(5_000);
    expect(await state.moveDueWrites(2_000, 100)).toBe(1);
    expect(await state.checkDueAt(ref)).toBe(5_000);
    expect(await state.dueChecks(2_000, 100)).toEqual([{ ref, dueAt: 1_000 }]);
    await state.clearCheck(ref, 1_000);
    expect(await state.moveDueWrites(6_000, 100)).toBe(1);
    expect(await state.dueChecks(6_000, 100)).toEqual([{ ref, dueAt: 5_000 }]);
    await state.clearCheck(ref, 5_000);
    expect(await state.countChecks()).toBe(0);
  });

  it("a check's wait set below the platform timeout: a live call's mark still stands as long as the call may", async () => {
    const ref = { source: "okta", kind: "user" as const, id: "short-wait" };
    const short = {
      ...ctx,
      config: { sync: { lateWriteCheckMs: 200 }, platform: { timeoutMs: 5_000 } } as SyncContext["config"],
    };
    const before = Date.now();
    const settle = await writeMarker(short, ref)();
    expect(await state.checkDueAt(ref)).toBeGreaterThanOrEqual(before + 5_000);
    // The sweeper, past the check's wait but within the call's time, leaves the mark alone.
    await state.moveDueWrites(before + 1_000, 100);
    expect(await state.checkDueAt(ref)).toBeGreaterThanOrEqual(before + 5_000);
    const sentAt = Date.now();
    await settle({ mayLandLate: true, sentAt });
    expect(await state.checkDueAt(ref)).toBe(sentAt + 200);
    await state.clearCheck(ref, sentAt + 200);
  });
});
