import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

/**
 * Okta `group.lifecycle.delete`: Okta sends no membership removals when a group is deleted, so the
 * deletion itself must take the group (and with it every member's access) away, and late
 * membership events of the deleted group must not bring it back.
 */
let t: HooksTestApp;
let n = 0;
const stamp = Date.now().toString(36);
function newOktaUser() {
  n++;
  return { id: `00u${n}gd${stamp}`, alternateId: `gd${n}.${stamp}@example.com`, displayName: `Gd ${n}` };
}
function newOktaGroup() {
  n++;
  return { id: `00g${n}gd${stamp}`, displayName: `Deleted ${n} ${stamp}` };
}
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

type User = ReturnType<typeof newOktaUser>;
type Group = ReturnType<typeof newOktaGroup>;
function member(name: OktaFixture, user: User, group: Group, published: number) {
  return oktaEvent(name, { user, group, published });
}
function deletion(group: Group, published: number) {
  return oktaEvent("group-lifecycle-delete", { group, published });
}

beforeAll(async () => {
  t = await createHooksTestApp("hooks-okta-group-delete");
});
afterAll(async () => {
  await t.close();
});

describe("Okta group deletion", () => {
  it("deletes the group linked to the Okta group; its members stay users, in no group", async () => {
    const [a, b] = [newOktaUser(), newOktaUser()];
    const group = newOktaGroup();
    await t.postOkta(
      oktaDelivery([
        member("group-user-membership-add", a, group, at(1)),
        member("group-user-membership-add", b, group, at(2)),
      ]),
    );
    const stored = await t.group({ externalId: group.id });
    expect(stored?.memberCount).toBe(2);
    const before = t.notified.length;

    const res = await t.postOkta(oktaDelivery([deletion(group, at(3))]));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, outcomes: { applied: 1 } });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.group({ displayName: group.displayName })).toBeNull();
    // Marked for sync (the platform group is deprovisioned by the sync).
    expect(t.notified.slice(before)).toContainEqual(
      expect.objectContaining({ kind: "group", id: stored?.resource.id }),
    );
    for (const user of [a, b]) {
      const record = await t.user({ externalId: user.id });
      expect(record?.resource.active).toBe(true);
      expect(record?.groups).toEqual([]);
    }
    expect(
      await t.counter({ hook: "okta", event_type: "group.lifecycle.delete", outcome: "applied" }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("a late membership add published before the deletion neither re-creates the group nor its user", async () => {
    const [a, late] = [newOktaUser(), newOktaUser()];
    const group = newOktaGroup();
    await t.postOkta(oktaDelivery([member("group-user-membership-add", a, group, at(10))]));
    await t.postOkta(oktaDelivery([deletion(group, at(12))]));

    const res = await t.postOkta(
      oktaDelivery([
        member("group-user-membership-add", late, group, at(11)),
        member("group-user-membership-add", a, group, at(11)),
      ]),
    );
    expect(res.body.outcomes).toEqual({ deleted: 2 });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.group({ displayName: group.displayName })).toBeNull();
    expect(await t.user({ externalId: late.id })).toBeNull();
    expect((await t.user({ externalId: a.id }))?.groups).toEqual([]);
  });

  it("a deletion that arrives before the group's membership events is remembered", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    const first = await t.postOkta(oktaDelivery([deletion(group, at(22))]));
    expect(first.body.outcomes).toEqual({ unknown_group: 1 });
    const late = await t.postOkta(oktaDelivery([member("group-user-membership-add", a, group, at(21))]));
    expect(late.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.user({ externalId: a.id })).toBeNull();
  });

  it("redelivery of a deletion is a duplicate, and a second deletion event changes nothing", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    await t.postOkta(oktaDelivery([member("group-user-membership-add", a, group, at(30))]));
    const event = deletion(group, at(31));
    expect((await t.postOkta(oktaDelivery([event]))).body.outcomes).toEqual({ applied: 1 });
    expect((await t.postOkta(oktaDelivery([event]))).body.outcomes).toEqual({ duplicate: 1 });
    expect((await t.postOkta(oktaDelivery([deletion(group, at(32))]))).body.outcomes).toEqual({
      unknown_group: 1,
    });
  });

  it("changes of the group after the deletion's time (a rename, a member deleted) do not keep it", async () => {
    // Okta never reuses a group id: a later change through another path is a change of a group Okta
    // no longer has. Deleting a member bumps the group's lastModified as a side effect.
    const [a, b] = [newOktaUser(), newOktaUser()];
    const group = newOktaGroup();
    await t.postOkta(
      oktaDelivery([
        member("group-user-membership-add", a, group, at(40)),
        member("group-user-membership-add", b, group, at(40)),
      ]),
    );
    const stored = await t.group({ externalId: group.id });
    // Now (later than every published time of this test): a SCIM rename, and b deleted over SCIM.
    await t.directory.updateGroup("okta", stored!.resource.id, (cur) => ({
      resource: {
        schemas: cur.resource.schemas,
        displayName: `${group.displayName} renamed`,
        externalId: group.id,
      },
    }));
    const bRecord = await t.user({ externalId: b.id });
    await t.directory.deleteUser("okta", bRecord!.resource.id);
    const res = await t.postOkta(oktaDelivery([deletion(group, at(41))]));
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect((await t.user({ externalId: a.id }))?.groups).toEqual([]);
  });

  it("a group created after the deletion's time is not deleted by it", async () => {
    const group = newOktaGroup();
    // Created now through another path with that Okta id (later than the event's published time).
    await t.directory.createGroup(
      "okta",
      {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: group.displayName,
        externalId: group.id,
      },
      [],
    );
    const res = await t.postOkta(oktaDelivery([deletion(group, at(45))]));
    expect(res.body.outcomes).toEqual({ stale: 1 });
    expect(await t.group({ externalId: group.id })).not.toBeNull();
  });

  it("deletes a group that membership events adopted by name (it has no externalId)", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    await t.directory.createGroup(
      "okta",
      { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: group.displayName },
      [],
    );
    await t.postOkta(oktaDelivery([member("group-user-membership-add", a, group, Date.now() + 1_000)]));
    const adopted = await t.group({ displayName: group.displayName });
    expect(adopted?.resource.externalId).toBeUndefined();
    expect(adopted?.memberCount).toBe(1);
    const res = await t.postOkta(oktaDelivery([deletion(group, Date.now() + 2_000)]));
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect(await t.group({ displayName: group.displayName })).toBeNull();
  });

  it("does not delete a group that only shares the name (another externalId, or none and never adopted)", async () => {
    const group = newOktaGroup();
    const other = { ...newOktaGroup(), displayName: group.displayName };
    await t.directory.createGroup(
      "okta",
      { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: group.displayName },
      [],
    );
    const res = await t.postOkta(oktaDelivery([deletion(group, at(50))]));
    expect(res.body.outcomes).toEqual({ unknown_group: 1 });
    expect(await t.group({ displayName: group.displayName })).not.toBeNull();
    const res2 = await t.postOkta(oktaDelivery([deletion(other, at(51))]));
    expect(res2.body.outcomes).toEqual({ unknown_group: 1 });
    expect(await t.group({ displayName: group.displayName })).not.toBeNull();
  });

  it("a failed deletion attempt (outcome FAILURE) changes nothing", async () => {
    const a = newOktaUser();
    const group = newOktaGroup();
    await t.postOkta(oktaDelivery([member("group-user-membership-add", a, group, at(60))]));
    const failed = { ...deletion(group, at(61)), outcome: { result: "FAILURE", reason: "denied" } };
    expect((await t.postOkta(oktaDelivery([failed]))).body.outcomes).toEqual({ not_success: 1 });
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(1);
  });
});
