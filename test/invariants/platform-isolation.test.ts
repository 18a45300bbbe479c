import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

/**
 * Invariant 5 on the platform, and the group-name rules of "Mapping onto the platform": one
 * source cannot take over, deactivate or delete what another owns; an unowned platform group of
 * the (prefixed) name is adopted, one owned by another source is a visible conflict; a
 * deactivated user stays a member of its workspace groups while a deleted one leaves them.
 */
describe("isolation on the platform and group names (end to end)", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-isolation", {
      sources: {
        okta: { tokens: ["okta-token"], groupPrefix: "okta-" },
        entra: { tokens: ["entra-token"], onDelete: "delete" },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const groupNamed = (name: string) => h.emulator.state().groups.filter((g) => g.displayName === name);

  it("a second source pushing the same userName neither takes over, deactivates nor deletes the first's user", async () => {
    await h.scim("okta").createUser("shared@example.com", { displayName: "Okta's" });
    await h.waitForIdle();
    const owned = h.platformUsers().get("shared@example.com");
    expect(owned).toMatchObject({ active: true, displayName: "Okta's" });

    const entra = h.scim("entra");
    const intruder = await entra.createUser("Shared@Example.com", { displayName: "Entra's" });
    await h.waitForIdle();
    // The conflict is visible on the intruding entity's sync status in the admin API.
    const status = await h.admin().get(`/sources/entra/users/${intruder.id}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ lastError: { code: "ownership_conflict" } });

    // Deactivating, then deleting it at the second source leaves the first's user alone.
    expect(
      (await entra.patchUser(intruder.id, [{ op: "replace", path: "active", value: false }])).status,
    ).toBe(200);
    await h.waitForIdle();
    expect((await entra.deleteUser(intruder.id)).status).toBe(204);
    await h.waitForIdle();

    const users = h.emulator
      .state()
      .users.filter((u) => String(u.userName).toLowerCase() === "shared@example.com");
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ id: owned?.id, active: true, displayName: "Okta's" });
    expect(h.emulator.count("patchUser")).toBe(0);
    expect(h.emulator.count("deleteUser")).toBe(0);
    expect(h.emulator.count("bulkUsers")).toBe(0);
  });

  it("adopts an unowned platform group of the prefixed name; another source's claim on it is a visible conflict", async () => {
    const [seededId] = h.emulator.seed({ groups: [{ displayName: "okta-Eng", members: [] }] }).groups;
    const okta = h.scim("okta");
    const ada = await okta.createUser("ada@example.com");
    await okta.createGroup("Eng", [ada.id]);
    await h.waitForIdle();
    const eng = groupNamed("okta-Eng");
    expect(eng).toHaveLength(1);
    expect(eng[0]?.id).toBe(seededId);
    // (a create answered 409 and then an adoption is fine: what counts is one group, the same id)
    const adaId = h.platformUsers().get("ada@example.com")?.id;
    expect(eng[0]?.members.map((m) => (typeof m === "string" ? m : (m as { value: string }).value))).toEqual([
      adaId,
    ]);
    expect(groupNamed("Eng")).toHaveLength(0); // the prefix is applied

    // entra has no prefix: its group "okta-Eng" names the platform group okta owns.
    const entra = h.scim("entra");
    const eve = await entra.createUser("eve@example.com");
    const clash = await entra.createGroup("okta-Eng", [eve.id]);
    await h.waitForIdle();
    const status = await h.admin().get(`/sources/entra/groups/${clash.id}`);
    expect(status.body).toMatchObject({ lastError: { code: expect.stringMatching(/conflict/) } });
    const after = groupNamed("okta-Eng");
    expect(after).toHaveLength(1);
    expect(
      after[0]?.members.map((m) => (typeof m === "string" ? m : (m as { value: string }).value)),
    ).toEqual([adaId]);
    // Deleting it at entra (onDelete: delete) does not delete okta's group.
    expect((await entra.deleteGroup(clash.id)).status).toBe(204);
    await h.waitForIdle();
    expect(groupNamed("okta-Eng").map((g) => g.id)).toEqual([seededId]);
  });

  it("a deactivated user stays a member of its workspace groups; a deleted one leaves them", async () => {
    const okta = h.scim("okta");
    const kim = await okta.createUser("kim@example.com");
    const lee = await okta.createUser("lee@example.com");
    await okta.createGroup("Ops", [kim.id, lee.id]);
    await h.waitForIdle();
    const ids = () => {
      const users = h.platformUsers();
      return { kim: users.get("kim@example.com")?.id, lee: users.get("lee@example.com")?.id };
    };
    const members = () =>
      (groupNamed("okta-Ops")[0]?.members ?? []).map((m) =>
        typeof m === "string" ? m : (m as { value: string }).value,
      );
    const { kim: kimId, lee: leeId } = ids();
    expect(members().sort()).toEqual([kimId, leeId].sort());

    await okta.patchUser(kim.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(h.platformUsers().get("kim@example.com")?.active).toBe(false);
    expect(members().sort()).toEqual([kimId, leeId].sort());

    // okta's onDelete is the default (deactivate): the user stays on the platform, inactive,
    // and is no longer a member of the source's groups.
    expect((await okta.deleteUser(lee.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("lee@example.com")?.active).toBe(false);
    expect(members()).toEqual([kimId]);
  });
});

describe("a group cannot reach another source's users", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-isolation-members");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a member id of another source is refused or ignored, never put in the platform group", async () => {
    const victim = await h.scim("okta").createUser("victim@example.com");
    await h.waitForIdle();
    const victimPid = h.platformUsers().get("victim@example.com")?.id as string;
    const entra = h.scim("entra");
    const own = await entra.createUser("own@example.com");
    const res = await h.http
      .post("/scim/v2/entra/Groups")
      .set({ Authorization: "Bearer entra-token", "Content-Type": "application/scim+json" })
      .send({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: "Reach",
        members: [{ value: own.id }, { value: victim.id }],
      });
    if (res.status === 201) {
      const patched = await entra.patchGroup(res.body.id, [
        { op: "add", path: "members", value: [{ value: victim.id }] },
      ]);
      expect(patched.status).toBeLessThan(500);
    } else expect(res.status).toBeGreaterThanOrEqual(400);
    await h.waitForIdle();
    for (const group of h.emulator.state().groups) {
      const ids = group.members.map((m) => (typeof m === "string" ? m : (m as { value: string }).value));
      expect(ids).not.toContain(victimPid);
    }
  });
});

describe("the admin API keeps sources apart too", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-isolation-admin");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("an id of another source is unknown under this source: not shown, not resynced", async () => {
    const entraUser = await h.scim("entra").createUser("theirs@example.com");
    await h.waitForIdle();
    expect((await h.admin().get(`/sources/okta/users/${entraUser.id}`)).status).toBe(404);
    const pid = h.platformUsers().get("theirs@example.com")?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    const res = await h.admin().post("/sources/okta/resync", { users: [entraUser.id] });
    expect(res.status).toBe(202);
    const op = await waitFor(
      async () => {
        const r = await h.admin().get(`/resyncs/${res.body.id}`);
        return r.body.state === "succeeded" ? r.body : null;
      },
      { what: "the resync" },
    );
    expect(op).toMatchObject({ enqueued: 0, unknown: [`user/${entraUser.id}`] });
    await h.waitForIdle();
    expect(h.platformUsers().get("theirs@example.com")?.active).toBe(false); // okta's resync did not touch it
  });
});
