import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const memberIds = (members: unknown[] | undefined) =>
  (members ?? []).map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort();

/**
 * "Mapping onto the platform", end to end: lost answers ("a user deleted at the source is
 * deprovisioned even when the answer to its create never came") and "who is right" (a change made
 * on the platform behind the bridge's back is put back by a resync from the admin API).
 */
describe("mapping rules end to end", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-mapping", {
      sources: {
        okta: { tokens: ["okta-token"], onDelete: "delete" },
        entra: { tokens: ["entra-token"] },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const [source, policy] of [
    ["okta", "delete"],
    ["entra", "deactivate"],
  ] as const) {
    it(`a user deleted while the answer to its create was lost is deprovisioned (onDelete: ${policy})`, async () => {
      const userName = `ghost-${source}@example.com`;
      h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createUser" } });
      const scim = h.scim(source);
      const user = await scim.createUser(userName);
      // The create is applied on the platform, its answer never reaches the bridge...
      await waitFor(() => h.platformUsers().get(userName), { what: "the ghost write" });
      expect(
        h.emulator
          .requests()
          .some((r) => r.fault === "ghost" && r.operation === "createUser" && r.status === 0),
      ).toBe(true);
      // ... and the source deletes the user before the bridge learnt the platform id.
      expect((await scim.deleteUser(user.id)).status).toBe(204);
      await h.waitForIdle();
      const left = h.emulator.state().users.filter((u) => u.userName === userName);
      if (policy === "delete") expect(left).toHaveLength(0);
      else expect(left.map((u) => u.active)).toEqual([false]);
    });
  }

  it("a group whose create answer was lost is created once, with its members", async () => {
    const scim = h.scim("okta");
    const ann = await scim.createUser("ann@example.com");
    await h.waitForIdle();
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createGroup" } });
    await scim.createGroup("Ghosted", [ann.id]);
    await h.waitForIdle();
    expect(h.emulator.requests().some((r) => r.fault === "ghost" && r.operation === "createGroup")).toBe(
      true,
    );
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Ghosted");
    expect(groups).toHaveLength(1);
    expect(memberIds(groups[0]?.members)).toEqual([h.platformUsers().get("ann@example.com")?.id]);
  });

  it("a resync from the admin API puts back changes made on the platform behind the bridge's back", async () => {
    const scim = h.scim("okta");
    const bea = await scim.createUser("bea@example.com", { displayName: "Bea" });
    const cal = await scim.createUser("cal@example.com");
    const team = await scim.createGroup("Team", [bea.id, cal.id]);
    await h.waitForIdle();
    const pBea = h.platformUsers().get("bea@example.com")?.id as string;
    const pCal = h.platformUsers().get("cal@example.com")?.id as string;
    const pTeam = h.emulator.state().groups.find((g) => g.displayName === "Team")?.id as string;

    // Behind the bridge's back: a rename and a deactivation through the platform's own API, and a
    // member removed.
    const res = await fetch(`${h.platformUrl}/api/scim/v2/Users/${pBea}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}`, "Content-Type": "application/scim+json" },
      body: JSON.stringify({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [
          { op: "replace", path: "displayName", value: "Renamed behind" },
          { op: "replace", path: "active", value: false },
        ],
      }),
    });
    expect(res.status).toBeLessThan(300);
    h.emulator.drift({ action: "removeGroupMember", groupId: pTeam, userId: pCal });
    expect(h.platformUsers().get("bea@example.com")).toMatchObject({
      displayName: "Renamed behind",
      active: false,
    });

    const op = await h.admin().post("/sources/okta/resync", { users: [bea.id], groups: [team.id] });
    expect(op.status).toBe(202);
    await waitFor(async () => (await h.admin().get(`/resyncs/${op.body.id}`)).body.state === "succeeded", {
      what: "the resync",
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("bea@example.com")).toMatchObject({ displayName: "Bea", active: true });
    expect(memberIds(h.emulator.state().groups.find((g) => g.id === pTeam)?.members)).toEqual(
      [pBea, pCal].sort(),
    );
  });
});
