/**
 * forgetAbsent (src/sync/forget-absent.ts) drops what a run that lost its job left of an absent
 * entity: its create's hold on a name (settleCreate) and its records (state.forget, whose MULTI
 * drops the applied record). The name is known only from the applied record's pendingUserName, so
 * the hold goes first: a process killed after the records went leaves nothing the re-run (the
 * absent entity's sync again: forgetAbsent, which then finds no applied record) would have to
 * release. **Was a bug** (found in review round r's crash-window audit): the hold was released after
 * the records, and such a kill left `creating:<name>` held for ever by an entity the directory no
 * longer knew (invariant 6).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { forgetAbsent } from "../../../src/sync/forget-absent.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { beginCreate } from "../../../src/sync/ownership.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { deleteKeys, TEST_REDIS_URL, testPrefix } from "../../helpers/redis-test-prefix.js";

const prefix = testPrefix("forget-absent-hold-crash");
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe("forgetAbsent, killed once the records went", () => {
  it("leaves no hold on the name once run again from what it left", async () => {
    const ref: EntityRef = { source: "okta", kind: "user", id: "u1" };
    const state = new RedisSyncStateStore(redis, prefix);
    // What a run that lost its job wrote on: the create's intent, and its hold on the name.
    await state.putApplied(ref, { attributes: {}, pendingUserName: "ada@example.com" });
    await beginCreate({ state } as unknown as SyncContext, "user", "ada@example.com", ref);
    expect(await state.ownerOf("user", "creating:ada@example.com")).toBe("okta|user|u1");

    // The process dies right after the records went (the applied record with them).
    const dying = new RedisSyncStateStore(redis, prefix);
    const forget = dying.forget.bind(dying);
    dying.forget = async (...args) => {
      await forget(...args);
      throw new Error("killed");
    };
    await expect(forgetAbsent({ state: dying }, ref)).rejects.toThrow("killed");

    // The re-run: the absent entity's sync again (sync-processor: outcome "absent" -> forgetAbsent).
    const again = new RedisSyncStateStore(redis, prefix);
    await forgetAbsent({ state: again }, ref);
    expect(await again.getApplied(ref)).toBeNull();
    expect(await again.ownerOf("user", "creating:ada@example.com")).toBeNull();
  });
});
