import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

/**
 * Invariant 5 and the group-name rule for embed tenants: two sources share tenant "acme". A user
 * deactivated or deleted at one source leaves only the groups that source owns; an embed group of
 * the same name owned by the other source is a visible conflict, not taken over.
 */
describe("two sources in one embed tenant", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-embed-iso", {
      sources: {
        portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } },
        hr: { tokens: ["hr-token"], target: { embedTenant: "acme" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const groups = () => h.emulator.state().embedTenants.find((t) => t.name === "acme")?.groups ?? [];
  const members = (name: string) =>
    groups()
      .filter((g) => g.name === name)
      .map((g) => [...g.members].sort());

  it("a deactivation at one source leaves the other source's group alone", async () => {
    const p = await h.scim("portal").createUser("x@acme.example", { externalId: "ext-x" });
    const q = await h.scim("hr").createUser("x@acme.example", { externalId: "ext-x" });
    const other = await h.scim("hr").createUser("y@acme.example", { externalId: "ext-y" });
    await h.scim("portal").createGroup("Portal Viewers", [p.id]);
    await h.scim("hr").createGroup("HR Staff", [q.id, other.id]);
    await h.waitForIdle();
    expect(members("Portal Viewers")).toEqual([["ext-x"]]);
    expect(members("HR Staff")).toEqual([["ext-x", "ext-y"]]);

    await h.scim("portal").patchUser(p.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(members("Portal Viewers")).toEqual([[]]);
    expect(members("HR Staff")).toEqual([["ext-x", "ext-y"]]);

    expect((await h.scim("portal").deleteUser(p.id)).status).toBe(204);
    await h.waitForIdle();
    expect(members("HR Staff")).toEqual([["ext-x", "ext-y"]]);
  });

  it("an embed group of the same name owned by the other source is a visible conflict", async () => {
    const a = await h.scim("portal").createUser("a@acme.example", { externalId: "ext-a" });
    const b = await h.scim("hr").createUser("b@acme.example", { externalId: "ext-b" });
    await h.scim("portal").createGroup("Shared", [a.id]);
    await h.waitForIdle();
    const clash = await h.scim("hr").createGroup("Shared", [b.id]);
    await h.waitForIdle();
    expect(members("Shared")).toEqual([["ext-a"]]);
    const status = await h.admin().get(`/sources/hr/groups/${clash.id}`);
    expect(status.body).toMatchObject({ lastError: { code: expect.stringMatching(/conflict/) } });
    expect((await h.scim("hr").deleteGroup(clash.id)).status).toBe(204);
    await h.waitForIdle();
    expect(members("Shared")).toEqual([["ext-a"]]);
  });
});
