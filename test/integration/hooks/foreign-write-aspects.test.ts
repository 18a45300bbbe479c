/**
 * A write from another intake path (SCIM) orders an Okta event only if it changed what the event
 * touches (event-ordering.ts, seen values): a SCIM PATCH of a user's title does not hide a late,
 * older Okta deactivation, nor does adding another member hide a late, older membership removal.
 * One that changed the same thing (reactivated the user, re-added the member, renamed the user)
 * still makes the older event stale. The whole bridge: SCIM PATCHes go through the SCIM intake.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

const SECRET = "okta-hook-secret-foreign-aspects";
let h: TestBridge;
let n = 0;

beforeAll(async () => {
  h = await startTestBridge("hooks-foreign-aspects", {
    sources: { okta: { tokens: ["okta-token"], hooks: { okta: { secret: SECRET } } } },
  });
});
afterAll(async () => {
  await h?.close();
});

function newOktaUser() {
  n++;
  const tag = `${n}x${Date.now().toString(36)}`;
  return { id: `00ufa${tag}`, alternateId: `fa.${tag}@example.com`, displayName: `Foreign ${tag}` };
}
function newOktaGroup() {
  n++;
  const tag = `${n}x${Date.now().toString(36)}`;
  return { id: `00gfa${tag}`, displayName: `Foreign group ${tag}` };
}
type OktaUser = ReturnType<typeof newOktaUser>;
type OktaGroup = ReturnType<typeof newOktaGroup>;

// biome-ignore lint/suspicious/noExplicitAny: Okta events are free-form JSON
async function send(...events: any[]): Promise<Record<string, number>> {
  const res = await h.http
    .post("/hooks/okta/okta")
    .set({ Authorization: SECRET, "Content-Type": "application/json" })
    .send(JSON.stringify(oktaDelivery(events)));
  expect(res.status).toBe(200);
  return res.body.outcomes;
}
const userEvent = (
  name:
    | "user-lifecycle-create"
    | "user-lifecycle-activate"
    | "user-lifecycle-deactivate"
    | "user-account-update-profile",
  user: OktaUser,
  published: number,
) => oktaEvent(name, { user, published });
const memberEvent = (op: "add" | "remove", user: OktaUser, group: OktaGroup, published: number) =>
  oktaEvent(`group-user-membership-${op}`, { user, group, published });

async function scimUser(user: OktaUser) {
  const res = await h.scim("okta").get(`/Users?filter=${encodeURIComponent(`externalId eq "${user.id}"`)}`);
  expect(res.body.totalResults).toBe(1);
  return res.body.Resources[0] as { id: string; active: boolean; displayName?: string; title?: string };
}
async function scimGroup(group: OktaGroup) {
  const res = await h.scim("okta").get(`/Groups?filter=${encodeURIComponent(`externalId eq "${group.id}"`)}`);
  expect(res.body.totalResults).toBe(1);
  const found = res.body.Resources[0] as { id: string };
  const full = await h.scim("okta").get(`/Groups/${found.id}`);
  return {
    id: found.id,
    members: ((full.body.members ?? []) as Array<{ value: string }>).map((m) => m.value),
  };
}
async function patchUser(id: string, value: Record<string, unknown>): Promise<number> {
  const res = await h.scim("okta").patchUser(id, [{ op: "replace", value }]);
  expect(res.status).toBe(200);
  // The SCIM write's time as the bridge stored it (meta.lastModified).
  return Date.parse(res.body.meta.lastModified);
}

describe("a foreign write orders only the aspects it changed", () => {
  it("K: a SCIM PATCH of the title does not hide an older Okta deactivation (hook-created user)", async () => {
    const user = newOktaUser();
    const t0 = Date.now();
    expect(await send(userEvent("user-lifecycle-create", user, t0 - 60_000))).toEqual({ applied: 1 });
    // The create staged the user; the activation makes it active.
    expect(await send(userEvent("user-lifecycle-activate", user, t0 - 55_000))).toEqual({ applied: 1 });
    const u = await scimUser(user);
    const patchedAt = await patchUser(u.id, { title: "Engineer" });

    const late = await send(userEvent("user-lifecycle-deactivate", user, patchedAt - 20_000));
    expect(late).toEqual({ applied: 1 });
    const after = await scimUser(user);
    expect(after.active).toBe(false);
    expect(after.title).toBe("Engineer");
  });

  it("K: a SCIM PATCH of the displayName does not hide an older Okta deactivation (SCIM-created user)", async () => {
    const user = newOktaUser();
    const created = await h.scim("okta").createUser(user.alternateId, { externalId: user.id });
    // The hooks look at the user once (nothing to change), so they know its lifecycle: an
    // activation published after the SCIM create.
    const activatedAt = Date.now() + 1;
    expect(await send(userEvent("user-lifecycle-activate", user, activatedAt))).toEqual({ unchanged: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const patchedAt = await patchUser(created.id, { displayName: "Renamed Over SCIM" });

    // Published between the activation and the PATCH, delivered after the PATCH.
    const late = await send(userEvent("user-lifecycle-deactivate", user, patchedAt - 100));
    expect(late).toEqual({ applied: 1 });
    const after = await scimUser(user);
    expect(after.active).toBe(false);
    expect(after.displayName).toBe("Renamed Over SCIM");
  });

  it("M: a SCIM PATCH adding another member does not hide an older Okta membership removal", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    const t0 = Date.now();
    expect(await send(memberEvent("add", a, group, t0 - 60_000))).toEqual({ applied: 1 });
    const other = await h.scim("okta").createUser(`other.${group.id}@example.com`);
    const g = await scimGroup(group);
    const res = await h
      .scim("okta")
      .patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: other.id }] }]);
    expect([200, 204]).toContain(res.status);
    const patchedAt = Date.now();

    const late = await send(memberEvent("remove", a, group, patchedAt - 20_000));
    expect(late).toEqual({ applied: 1 });
    const aId = (await scimUser(a)).id;
    const members = (await scimGroup(group)).members;
    expect(members).toContain(other.id);
    expect(members).not.toContain(aId);
  });
});

describe("a foreign write that changed the same aspect still makes an older event stale", () => {
  it("a SCIM PATCH that reactivates the user: an older Okta deactivation is stale", async () => {
    const user = newOktaUser();
    const t0 = Date.now();
    await send(userEvent("user-lifecycle-create", user, t0 - 60_000));
    expect(await send(userEvent("user-lifecycle-activate", user, t0 - 55_000))).toEqual({ applied: 1 });
    expect(await send(userEvent("user-lifecycle-deactivate", user, t0 - 50_000))).toEqual({ applied: 1 });
    const u = await scimUser(user);
    const patchedAt = await patchUser(u.id, { active: true });

    const late = await send(userEvent("user-lifecycle-deactivate", user, patchedAt - 20_000));
    expect(late).toEqual({ stale: 1 });
    expect((await scimUser(user)).active).toBe(true);
  });

  it("a SCIM PATCH that re-adds the member: an older Okta membership removal is stale", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    const t0 = Date.now();
    await send(memberEvent("add", a, group, t0 - 60_000));
    expect(await send(memberEvent("remove", a, group, t0 - 50_000))).toEqual({ applied: 1 });
    const aId = (await scimUser(a)).id;
    const g = await scimGroup(group);
    expect(g.members).not.toContain(aId);
    const res = await h
      .scim("okta")
      .patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: aId }] }]);
    expect([200, 204]).toContain(res.status);
    const patchedAt = Date.now();

    const late = await send(memberEvent("remove", a, group, patchedAt - 20_000));
    expect(late).toEqual({ stale: 1 });
    expect((await scimGroup(group)).members).toContain(aId);
  });

  it("a SCIM PATCH of the displayName: an older Okta profile update is stale", async () => {
    const user = newOktaUser();
    const t0 = Date.now();
    await send(userEvent("user-lifecycle-create", user, t0 - 60_000));
    const u = await scimUser(user);
    const patchedAt = await patchUser(u.id, { displayName: "Named Over SCIM" });

    const late = await send(
      userEvent(
        "user-account-update-profile",
        { ...user, displayName: "Older Okta Name" },
        patchedAt - 20_000,
      ),
    );
    expect(late).toEqual({ stale: 1 });
    expect((await scimUser(user)).displayName).toBe("Named Over SCIM");
  });

  it("a profile-only SCIM PATCH does not block later lifecycle events once the hooks wrote again", async () => {
    const user = newOktaUser();
    const t0 = Date.now();
    await send(userEvent("user-lifecycle-create", user, t0 - 60_000));
    await send(userEvent("user-lifecycle-activate", user, t0 - 55_000));
    const u = await scimUser(user);
    const patchedAt = await patchUser(u.id, { title: "Manager" });
    // The hooks write the profile (folding the SCIM write), then an older deactivation arrives.
    expect(
      await send(
        userEvent("user-account-update-profile", { ...user, displayName: "Okta Newer" }, patchedAt + 1_000),
      ),
    ).toEqual({ applied: 1 });
    expect(await send(userEvent("user-lifecycle-deactivate", user, patchedAt - 20_000))).toEqual({
      applied: 1,
    });
    expect((await scimUser(user)).active).toBe(false);
  });
});
