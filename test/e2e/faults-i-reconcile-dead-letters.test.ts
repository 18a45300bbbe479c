/**
 * Faults-i: a platform outage longer than the jobs' attempts (`sync.attempts` 2) dead-letters every
 * entity it touched, with the outage's transient reason. Nobody runs `dead-letters retry`. Once the
 * platform answers again, the next reconciliation (started here over the admin API, as the
 * schedule would) must leave the platform in the desired state and no dead letter behind: a create
 * never made, a rename, an attribute value, a member added, a group created, and a rename the
 * platform applied whose answer was lost (its dead letter names a failure the platform no longer
 * shows).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const memberIds = (members: unknown[] | undefined) =>
  (members ?? []).map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort();

describe("faults-i: the next reconciliation after an outage longer than the attempts", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("faults-i-reconcile-dead", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
      },
      config: {
        sync: {
          concurrency: 8,
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

  const group = (name: string) => h.emulator.state().groups.find((g) => g.displayName === name);
  const department = (userName: string) => {
    const pid = h.platformUsers().get(userName)?.id;
    const state = h.emulator.state();
    const def = state.attributes.find((a) => a.name === "department");
    return state.attributeValues.find((v) => v.userId === pid && v.attributeId === def?.id)?.value;
  };

  it("resyncs the dead-lettered entities and clears their letters", async () => {
    const scim = h.scim("okta");
    const withDept = (dept: string) => ({ schemas: [USER_SCHEMA, ENT], [ENT]: { department: dept } });
    const a = await scim.createUser("dl.a@example.com", withDept("R&D"));
    const b = await scim.createUser("dl.b@example.com", withDept("R&D"));
    const c = await scim.createUser("dl.c@example.com", withDept("R&D"));
    const d = await scim.createUser("dl.d@example.com", withDept("R&D"));
    const g = await scim.createGroup("DL Team", [a.id]);
    const gone = await scim.createUser("dl.gone@example.com");
    const goneGroup = await scim.createGroup("DL Gone", [c.id]);
    await h.waitForIdle();
    const dPid = h.platformUsers().get("dl.d@example.com")?.id as string;

    // The platform is down (d's rename is applied, its answer lost, then 503 like every call).
    h.emulator.setFaults([
      { type: "ghost", count: 1, match: { method: "PATCH", path: `/api/scim/v2/Users/${dPid}` } },
      { id: "outage", type: "error", status: 503 },
    ]);
    const n = await scim.createUser("dl.new@example.com");
    const rename = (id: string, displayName: string) =>
      scim.patchUser(id, [{ op: "replace", path: "displayName", value: displayName }]);
    expect((await rename(a.id, "A renamed")).status).toBe(200);
    expect(
      (await scim.patchUser(b.id, [{ op: "replace", path: `${ENT}:department`, value: "Sales" }])).status,
    ).toBe(200);
    expect(
      (await scim.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: b.id }] }])).status,
    ).toBeLessThan(300);
    const team2 = await scim.createGroup("DL Team 2", [c.id]);
    expect((await rename(d.id, "D renamed")).status).toBe(200);
    expect((await scim.deleteUser(gone.id)).status).toBe(204);
    expect((await scim.deleteGroup(goneGroup.id)).status).toBe(204);

    // (The deleted user's deactivation waits in the lifecycle batch: no dead letter, it lands by itself.)
    const refs = [n.id, a.id, b.id, g.id, team2.id, d.id, goneGroup.id];
    await waitFor(
      async () => {
        const items = (await h.admin().get("/dead-letters")).body.items as Array<{ ref: { id: string } }>;
        return refs.every((id) => items.some((l) => l.ref.id === id));
      },
      { timeoutMs: 40_000, what: "every touched entity to be a dead letter" },
    );
    h.emulator.setFaults([]);
    await h.waitForIdle(20_000);
    // Nothing converges by itself: the letters stay until someone or something retries them.
    expect((await h.admin().get("/status")).body.deadLetters).toBe(refs.length);

    // The next (scheduled) reconciliation, started here over the admin API.
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["succeeded", "failed", "awaiting-confirmation", "discarded"].includes(got.body.state)
          ? got.body
          : undefined;
      },
      { timeoutMs: 30_000, what: "the reconciliation to finish" },
    );
    await h.waitForIdle(30_000);

    const users = h.platformUsers();
    expect(users.get("dl.new@example.com")?.active).toBe(true);
    expect(users.get("dl.a@example.com")?.displayName).toBe("A renamed");
    expect(users.get("dl.d@example.com")?.displayName).toBe("D renamed");
    expect(department("dl.b@example.com")).toBe("Sales");
    expect(memberIds(group("DL Team")?.members)).toEqual(
      [users.get("dl.a@example.com")?.id, users.get("dl.b@example.com")?.id].sort(),
    );
    expect(memberIds(group("DL Team 2")?.members)).toEqual([users.get("dl.c@example.com")?.id]);
    // Deleted at the source during the outage: deprovisioned by policy (deactivate), group gone.
    expect(users.get("dl.gone@example.com")?.active).toBe(false);
    expect(group("DL Gone")).toBeUndefined();
    const status = (await h.admin().get("/status")).body;
    expect(status, JSON.stringify(run)).toMatchObject({ idle: true, deadLetters: 0, pending: 0 });
    for (const id of refs.slice(0, 3).concat(d.id)) {
      expect((await h.admin().get(`/sources/okta/users/${id}`)).body.state, id).toBe("synced");
    }
    for (const id of [g.id, team2.id]) {
      expect((await h.admin().get(`/sources/okta/groups/${id}`)).body.state, id).toBe("synced");
    }
  }, 120_000);
});
