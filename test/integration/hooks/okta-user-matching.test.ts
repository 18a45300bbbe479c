/**
 * Which directory user an Okta event is about, and what it may do to a user the bridge does not know
 * (docs/webhooks.md, Okta section):
 *
 * - Only `user.lifecycle.create`, an activation (`activate`, `unsuspend`, `reactivate`) and
 *   `group.user_membership.add` create a user. A profile update, a deactivation/suspension or a
 *   deletion of an unknown user changes nothing in the directory (outcome `unknown_user`); a
 *   deactivation is remembered so that an older create (or a membership add) arriving after it
 *   creates the user inactive.
 * - A user is matched by externalId (the Okta id), then by login; a login match counts only when the
 *   stored user has no externalId or this Okta id. A user of another externalId holding the login is a
 *   different person: the event is `rejected` and changes nothing. The same holds for a group matched
 *   by name.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookMetrics } from "../../../src/hooks/hook-metrics.js";
import { HookStateStore } from "../../../src/hooks/hook-state-store.js";
import { parseOktaDelivery } from "../../../src/hooks/okta-event.js";
import { OktaHookService } from "../../../src/hooks/okta-hook-service.js";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;
let n = 0;
const stamp = Date.now().toString(36);
/** A fresh Okta user per test, so tests do not share state. */
function newOktaUser() {
  n++;
  return {
    id: `00u${n}match${stamp}`,
    alternateId: `match${n}.${stamp}@example.com`,
    displayName: `Match ${n}`,
  };
}
type OktaUser = ReturnType<typeof newOktaUser>;
function newOktaGroup() {
  n++;
  return { id: `00g${n}match${stamp}`, displayName: `Matched group ${n} ${stamp}` };
}
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

function event(name: OktaFixture, user: OktaUser, published: number, extra = {}) {
  return oktaEvent(name, { user, published, ...extra });
}

/** A user another client (SCIM) created, with or without an externalId of its own. */
function scimUser(userName: string, externalId?: string) {
  return t.directory.createUser("okta", {
    schemas: [SCHEMA_USER],
    userName,
    ...(externalId ? { externalId } : {}),
    displayName: "Someone Else",
    active: true,
  });
}

beforeAll(async () => {
  t = await createHooksTestApp("hooks-okta-matching");
});
afterAll(async () => {
  await t.close();
});

describe("Okta events for a user the bridge does not know", () => {
  it("a profile update creates nothing and is counted as unknown_user", async () => {
    const user = newOktaUser();
    const before = t.notified.length;
    const res = await t.postOkta(oktaDelivery([event("user-account-update-profile", user, at(1))]));
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ unknown_user: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.user({ userName: user.alternateId })).toBeNull();
    expect(t.notified.length).toBe(before);
    expect(
      await t.counter({ hook: "okta", outcome: "unknown_user", event_type: "user.account.update_profile" }),
    ).toBe(1);
    // The create it was about still creates the user when it arrives (with the create's profile),
    // staged (inactive) as every create.
    const create = await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(0))]));
    expect(create.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      userName: user.alternateId,
      active: false,
    });
  });

  it("a deactivation or suspension creates nothing; an older create arriving after it creates the user inactive", async () => {
    for (const name of ["user-lifecycle-deactivate", "user-lifecycle-suspend"] as const) {
      const user = newOktaUser();
      const res = await t.postOkta(oktaDelivery([event(name, user, at(11))]));
      expect(res.body.outcomes, name).toEqual({ unknown_user: 1 });
      expect(await t.user({ externalId: user.id }), name).toBeNull();
      expect(await t.user({ userName: user.alternateId }), name).toBeNull();

      // An older activation is stale (it must not create the user active).
      const olderActivate = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, at(10))]));
      expect(olderActivate.body.outcomes, name).toEqual({ stale: 1 });
      expect(await t.user({ externalId: user.id }), name).toBeNull();

      const create = await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(9))]));
      expect(create.body.outcomes, name).toEqual({ applied: 1 });
      expect((await t.user({ externalId: user.id }))?.resource, name).toMatchObject({
        userName: user.alternateId,
        externalId: user.id,
        active: false,
      });
    }
    expect(
      await t.counter({ hook: "okta", outcome: "unknown_user", event_type: "user.lifecycle.deactivate" }),
    ).toBe(1);
    expect(
      await t.counter({ hook: "okta", outcome: "unknown_user", event_type: "user.lifecycle.suspend" }),
    ).toBe(1);
  });

  it("a membership add after a deactivation of the unknown user creates it inactive; a newer activation creates it active", async () => {
    const member = newOktaUser();
    const group = newOktaGroup();
    await t.postOkta(oktaDelivery([event("user-lifecycle-deactivate", member, at(20))]));
    const add = await t.postOkta(
      oktaDelivery([event("group-user-membership-add", member, at(21), { group })]),
    );
    expect(add.body.outcomes).toEqual({ applied: 1 });
    const u = await t.user({ externalId: member.id });
    expect(u?.resource.active).toBe(false);
    expect((await t.group({ externalId: group.id }))?.members?.map((m) => m.value)).toEqual([u!.resource.id]);

    const rehired = newOktaUser();
    await t.postOkta(oktaDelivery([event("user-lifecycle-suspend", rehired, at(22))]));
    const activate = await t.postOkta(oktaDelivery([event("user-lifecycle-unsuspend", rehired, at(23))]));
    expect(activate.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: rehired.id }))?.resource.active).toBe(true);
  });

  it("an activation (activate, unsuspend) creates the user, active", async () => {
    for (const name of ["user-lifecycle-activate", "user-lifecycle-unsuspend"] as const) {
      const user = newOktaUser();
      const res = await t.postOkta(oktaDelivery([event(name, user, at(30))]));
      expect(res.body.outcomes, name).toEqual({ applied: 1 });
      expect((await t.user({ externalId: user.id }))?.resource, name).toMatchObject({
        userName: user.alternateId,
        externalId: user.id,
        displayName: user.displayName,
        active: true,
      });
    }
  });

  it("a deletion creates nothing, and is remembered: a late create does not bring the user in", async () => {
    const user = newOktaUser();
    const res = await t.postOkta(oktaDelivery([event("user-lifecycle-delete-initiated", user, at(41))]));
    expect(res.body.outcomes).toEqual({ unknown_user: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
    const late = await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(40))]));
    expect(late.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
  });
});

