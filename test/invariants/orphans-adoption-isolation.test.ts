import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * "On first sync a platform user with the same userName is adopted" and "orphans: deactivate"
 * meet: a platform user that no source owns yet, but whose userName a workspace source's directory
 * holds, is that source's user on its way to being adopted (its sync queued, retrying, or held up
 * by the platform). A reconciliation of another source must not deactivate it meanwhile: that
 * would lock the person out until the adopting sync turns them back on. A user nobody holds is
 * still deactivated.
 */
describe("orphans that a source is about to adopt", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-orphan-adoption", {
      sources: {
        okta: { tokens: ["okta-token"] },
        late: { tokens: ["late-token"] },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("another source's reconciliation leaves them active and deactivates only true orphans", async () => {
    for (let i = 0; i < 3; i++) await h.scim("okta").createUser(`owned${i}@example.com`);
    await h.waitForIdle();
    const [adoptee, nobody] = h.emulator.seed({
      users: [
        { userName: "adopt-me@example.com", active: true },
        { userName: "nobody@example.com", active: true },
      ],
    }).users as [string, string];

    // The platform refuses creates for now: the late source's user cannot be adopted yet.
    h.emulator.addFault({ type: "error", status: 503, match: { operation: "createUser" } });
    const late = await h.scim("late").createUser("Adopt-Me@example.com");
    await waitFor(() => h.emulator.count("createUser") > 3, { what: "the late source's first create" });

    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(res.status).toBe(202);
    const run = await waitFor(
      async () => {
        const r = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
        return SETTLED.includes(r.body.state) ? r.body : null;
      },
      { what: "the run" },
    );
    expect(run).toMatchObject({ state: "succeeded", counts: { orphans: 2 } });
    expect(run.repairs.orphanDeactivations).toBe(1);
    const byId = (id: string) => h.emulator.state().users.find((u) => u.id === id);
    expect(byId(nobody)?.active).toBe(false);
    expect(byId(adoptee)?.active).toBe(true);

    // Once the platform takes creates again, the late source adopts its user, active throughout.
    h.emulator.clearFaults();
    await h.admin().post("/sources/late/resync", { users: [late.id] });
    await waitFor(
      async () => (await h.admin().get(`/sources/late/users/${late.id}`)).body.platformId === adoptee,
      { what: "the adoption", timeoutMs: 30_000 },
    );
    await h.waitForIdle(30_000);
    expect(byId(adoptee)?.active).toBe(true);
  });
});
