/**
 * "An event whose published time is older than the entity's last change, from any intake path, is
 * ignored": a user deleted through SCIM (or a signed event) is not brought back by a late Okta
 * event published before the deletion, while one published after it is a re-hire.
 * (The directory calls below are exactly what DELETE /scim/v2/<source>/Users/<id> makes.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deletedUserKeys, deletionBase } from "../../../src/directory/directory-keys.js";
import { SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, OKTA_SECRET, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;
let n = 0;
function newOktaUser() {
  n++;
  return {
    id: `00u${n}del${Date.now().toString(36)}`,
    alternateId: `deleted${n}.${Date.now()}@example.com`,
    displayName: `Deleted ${n}`,
  };
}
type OktaUser = ReturnType<typeof newOktaUser>;

function event(name: OktaFixture, user: OktaUser, published: number, extra = {}) {
  return oktaEvent(name, { user, published, ...extra });
}

/** A user as a SCIM POST stores it (Okta's SCIM app sends the Okta id as externalId). */
async function scimCreate(user: OktaUser, source = "okta", withExternalId = true) {
  return t.directory.createUser(source, {
    schemas: [SCHEMA_USER],
    userName: user.alternateId,
    ...(withExternalId ? { externalId: user.id } : {}),
    displayName: user.displayName,
    active: true,
  });
}

/** What DELETE /scim/v2/<source>/Users/<id> does; returns the time just before it. */
async function scimDelete(id: string, source = "okta"): Promise<number> {
  const before = Date.now();
  await t.directory.deleteUser(source, id);
  return before;
}

beforeAll(async () => {
  t = await createHooksTestApp("hooks-delete-any-path");
});
afterAll(async () => {
  await t.close();
});

describe("a deletion through another intake path is the user's last change for Okta events", () => {
  it("a late activate, profile update or membership add published before a SCIM delete is ignored", async () => {
    const user = newOktaUser();
    const created = await scimCreate(user);
    const deletedAt = await scimDelete(created.resource.id);
    const group = { id: `00gdel${n}${Date.now().toString(36)}`, displayName: `Late group ${n}` };

    for (const late of [
      event("user-lifecycle-activate", user, deletedAt - 2_000),
      event("user-account-update-profile", user, deletedAt - 1_000),
      event("user-lifecycle-create", user, deletedAt - 500),
      event("group-user-membership-add", user, deletedAt - 100, { group }),
    ]) {
      const res = await t.postOkta(oktaDelivery([late]));
      expect(res.status, late.eventType).toBe(200);
      expect(res.body.outcomes, late.eventType).toEqual({ deleted: 1 });
    }
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.user({ userName: user.alternateId })).toBeNull();
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.counter({ hook: "okta", outcome: "deleted" })).toBeGreaterThanOrEqual(4);
  });

  it("an event published after the SCIM delete creates the user again (a re-hire)", async () => {
    const user = newOktaUser();
    const created = await scimCreate(user);
    await scimDelete(created.resource.id);
    const res = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, Date.now() + 1_000)]));
    expect(res.body.outcomes).toEqual({ applied: 1 });
    const again = await t.user({ externalId: user.id });
    expect(again?.resource).toMatchObject({ userName: user.alternateId, active: true });
    expect(again?.resource.id).not.toBe(created.resource.id);
  });

  it("a user SCIM created without the Okta id is remembered by its login", async () => {
    const user = newOktaUser();
    const created = await scimCreate(user, "okta", false);
    const deletedAt = await scimDelete(created.resource.id);
    const renamedCase = { ...user, alternateId: ` ${user.alternateId.toUpperCase()} ` };
    const res = await t.postOkta(oktaDelivery([event("user-lifecycle-create", renamedCase, deletedAt - 1)]));
    expect(res.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.user({ userName: user.alternateId })).toBeNull();
  });

  it("a user.deleted signed event counts as well", async () => {
    const user = newOktaUser();
    await scimCreate(user);
    const before = Date.now();
    const res = await t.postEvents({ type: "user.deleted", data: { externalId: user.id } });
    expect(res.status).toBe(200);
    const late = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, before - 1)]));
    expect(late.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("a SCIM PUT/PATCH after the hooks' last write is the last change too", async () => {
    const user = newOktaUser();
    await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", user, Date.now() - 60_000),
        event("user-lifecycle-activate", user, Date.now() - 59_000),
      ]),
    );
    const record = await t.user({ externalId: user.id });
    const patchedAt = Date.now();
    await t.directory.replaceUser("okta", record!.resource.id, {
      ...record!.resource,
      displayName: "Set by SCIM",
      active: false,
    });
    const late = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-activate", user, patchedAt - 1_000),
        event("user-account-update-profile", { ...user, displayName: "Late" }, patchedAt - 1_000),
      ]),
    );
    expect(late.body.outcomes).toEqual({ stale: 2 });
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      displayName: "Set by SCIM",
      active: false,
    });
  });

  it("is per source: a delete in one source does not hold back the same user's events in another", async () => {
    const user = newOktaUser();
    const created = await scimCreate(user, "okta");
    const deletedAt = await scimDelete(created.resource.id, "okta");
    const res = await t.request
      .post("/hooks/custom/okta")
      .set("X-Hook-Key", OKTA_SECRET)
      .set("Content-Type", "application/json")
      .send(JSON.stringify(oktaDelivery([event("user-lifecycle-create", user, deletedAt - 1_000)])));
    expect(res.body.outcomes).toEqual({ applied: 1 });
    // Created (staged, as every create) in the other source.
    expect((await t.user({ externalId: user.id }, "custom"))?.resource).toMatchObject({
      userName: user.alternateId,
      active: false,
    });
    expect(await t.user({ externalId: user.id }, "okta")).toBeNull();
  });

  it("the record is bounded: it expires, and holds no externalId or userName in clear", async () => {
    const user = newOktaUser();
    const created = await scimCreate(user);
    await scimDelete(created.resource.id);
    const keys = deletedUserKeys(t.prefix, "okta", {
      externalId: user.id,
      userName: user.alternateId,
    });
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(key).not.toContain(user.id);
      expect(key.toLowerCase()).not.toContain(user.alternateId.toLowerCase());
      const ttl = await t.redis.ttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(7 * 24 * 3600);
    }
    // A group's delete records nothing of the kind.
    const records = () => t.redis.keys(`${deletionBase(t.prefix, "okta")}:*`);
    const before = (await records()).length;
    const g = await t.directory.createGroup("okta", { schemas: [], displayName: `G ${user.id}` }, []);
    await t.directory.deleteGroup("okta", g.resource.id);
    expect((await records()).length).toBe(before);
  });
});