describe("a login held by a user of another externalId is a different person", () => {
  const kinds: Array<[OktaFixture, string]> = [
    ["user-lifecycle-create", "create"],
    ["user-account-update-profile", "profile update"],
    ["user-lifecycle-activate", "activation"],
    ["user-lifecycle-deactivate", "deactivation"],
    ["user-lifecycle-suspend", "suspension"],
    ["user-lifecycle-delete-initiated", "deletion"],
    ["group-user-membership-add", "membership add"],
    ["group-user-membership-remove", "membership remove"],
  ];

  it("every user event is rejected and changes nothing, whatever the case of the login", async () => {
    for (const [i, [name, what]] of kinds.entries()) {
      const login = `p.x${i}.${stamp}@example.com`;
      const other = await scimUser(login, `00uOLD${i}${stamp}`);
      const group = newOktaGroup();
      if (name === "group-user-membership-remove") {
        // The other person is a member of the group the event names.
        await t.directory.createGroup(
          "okta",
          { schemas: [SCHEMA_GROUP], displayName: group.displayName, externalId: group.id },
          [other.resource.id],
        );
      }
      const before = await t.directory.getUser("okta", other.resource.id);
      const groupBefore = await t.group({ externalId: group.id });
      const newcomer = {
        id: `00uNEW${i}${stamp}`,
        alternateId: login.toUpperCase(),
        displayName: "New Person",
      };
      const res = await t.postOkta(oktaDelivery([event(name, newcomer, Date.now() + 1_000, { group })]));
      expect(res.status, what).toBe(200);
      expect(res.body.outcomes, what).toEqual({ rejected: 1 });
      const after = await t.directory.getUser("okta", other.resource.id);
      expect(after, what).toEqual(before);
      expect(after?.resource, what).toMatchObject({
        userName: login,
        externalId: `00uOLD${i}${stamp}`,
        active: true,
      });
      expect(await t.user({ externalId: newcomer.id }), what).toBeNull();
      expect(await t.group({ externalId: group.id }), what).toEqual(groupBefore);
    }
    expect(
      await t.counter({ hook: "okta", outcome: "rejected", event_type: "user.lifecycle.delete.initiated" }),
    ).toBe(1);
  });

  it("create, deactivate and delete of the newcomer in one delivery leave the other person as they were", async () => {
    const login = `p.x.${stamp}@example.com`;
    const other = await scimUser(login, `00uOLD${stamp}`);
    const newcomer = { id: `00uNEW${stamp}`, alternateId: login, displayName: "Renamed Into" };
    const res = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", newcomer, Date.now() + 1_000),
        event("user-lifecycle-deactivate", newcomer, Date.now() + 2_000),
        event("user-lifecycle-delete-initiated", newcomer, Date.now() + 3_000),
      ]),
    );
    expect(res.body.outcomes).toEqual({ rejected: 3 });
    const after = await t.directory.getUser("okta", other.resource.id);
    expect(after?.resource).toMatchObject({
      userName: login,
      externalId: `00uOLD${stamp}`,
      displayName: "Someone Else",
      active: true,
    });
    expect(after?.meta.version).toBe(other.meta.version);
  });

  it("the rejection is logged at warn without the login or the Okta id", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const service = new OktaHookService({
      directory: t.directory,
      state: new HookStateStore(t.redis, t.prefix),
      metrics: new HookMetrics(new Registry()),
      logger: pino({ level: "warn" }, sink),
    });
    const login = `p.log.${stamp}@example.com`;
    await scimUser(login, `00uOLDLOG${stamp}`);
    const newcomer = { id: `00uNEWLOG${stamp}`, alternateId: login, displayName: "Logged Person" };
    const summary = await service.handleDelivery(
      "okta",
      parseOktaDelivery(oktaDelivery([event("user-lifecycle-create", newcomer, Date.now() + 1_000)])),
    );
    expect(summary.outcomes).toEqual({ rejected: 1 });
    const warned = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0].msg).toBe("okta event rejected");
    const text = JSON.stringify(warned[0]).toLowerCase();
    for (const personal of [login, newcomer.id, `00uOLDLOG${stamp}`, newcomer.displayName]) {
      expect(text).not.toContain(personal.toLowerCase());
    }
  });

  it("a group of another externalId holding the group's name is a different group", async () => {
    const member = newOktaUser();
    await t.postOkta(oktaDelivery([event("user-lifecycle-create", member, at(80))]));
    const name = `Held group ${stamp}`;
    const held = await t.directory.createGroup(
      "okta",
      { schemas: [SCHEMA_GROUP], displayName: name, externalId: `entra-${stamp}` },
      [],
    );
    const group = { id: `00gNEW${stamp}`, displayName: name };
    const res = await t.postOkta(
      oktaDelivery([event("group-user-membership-add", member, Date.now() + 1_000, { group })]),
    );
    expect(res.body.outcomes).toEqual({ rejected: 1 });
    const after = await t.directory.getGroup("okta", held.resource.id, { withMembers: true });
    expect(after?.members).toEqual([]);
    expect(after?.meta.version).toBe(held.meta.version);
  });
});

