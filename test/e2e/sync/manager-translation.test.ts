import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const MANAGER = `${ENT}:manager`;

/**
 * RFC 7643 §4.3: manager.value is "the id of the SCIM resource representing the User's manager".
 * Entra sends the id the bridge gave the manager; on the platform that manager has another id.
 */
describe("the enterprise manager reaches the platform as the platform's id", () => {
  let h: TestBridge;
  let redis: Redis;
  let state: RedisSyncStateStore;
  beforeAll(async () => {
    h = await startTestBridge("manager-id", {
      sources: {
        okta: { tokens: ["okta-token"] },
        entra: {
          tokens: ["entra-token"],
          attributes: { mgr: { from: MANAGER, type: "string" } },
        },
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
  const writes = () => h.emulator.requests().filter((r) => r.method !== "GET").length;

  it("translates a bridge id to the manager's platform id, and a resync then writes nothing", async () => {
    const entra = h.scim("entra");
    const boss = await entra.createUser("boss@contoso.example");
    const emp = await entra.createUser("emp@contoso.example");
    await h.waitForIdle();
    const res = await entra.patchUser(emp.id, [{ op: "Add", path: MANAGER, value: boss.id }]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    const bossPlatformId = h.platformUsers().get("boss@contoso.example")?.id;
    expect(bossPlatformId).toBeDefined();
    expect(bossPlatformId).not.toBe(boss.id);
    expect(platformManager("emp@contoso.example")).toBe(bossPlatformId);
    expect(attribute("emp@contoso.example", "mgr")).toBe(bossPlatformId);
    // What the bridge records as applied is what it sent, so the next sync has nothing to patch.
    const applied = await state.getApplied<{ profile?: { manager?: string } }>({
      source: "entra",
      kind: "user",
      id: emp.id,
    });
    expect(applied?.profile?.manager).toBe(bossPlatformId);

    // A resync re-reads the platform (manager = platform id) and finds nothing to write.
    const before = writes();
    const op = await h.admin().post("/sources/entra/resync", { users: [emp.id, boss.id] });
    expect(op.status).toBe(202);
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.body.id}`)).body.state === "succeeded", {
      what: "the resync",
    });
    await h.waitForIdle();
    expect(writes()).toBe(before);

    // A reconciliation compares the attribute with the manager as synced: no drift.
    const started = await h.admin().post("/sources/entra/reconcile", { dryRun: true });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return got.body.state === "succeeded" ? got.body : null;
      },
      { what: "the dry run" },
    );
    expect(run.counts).toMatchObject({ changed: 0, attributeValues: 0 });
  });

  it("forwards a value that is no user of the source (an employee number) as it is", async () => {
    const entra = h.scim("entra");
    await entra.createUser("num@contoso.example", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { manager: { value: "E-1042" } },
    });
    await h.waitForIdle();
    expect(platformManager("num@contoso.example")).toBe("E-1042");
    expect(attribute("num@contoso.example", "mgr")).toBe("E-1042");
  });

  it("creates the user without a manager that has no platform user yet, and sets it once it has", async () => {
    const entra = h.scim("entra");
    // The boss's create is held by the platform for a while: it has no platform user yet.
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "createUser" } });
    const boss = await entra.createUser("slow-boss@contoso.example");
    await waitFor(() => h.emulator.faults().length === 0, { what: "the boss's create to be held" });
    const emp = await entra.createUser("waiting@contoso.example", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Ops", manager: boss.id },
    });
    const ref = { source: "entra", kind: "user" as const, id: emp.id };
    await waitFor(async () => (await state.getStatus(ref))?.lastError?.code === "waiting_for_manager", {
      what: "the user to wait for its manager",
    });
    // Everything else is applied; the bridge id never reaches the platform.
    expect(h.platformUsers().get("waiting@contoso.example")?.[ENT]).toEqual({ department: "Ops" });
    expect(attribute("waiting@contoso.example", "mgr")).toBeUndefined();
    expect(await h.bridge.isIdle()).toBe(false);

    // The boss lands on the platform: the waiting user gets its manager.
    await h.waitForIdle();
    const bossPlatformId = h.platformUsers().get("slow-boss@contoso.example")?.id;
    expect(bossPlatformId).toBeDefined();
    expect(platformManager("waiting@contoso.example")).toBe(bossPlatformId);
    expect(attribute("waiting@contoso.example", "mgr")).toBe(bossPlatformId);
    expect((await state.getStatus(ref))?.state).toBe("synced");
    expect(h.emulator.violations()).toEqual([]);
  });

  it("does not wait for a manager whose own sync failed for good; a resync sets it once it lands", async () => {
    // The boss's userName is held on the platform by another source's user: a dead letter.
    await h.scim("okta").createUser("dead-boss@contoso.example");
    await h.waitForIdle();
    const entra = h.scim("entra");
    const boss = await entra.createUser("dead-boss@contoso.example");
    await h.waitForIdle();
    expect(await state.getUserPlatformIds("entra", [boss.id])).toEqual([null]);

    const emp = await entra.createUser("orphaned@contoso.example", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Ops", manager: boss.id },
    });
    // Synced without the manager: the bridge goes idle instead of waiting for good.
    await h.waitForIdle();
    const ref = { source: "entra", kind: "user" as const, id: emp.id };
    expect((await state.getStatus(ref))?.state).toBe("synced");
    expect(h.platformUsers().get("orphaned@contoso.example")?.[ENT]).toEqual({ department: "Ops" });

    // The boss is renamed and lands; a resync of the user then sets its manager.
    const rename = await entra.patchUser(boss.id, [
      { op: "replace", path: "userName", value: "boss-2@contoso.example" },
    ]);
    expect(rename.status).toBe(200);
    await h.waitForIdle();
    const op = await h.admin().post("/sources/entra/resync", { users: [emp.id] });
    expect(op.status).toBe(202);
    await h.waitForIdle();
    const bossPlatformId = h.platformUsers().get("boss-2@contoso.example")?.id;
    expect(bossPlatformId).toBeDefined();
    expect(platformManager("orphaned@contoso.example")).toBe(bossPlatformId);
  });
});
