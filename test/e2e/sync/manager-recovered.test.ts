import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * A user whose manager's own sync failed for good (a dead letter) is synced without the manager.
 * Once the manager lands on the platform, the bridge syncs that user again by itself (no resync,
 * no change of the user): it gets its manager. The record of who waits on which manager is gone
 * then, and with the users and managers deleted (invariant 6).
 */
describe("users synced without a dead-lettered manager get it once the manager lands", () => {
  let h: TestBridge;
  let redis: Redis;
  let state: RedisSyncStateStore;
  beforeAll(async () => {
    h = await startTestBridge("manager-recovered", {
      sources: {
        okta: { tokens: ["okta-token"] },
        entra: { tokens: ["entra-token"], attributes: { mgr: { from: `${ENT}:manager`, type: "string" } } },
      },
    });
    redis = new Redis(TEST_REDIS_URL);
    state = new RedisSyncStateStore(redis, h.prefix);
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  const platformManager = (userName: string) =>
    (h.platformUsers().get(userName)?.[ENT] as { manager?: { value?: string } } | undefined)?.manager?.value;
  const attribute = (userName: string, name: string) => {
    const id = h.platformUsers().get(userName)?.id;
    return h.emulator.state().attributeValues.find((v) => v.userId === id && v.name === name)?.value;
  };
  /** The sync state's keys about managers left out (key names and contents). */
  const managerKeys = async () => {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", `${h.prefix}:sync:mgr:*`, "COUNT", 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0");
    return keys.sort();
  };
  /** A manager of the entra source whose create is refused for good: okta holds its userName. */
  const deadManager = async (userName: string) => {
    await h.scim("okta").createUser(userName);
    await h.waitForIdle();
    const boss = await h.scim("entra").createUser(userName);
    await h.waitForIdle();
    expect((await state.getStatus({ source: "entra", kind: "user", id: boss.id }))?.state).toBe("dead");
    return boss;
  };
  const report = (userName: string, managerId: string) =>
    h.scim("entra").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Ops", manager: managerId },
    });

  it("syncs the user again once its manager lands, then keeps no record of it", async () => {
    const boss = await deadManager("dead-boss@contoso.example");
    const emp = await report("left-out@contoso.example", boss.id);
    await h.waitForIdle();
    expect((await state.getStatus({ source: "entra", kind: "user", id: emp.id }))?.state).toBe("synced");
    expect(h.platformUsers().get("left-out@contoso.example")?.[ENT]).toEqual({ department: "Ops" });
    expect(await state.managerDependents("entra", boss.id)).toEqual([emp.id]);

    // The boss is renamed and lands: nothing else changes, and no resync is asked for.
    const rename = await h
      .scim("entra")
      .patchUser(boss.id, [{ op: "replace", path: "userName", value: "boss-landed@contoso.example" }]);
    expect(rename.status).toBe(200);
    await h.waitForIdle();
    const bossPlatformId = h.platformUsers().get("boss-landed@contoso.example")?.id;
    expect(bossPlatformId).toBeDefined();
    expect(platformManager("left-out@contoso.example")).toBe(bossPlatformId);
    expect(attribute("left-out@contoso.example", "mgr")).toBe(bossPlatformId);
    expect(await managerKeys()).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
  });

  it("removes the record with the users and the manager deleted", async () => {
    const boss = await deadManager("dead-boss-2@contoso.example");
    const first = await report("first@contoso.example", boss.id);
    const second = await report("second@contoso.example", boss.id);
    await h.waitForIdle();
    expect((await state.managerDependents("entra", boss.id)).sort()).toEqual([first.id, second.id].sort());
    expect(await managerKeys()).toHaveLength(2);

    // A user deleted: it is no longer among the manager's dependents.
    expect((await h.scim("entra").deleteUser(first.id)).status).toBe(204);
    await h.waitForIdle();
    expect(await state.managerDependents("entra", boss.id)).toEqual([second.id]);
    expect(await redis.hkeys(`${h.prefix}:sync:mgr:left:entra`)).toEqual([second.id]);

    // The manager deleted: nothing is left that names it.
    expect((await h.scim("entra").deleteUser(boss.id)).status).toBe(204);
    await h.waitForIdle();
    expect(await managerKeys()).toEqual([]);
  });
});
