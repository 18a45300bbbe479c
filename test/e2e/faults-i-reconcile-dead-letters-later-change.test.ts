/**
 * Faults-i: a reconciliation hands a transient dead letter over once (src/sync/dead-letter-retry.ts),
 * and the letter its sync writes when it fails again keeps the mark (`autoRetriedAt`), left for an
 * admin. A later change of the entity (a rename, failing in another outage) is another desired
 * state: its letter must not inherit that mark, so the next reconciliation hands it over and the
 * rename reaches the platform without an admin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

interface Letter {
  ref: { id: string };
  reason: string;
  at: string;
  autoRetriedAt?: string;
}

describe("faults-i: a later change's dead letter does not inherit an earlier hand-over's mark", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("faults-i-dl-later-change", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        sync: {
          concurrency: 4,
          attempts: 2,
          lifecycleBatchWindowMs: 50,
          sweepIntervalMs: 500,
          sweepAfterMs: 1_000,
        },
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const reconcile = async () => {
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
  };

  it("the rename's letter is handed over by the next reconciliation, and the rename lands", async () => {
    const scim = h.scim("okta");
    const x = await scim.createUser("dl.later@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("dl.later@example.com")?.id as string;
    const letterOf = async () =>
      ((await h.admin().get("/dead-letters")).body.items as Letter[]).find((l) => l.ref.id === x.id);
    const rename = (displayName: string) =>
      scim.patchUser(x.id, [{ op: "replace", path: "displayName", value: displayName }]);

    // An outage of the user's writes, longer than the attempts: the rename is a dead letter.
    h.emulator.setFaults([
      {
        id: "outage",
        type: "error",
        status: 503,
        match: { method: "PATCH", path: `/api/scim/v2/Users/${pid}` },
      },
    ]);
    expect((await rename("X one")).status).toBe(200);
    await waitFor(letterOf, { timeoutMs: 40_000, what: "the rename's dead letter" });

    // 09:30: a reconciliation hands it over; its sync fails too: the letter keeps the mark.
    await reconcile();
    await waitFor(
      async () => {
        const l = await letterOf();
        return l?.autoRetriedAt !== undefined && Date.parse(l.at) > Date.parse(l.autoRetriedAt)
          ? l
          : undefined;
      },
      { timeoutMs: 40_000, what: "the handed-over sync's letter, marked" },
    );
    await h.waitForIdle(30_000);
    expect((await letterOf())?.autoRetriedAt).toEqual(expect.any(String));

    // Days later the IdP renames the user again, and that sync fails in a fresh outage.
    const renamedAt = Date.now();
    expect((await rename("X two")).status).toBe(200);
    const fresh = await waitFor(
      async () => {
        const l = await letterOf();
        return l !== undefined && Date.parse(l.at) > renamedAt ? l : undefined;
      },
      { timeoutMs: 40_000, what: "the later rename's dead letter" },
    );
    // A new desired state: not marked (it was, inheriting the 09:30 mark, before the fix).
    expect(fresh.autoRetriedAt).toBeUndefined();
    await h.waitForIdle(30_000);

    // The platform answers again; the next scheduled reconciliation syncs the letter again.
    h.emulator.setFaults([]);
    await reconcile();
    await waitFor(async () => ((await letterOf()) === undefined ? true : undefined), {
      timeoutMs: 40_000,
      what: "the later rename's letter to go",
    });
    await h.waitForIdle(30_000);
    expect(h.platformUsers().get("dl.later@example.com")?.displayName).toBe("X two");
    expect((await h.admin().get(`/sources/okta/users/${x.id}`)).body.state).toBe("synced");
  }, 150_000);
});
