import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * Invariant 6 (bounded resources): once a deleted entity is deprovisioned and the queues drain,
 * no Redis key of the bridge names it or holds it: not the directory (hash, index entries,
 * membership sets, tombstone, dirty marker) nor the sync state (applied record, platform id,
 * status, ownership). BullMQ's own finished-job hashes are excluded: they are trimmed by count.
 */
describe("Redis keys of deleted entities are removed", () => {
  let h: TestBridge;
  let redis: Redis;
  beforeAll(async () => {
    h = await startTestBridge("inv-keys", {
      sources: {
        okta: { tokens: ["okta-token"], onDelete: "delete" },
        entra: { tokens: ["entra-token"] },
        hr: {
          tokens: ["hr-token"],
          onDelete: "delete",
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
      },
    });
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  const traces = (needles: string[]) => redisTraces(redis, h.prefix, needles);

  it("onDelete: delete leaves no key, field or member of the deleted user and group", async () => {
    const okta = h.scim("okta");
    const gone = await okta.createUser("gone@example.com", { externalId: "ext-gone" });
    const stays = await okta.createUser("stays@example.com");
    const group = await okta.createGroup("Doomed", [gone.id, stays.id]);
    await h.waitForIdle();
    const platformId = h.platformUsers().get("gone@example.com")?.id as string;
    const groupPlatformId = h.emulator.state().groups.find((g) => g.displayName === "Doomed")?.id as string;
    expect(platformId).toBeTruthy();
    expect((await traces([gone.id, group.id])).length).toBeGreaterThan(0); // the probe can see them

    expect((await okta.deleteUser(gone.id)).status).toBe(204);
    expect((await okta.deleteGroup(group.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("gone@example.com")).toBeUndefined();
    expect(h.emulator.state().groups.find((g) => g.displayName === "Doomed")).toBeUndefined();

    expect(await traces([gone.id, group.id, platformId, groupPlatformId, "ext-gone"])).toEqual([]);
    // The surviving user is still whole.
    expect((await okta.get(`/Users/${stays.id}`)).status).toBe(200);
  });

  it("onDelete: deactivate (the default) leaves no directory key or sync state of the deleted user", async () => {
    const entra = h.scim("entra");
    const gone = await entra.createUser("parted@example.com");
    await h.waitForIdle();
    expect((await entra.deleteUser(gone.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("parted@example.com")?.active).toBe(false);
    expect(await traces([gone.id])).toEqual([]);
  });
  it("a dead-lettered user and a user in conflict with another source leave nothing once deleted", async () => {
    h.emulator.seed({ attributes: [{ name: "department", type: "number" }] });
    const hr = h.scim("hr");
    const clash = await hr.createUser("clash@example.com", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
      [ENT]: { department: "R&D" },
    });
    await h.scim("entra").createUser("taken@example.com");
    await h.waitForIdle();
    const conflict = await hr.createUser("taken@example.com");
    await h.waitForIdle();
    await waitFor(async () => (await h.admin().get("/dead-letters?source=hr")).body.total >= 1, {
      what: "the dead letter",
    });
    expect((await h.admin().get(`/sources/hr/users/${conflict.id}`)).body).toMatchObject({
      lastError: { code: "ownership_conflict" },
    });
    expect((await hr.deleteUser(clash.id)).status).toBe(204);
    expect((await hr.deleteUser(conflict.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("taken@example.com")?.active).toBe(true); // entra's, untouched
    expect(await traces([clash.id, conflict.id])).toEqual([]);
    expect((await h.admin().get("/dead-letters?source=hr")).body.total).toBe(0);
  });
});
