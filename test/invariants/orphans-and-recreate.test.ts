import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * Ownership (invariant 5): a reconciliation of one source with `orphans: deactivate` deactivates
 * platform users that no source owns, never those another source owns. And a user deleted and at
 * once re-created at its source with the same userName ends active on the platform, once.
 */
describe("orphans, other sources' users, and a re-created user", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-orphans", {
      sources: {
        okta: { tokens: ["okta-token"] },
        entra: { tokens: ["entra-token"], onDelete: "delete" },
        embed: { tokens: ["embed-token"], target: { embedTenant: "acme" } },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("orphans: deactivate touches only users no source owns", async () => {
    await h.scim("okta").createUser("okta-own@example.com");
    await h.scim("entra").createUser("entra-own@example.com");
    const em = await h.scim("embed").createUser("embed-own@example.com");
    await h.scim("embed").createGroup("acme-team", [em.id]);
    await h.waitForIdle();
    const orphan = h.emulator.drift({ action: "addOrphanUser", user: { userName: "orphan@example.com" } });
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(res.status).toBe(202);
    const run = await waitFor(
      async () => {
        const r = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
        return SETTLED.includes(r.body.state) ? r.body : null;
      },
      { what: "the run" },
    );
    expect(run).toMatchObject({ state: "succeeded", counts: { orphans: 1 } });
    await h.waitForIdle();
    const users = h.platformUsers();
    expect(users.get("okta-own@example.com")?.active).toBe(true);
    expect(users.get("entra-own@example.com")?.active).toBe(true);
    expect(h.emulator.state().users.find((u) => u.id === orphan)?.active).toBe(false);
    // Embed users never become workspace users.
    expect(users.get("embed-own@example.com")).toBeUndefined();
  });

  for (const source of ["okta", "entra"] as const) {
    it(`a user deleted and re-created at once with the same userName ends active, once (${source})`, async () => {
      const scim = h.scim(source);
      const userName = `again-${source}@example.com`;
      const first = await scim.createUser(userName, { displayName: "First" });
      await h.waitForIdle();
      expect((await scim.deleteUser(first.id)).status).toBe(204);
      const second = await scim.createUser(userName, { displayName: "Second" });
      await h.waitForIdle();
      const same = h.emulator.state().users.filter((u) => String(u.userName).toLowerCase() === userName);
      expect(same).toHaveLength(1);
      expect(same[0]).toMatchObject({ active: true, displayName: "Second" });
      const status = await h.admin().get(`/sources/${source}/users/${second.id}`);
      expect(status.body).toMatchObject({ state: "synced", platformId: same[0]?.id });
      expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
    });
  }
});
