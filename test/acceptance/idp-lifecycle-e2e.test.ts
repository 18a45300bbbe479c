/**
 * Acceptance, end to end: joiner-mover-leaver events as identity providers send them, checked on
 * the platform emulator: a UPN rename (Entra), a case-only userName change, a leaver re-hired
 * under the same userName, one person pushed by two sources, and a group renamed then deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-lifecycle");
});
afterAll(async () => {
  await h?.close();
});

type PlatformState = {
  users: Array<{ id: string; userName: string; active: boolean }>;
  groups: Array<{ id: string; displayName: string; members: string[] }>;
};
const state = () => h.emulator.state() as unknown as PlatformState;
const usersNamed = (userName: string) =>
  state().users.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());

describe("joiners, movers and leavers on the platform", () => {
  it("Entra UPN change: the platform user is renamed, not duplicated", async () => {
    const entra = h.scim("entra");
    const u = await entra.createUser("upn.old@example.com", { externalId: "aad-upn" });
    await h.waitForIdle();
    const platformId = usersNamed("upn.old@example.com")[0]?.id;
    expect(platformId).toBeTruthy();
    const res = await entra.patchUser(u.id, [
      { op: "Replace", path: "userName", value: "upn.new@example.com" },
    ]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(usersNamed("upn.old@example.com")).toEqual([]);
    expect(usersNamed("upn.new@example.com").map((x) => x.id)).toEqual([platformId]);
  });

  it("a case-only userName change reaches the platform as written", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("Case.User@example.com");
    await h.waitForIdle();
    await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: "case.user@example.com" }]);
    await h.waitForIdle();
    expect(usersNamed("case.user@example.com").map((x) => x.userName)).toEqual(["case.user@example.com"]);
  });

  it("a leaver deleted (onDelete: deactivate) and re-hired under the same userName is one active user", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("rehire@example.com");
    await h.waitForIdle();
    expect((await okta.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(usersNamed("rehire@example.com").map((x) => x.active)).toEqual([false]);
    const again = await okta.createUser("rehire@example.com");
    expect(again.id).not.toBe(u.id);
    await h.waitForIdle();
    expect(usersNamed("rehire@example.com").map((x) => x.active)).toEqual([true]);
  });

  it("one person pushed by two sources is one platform user, kept active while either source has it", async () => {
    await h.scim("okta").createUser("shared@example.com");
    const fromEntra = await h.scim("entra").createUser("shared@example.com");
    await h.waitForIdle();
    expect(usersNamed("shared@example.com")).toHaveLength(1);
    await h.scim("entra").deleteUser(fromEntra.id);
    await h.waitForIdle();
    expect(usersNamed("shared@example.com").map((x) => x.active)).toEqual([true]);
    const status = await h.admin().get("/status");
    expect(status.body.deadLetters).toBe(0);
  });

  it("a group renamed by PUT keeps its platform id and members; deleting it removes it", async () => {
    const okta = h.scim("okta");
    const member = await okta.createUser("grp.member@example.com");
    const g = await okta.createGroup("Team Before", [member.id]);
    await h.waitForIdle();
    const before = state().groups.find((x) => x.displayName.endsWith("Team Before"));
    expect(before?.members).toHaveLength(1);
    const put = await okta.put(`/Groups/${g.id}`, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      id: g.id,
      displayName: "Team After",
      members: [{ value: member.id, display: "grp.member@example.com" }],
    });
    expect(put.status).toBe(200);
    await h.waitForIdle();
    const after = state().groups.find((x) => x.displayName.endsWith("Team After"));
    expect(after?.id).toBe(before?.id);
    expect(after?.members).toEqual(before?.members);
    expect((await okta.deleteGroup(g.id)).status).toBe(204);
    await h.waitForIdle();
    expect(state().groups.find((x) => x.id === before?.id)).toBeUndefined();
    expect(h.emulator.violations()).toEqual([]);
  });

  it("Entra membership PATCHes are idempotent, and a deleted member leaves the group here and on the platform", async () => {
    const entra = h.scim("entra");
    const a = await entra.createUser("m.a@example.com");
    const b = await entra.createUser("m.b@example.com");
    const g = await entra.createGroup("Entra Members", [a.id]);
    const ops = [
      [{ op: "Add", path: "members", value: [{ value: a.id }] }], // already a member
      [{ op: "Remove", path: "members", value: [{ value: b.id }] }], // not a member
      [{ op: "Add", path: "members", value: [{ value: b.id }] }],
    ];
    for (const op of ops) expect([200, 204]).toContain((await entra.patchGroup(g.id, op)).status);
    await h.waitForIdle();
    const platform = () => state().groups.find((x) => x.displayName.endsWith("Entra Members"));
    expect(platform()?.members).toHaveLength(2);
    expect((await entra.deleteUser(b.id)).status).toBe(204);
    const here = await entra.get(`/Groups/${g.id}`);
    expect(here.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
    await h.waitForIdle();
    expect(platform()?.members).toEqual([usersNamed("m.a@example.com")[0]?.id]);
  });
});
