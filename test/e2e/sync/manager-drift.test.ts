import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import {
  PLATFORM_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  startTestBridge,
} from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * "Who is right: the directory." A platform user's manager changed behind the bridge's back is
 * drift: a reconciliation counts it as `changed` and its repair puts the manager back, as the sync
 * sends it (the manager's platform id). A user whose manager has no platform user (its sync a dead
 * letter) was synced without it: that is no drift, run after run.
 */
describe("reconciliation of the enterprise manager", () => {
  let h: TestBridge;
  let redis: Redis;
  let state: RedisSyncStateStore;
  let behind: HttpPlatformClient;
  beforeAll(async () => {
    h = await startTestBridge("manager-drift", {
      sources: { okta: { tokens: ["okta-token"] }, entra: { tokens: ["entra-token"] } },
    });
    redis = new Redis(TEST_REDIS_URL);
    state = new RedisSyncStateStore(redis, h.prefix);
    // Another admin of the platform, not the bridge.
    behind = new HttpPlatformClient({
      baseUrl: h.platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2_000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
  });
  afterAll(async () => {
    behind?.close();
    redis?.disconnect();
    await h?.close();
  });

  const platformManager = (userName: string) =>
    (h.platformUsers().get(userName)?.[ENT] as { manager?: { value?: string } } | undefined)?.manager?.value;
  const reconcile = async (dryRun: boolean) => {
    const started = await h.admin().post("/sources/entra/reconcile", { dryRun });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(got.body.state) ? null : got.body;
      },
      { what: "the reconciliation" },
    );
    // The repair of the dead-lettered manager (missing on the platform) fails again, as it should.
    expect(run.state).toBe(dryRun ? "succeeded" : "failed");
    return run;
  };
  const report = (userName: string, managerId: string) =>
    h.scim("entra").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Ops", manager: managerId },
    });

  it("counts a manager changed on the platform as changed and puts it back; a dead-lettered manager is no drift", async () => {
    const entra = h.scim("entra");
    const boss = await entra.createUser("boss@contoso.example");
    await entra.createUser("other@contoso.example");
    await report("emp@contoso.example", boss.id);
    // A manager whose create is refused for good (okta holds its userName): its report is synced
    // without it.
    await h.scim("okta").createUser("dead-boss@contoso.example");
    await h.waitForIdle();
    const deadBoss = await entra.createUser("dead-boss@contoso.example");
    await h.waitForIdle();
    expect((await state.getStatus({ source: "entra", kind: "user", id: deadBoss.id }))?.state).toBe("dead");
    await report("left-out@contoso.example", deadBoss.id);
    await h.waitForIdle();

    const bossPlatformId = h.platformUsers().get("boss@contoso.example")?.id;
    const otherPlatformId = h.platformUsers().get("other@contoso.example")?.id as string;
    expect(platformManager("emp@contoso.example")).toBe(bossPlatformId);
    expect(platformManager("left-out@contoso.example")).toBeUndefined();
    expect((await reconcile(true)).counts).toMatchObject({ changed: 0, missing: 1 });

    // Someone changes the manager on the platform.
    const empPlatformId = h.platformUsers().get("emp@contoso.example")?.id as string;
    await behind.patchUser(empPlatformId, [
      { op: "replace", path: `${ENT}:manager`, value: { value: otherPlatformId } },
    ]);
    expect(platformManager("emp@contoso.example")).toBe(otherPlatformId);

    const repaired = await reconcile(false);
    expect(repaired.counts).toMatchObject({ changed: 1, missing: 1 });
    expect(repaired.samples.changed).toEqual([
      expect.objectContaining({ platformId: empPlatformId, detail: `fields: ${ENT}:manager` }),
    ]);
    await h.waitForIdle();
    expect(platformManager("emp@contoso.example")).toBe(bossPlatformId);
    // Converged: nothing left to report (and the user without its manager never is).
    expect((await reconcile(true)).counts).toMatchObject({ changed: 0, missing: 1 });
    expect(h.emulator.violations()).toEqual([]);
  });
});