describe("a user another client created without an externalId is adopted by its login", () => {
  it("create and profile update give it the Okta id and refresh it", async () => {
    for (const name of ["user-lifecycle-create", "user-account-update-profile"] as const) {
      const user = newOktaUser();
      const scim = await scimUser(user.alternateId.toUpperCase());
      const res = await t.postOkta(oktaDelivery([event(name, user, Date.now() + 1_000)]));
      expect(res.body.outcomes, name).toEqual({ applied: 1 });
      expect((await t.directory.getUser("okta", scim.resource.id))?.resource, name).toMatchObject({
        userName: user.alternateId,
        externalId: user.id,
        displayName: user.displayName,
      });
    }
  });

  it("deactivation, membership add and deletion apply to it", async () => {
    const user = newOktaUser();
    const group = newOktaGroup();
    const scim = await scimUser(user.alternateId);
    const off = await t.postOkta(
      oktaDelivery([event("user-lifecycle-deactivate", user, Date.now() + 1_000)]),
    );
    expect(off.body.outcomes).toEqual({ applied: 1 });
    expect((await t.directory.getUser("okta", scim.resource.id))?.resource.active).toBe(false);

    const add = await t.postOkta(
      oktaDelivery([event("group-user-membership-add", user, Date.now() + 2_000, { group })]),
    );
    expect(add.body.outcomes).toEqual({ applied: 1 });
    expect((await t.group({ externalId: group.id }))?.members?.map((m) => m.value)).toEqual([
      scim.resource.id,
    ]);

    const del = await t.postOkta(
      oktaDelivery([event("user-lifecycle-delete-initiated", user, Date.now() + 3_000)]),
    );
    expect(del.body.outcomes).toEqual({ applied: 1 });
    expect(await t.directory.getUser("okta", scim.resource.id)).toBeNull();
  });

  it("a group another client created without an externalId is matched by its name", async () => {
    const user = newOktaUser();
    const name = `Adopted group ${stamp}`;
    const scimGroup = await t.directory.createGroup(
      "okta",
      { schemas: [SCHEMA_GROUP], displayName: name },
      [],
    );
    const res = await t.postOkta(
      oktaDelivery([
        event("group-user-membership-add", user, Date.now() + 1_000, {
          group: { id: `00gADOPT${stamp}`, displayName: name },
        }),
      ]),
    );
    expect(res.body.outcomes).toEqual({ applied: 1 });
    const u = await t.user({ externalId: user.id });
    const g = await t.directory.getGroup("okta", scimGroup.resource.id, { withMembers: true });
    expect(g?.members?.map((m) => m.value)).toEqual([u!.resource.id]);
  });
});
