/**
 * The whole bridge against a platform that answers every way the contract allows but the emulator
 * does not by default (ALL_VARIATIONS): pages of 7 whatever count asks, newest first, no
 * totalResults, optional fields left out, unknown fields added, PATCH /Users answered 204 and
 * PATCH /Groups 200, a removal of a missing member refused with 400 noTarget, and a missing
 * tenant's lists answered empty. Provisioning, lifecycle, membership, a resync and a reconciliation
 * must come out as against the default emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_VARIATIONS } from "../../../src/platform/emulator/answer-variations.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

const COUNTS_ZERO = {
  missing: 0,
  changed: 0,
  activeMismatch: 0,
  membership: 0,
  attributeValues: 0,
  deletedBehind: 0,
  orphans: 0,
};

interface StateView {
  users: Array<{ id: string; userName: string; active: boolean; displayName?: string }>;
  groups: Array<{ id: string; displayName: string; members: string[] }>;
  embedTenants: Array<{ name: string; groups: Array<{ id: string; name: string; members: string[] }> }>;
}

describe("the bridge against every answer variation the contract allows", () => {
  let h: TestBridge;
  const users: string[] = [];
  const embedUsers: string[] = [];
  let eng = "";
  let ops = "";
  const name = (i: number) => `var${String(i).padStart(2, "0")}@example.com`;
  const state = () => h.emulator.state() as unknown as StateView;
  const platformUser = (i: number) => state().users.find((u) => u.userName === name(i));
  const platformGroup = (displayName: string) => state().groups.find((g) => g.displayName === displayName);
  const memberNames = (displayName: string) => {
    const byId = new Map(state().users.map((u) => [u.id, u.userName]));
    return (platformGroup(displayName)?.members ?? []).map((id) => byId.get(id)).sort();
  };
  const reconcile = async (source: string) => {
    const res = await h.admin().post(`/sources/${source}/reconcile`, { dryRun: true });
    expect(res.status).toBe(202);
    return waitFor(
      async () => {
        const run = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
        return ["queued", "running"].includes(run.body.state) ? null : run.body;
      },
      { what: "the run to settle" },
    );
  };

  beforeAll(async () => {
    h = await startTestBridge("contract-variations", {
      start: false,
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" } },
        },
        acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
      },
    });
    h.emulator.setVariations(ALL_VARIATIONS);
    await h.start();
    const scim = h.scim("okta");
    for (let i = 0; i < 16; i++) {
      const user = await scim.createUser(name(i), {
        schemas: [USER_SCHEMA, SCHEMA_ENTERPRISE_USER],
        // Two emails: the platform answers them in another order (values of a multi-valued
        // attribute have none), which is no change.
        emails: [
          { value: name(i), type: "work", primary: true },
          { value: `home.${name(i)}`, type: "home" },
        ],
        [SCHEMA_ENTERPRISE_USER]: { department: i % 2 === 0 ? "R&D" : "Sales" },
      });
      users.push(user.id);
    }
    eng = (await scim.createGroup("Eng", users.slice(0, 10))).id;
    ops = (await scim.createGroup("Ops", users.slice(10, 13))).id;
    const acme = h.scim("acme");
    for (let i = 0; i < 9; i++) embedUsers.push((await acme.createUser(`embed${i}@example.com`)).id);
    await acme.createGroup("Everyone", embedUsers);
    await h.waitForIdle();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it("provisions users, groups, attribute values and embed groups", async () => {
    expect(state().users).toHaveLength(16);
    expect(memberNames("Eng")).toEqual(users.slice(0, 10).map((_id, i) => name(i)));
    expect(memberNames("Ops")).toEqual([10, 11, 12].map(name));
    const everyone = state()
      .embedTenants.find((t) => t.name === "acme")
      ?.groups.find((g) => g.name === "Everyone");
    expect(everyone?.members).toHaveLength(9);
    expect(h.emulator.violations()).toEqual([]);
    const status = await h.admin().get("/status");
    expect(status.body).toMatchObject({ idle: true, deadLetters: 0 });
  });

  it("applies lifecycle, renames and membership changes, also a removal the platform refuses with noTarget", async () => {
    const scim = h.scim("okta");
    expect((await scim.patchUser(users[0]!, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    expect((await scim.deleteUser(users[1]!)).status).toBe(204);
    expect(
      (await scim.patchUser(users[2]!, [{ op: "replace", path: "displayName", value: "Two" }])).status,
    ).toBe(200);
    // Taken out on the platform behind the bridge's back, then at the source: the bridge's removal
    // finds no such member (400 noTarget), reads the group again and converges.
    h.emulator.drift({
      action: "removeGroupMember",
      groupId: platformGroup("Eng")!.id,
      userId: platformUser(3)!.id,
    });
    expect(
      (await scim.patchGroup(eng, [{ op: "remove", path: `members[value eq "${users[3]}"]` }])).status,
    ).toBeLessThan(300);
    expect(
      (
        await scim.patchGroup(ops, [
          { op: "replace", path: "displayName", value: "Operations" },
          { op: "add", path: "members", value: [{ value: users[13] }] },
        ])
      ).status,
    ).toBeLessThan(300);
    await h.waitForIdle();

    expect(platformUser(0)?.active).toBe(false);
    expect(platformUser(1)?.active).toBe(false); // onDelete: deactivate
    expect(platformUser(2)?.displayName).toBe("Two");
    // A deleted user leaves its groups (ARCHITECTURE.md, group names).
    expect(memberNames("Eng")).toEqual([0, 2, 4, 5, 6, 7, 8, 9].map(name));
    expect(platformGroup("Ops")).toBeUndefined();
    expect(memberNames("Operations")).toEqual([10, 11, 12, 13].map(name));
    expect(h.emulator.requests().some((r) => r.operation === "patchGroup" && r.status === 400)).toBe(true);
    expect(h.emulator.violations()).toEqual([]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  });

  it("a resync of the converged sources writes nothing, and a reconciliation finds no drift", async () => {
    const writes = h.emulator.counters().writes;
    for (const source of ["okta", "acme"]) {
      const res = await h.admin().post(`/sources/${source}/resync`, {});
      expect(res.status).toBe(202);
      await waitFor(async () => (await h.admin().get(`/resyncs/${res.body.id}`)).body.state === "succeeded", {
        what: "the resync to finish",
      });
    }
    await h.waitForIdle();
    expect(h.emulator.counters().writes).toBe(writes);

    // The user deleted at the source (deactivated, then forgotten) is owned by no source: an orphan.
    expect(await reconcile("okta")).toMatchObject({
      state: "succeeded",
      counts: { ...COUNTS_ZERO, orphans: 1 },
    });
    // Orphans are platform users no source owns, reported by every source's run.
    expect(await reconcile("acme")).toMatchObject({
      state: "succeeded",
      counts: { ...COUNTS_ZERO, orphans: 1 },
    });
    expect(h.emulator.counters().writes).toBe(writes);
    expect(h.emulator.violations()).toEqual([]);
  });
});
