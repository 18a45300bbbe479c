import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * Invariant 8 at its boundary, end to end over the admin API: with 10 owned users and a share of
 * 0.1, one planned deprovisioning (exactly the share) goes through and two (just above) wait for
 * an admin, for reconciliation (orphans counted) and for a whole-source resync alike.
 */
describe("the deprovisioning guard at and just above the threshold", () => {
  let h: TestBridge;
  const users: string[] = [];

  const pid = async (id: string) =>
    (await h.admin().get(`/sources/okta/users/${id}`)).body.platformId as string;
  const reactivateBehind = async (ids: string[]) => {
    for (const id of ids) h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
  };
  const activeCount = () => h.emulator.state().users.filter((u) => u.active !== false).length;
  const settle = async (path: string) =>
    waitFor(
      async () => {
        const res = await h.admin().get(path);
        return SETTLED.includes(res.body.state) ? res.body : null;
      },
      { what: `${path} to settle` },
    );
  const reconcile = async () => {
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(res.status).toBe(202);
    return settle(`/reconcile-runs/${res.body.runId}`);
  };
  const resyncAll = async () => {
    const res = await h.admin().post("/sources/okta/resync", {});
    expect(res.status).toBe(202);
    return settle(`/resyncs/${res.body.id}`);
  };

  beforeAll(async () => {
    h = await startTestBridge("inv-guard", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    const scim = h.scim("okta");
    for (let i = 0; i < 10; i++) users.push((await scim.createUser(`guard${i}@example.com`)).id);
    for (const id of users.slice(0, 2))
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    expect(activeCount()).toBe(8);
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it("reconciliation: exactly the share (1 of 10) is applied without asking", async () => {
    await reactivateBehind(users.slice(0, 1));
    expect(activeCount()).toBe(9);
    const run = await reconcile();
    expect(run.state).toBe("succeeded");
    await h.waitForIdle();
    expect(activeCount()).toBe(8);
  });

  it("reconciliation: one drift plus one orphan (2 of 10) is held, and changes nothing", async () => {
    await reactivateBehind(users.slice(0, 1));
    const orphan = h.emulator.drift({ action: "addOrphanUser", user: { userName: "orphan@example.com" } });
    const run = await reconcile();
    expect(run).toMatchObject({ state: "awaiting-confirmation", counts: { orphans: 1, activeMismatch: 1 } });
    await h.waitForIdle();
    expect(activeCount()).toBe(10); // 9 users + the orphan
    expect((await h.admin().get("/status")).body.idle).toBe(true); // a held run waits, it does not run
    expect((await h.admin().post(`/reconcile-runs/${run.runId}/discard`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(activeCount()).toBe(10);
    expect(h.emulator.state().users.find((u) => u.id === orphan)?.active).not.toBe(false);
  });

  it("resync: exactly the share (1 of 10) is applied without asking", async () => {
    // user 0 is still active on the platform after the discarded run
    const op = await resyncAll();
    expect(op.state).toBe("succeeded");
    await h.waitForIdle();
    expect(h.platformUsers().get("guard0@example.com")?.active).toBe(false);
  });

  it("resync: 2 of 10 is held until an admin confirms", async () => {
    await reactivateBehind(users.slice(0, 2));
    const op = await resyncAll();
    expect(op.state).toBe("awaiting-confirmation");
    await h.waitForIdle();
    expect(h.platformUsers().get("guard0@example.com")?.active).toBe(true);
    expect(h.platformUsers().get("guard1@example.com")?.active).toBe(true);
    expect((await h.admin().post(`/resyncs/${op.id}/confirm`)).status).toBeLessThan(300);
    await settle(`/resyncs/${op.id}`);
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.id}`)).body.state === "succeeded", {
      what: "the confirmed resync",
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("guard0@example.com")?.active).toBe(false);
    expect(h.platformUsers().get("guard1@example.com")?.active).toBe(false);
  });
  it("resync of named users: 2 of 10 is held too", async () => {
    await reactivateBehind(users.slice(0, 2));
    const res = await h.admin().post("/sources/okta/resync", { users: users.slice(0, 2) });
    expect(res.status).toBe(202);
    const op = await settle(`/resyncs/${res.body.id}`);
    await h.waitForIdle();
    expect(op.state).toBe("awaiting-confirmation");
    expect(h.platformUsers().get("guard0@example.com")?.active).toBe(true);
    expect(h.platformUsers().get("guard1@example.com")?.active).toBe(true);
  });
});
