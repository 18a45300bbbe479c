import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, OKTA_SECRET, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;
let n = 0;
/** A fresh Okta user per test, so tests do not share state. */
function newOktaUser() {
  n++;
  return {
    id: `00u${n}test${Date.now().toString(36)}`,
    alternateId: `user${n}.${Date.now()}@example.com`,
    displayName: `User ${n}`,
  };
}
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

function event(name: OktaFixture, user: ReturnType<typeof newOktaUser>, published: number, extra = {}) {
  return oktaEvent(name, { user, published, ...extra });
}

beforeAll(async () => {
  t = await createHooksTestApp("hooks-okta");
});
afterAll(async () => {
  await t.close();
});

describe("Okta Event Hook verification and authentication", () => {
  it("answers the one-time verification challenge", async () => {
    const res = await t.request
      .get("/hooks/okta/okta")
      .set("Authorization", OKTA_SECRET)
      .set("X-Okta-Verification-Challenge", "Dbo-Tk1Dp7lJyTDCGY9HiqrHlGG7yqV6Ry8RSy8Zb7E");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verification: "Dbo-Tk1Dp7lJyTDCGY9HiqrHlGG7yqV6Ry8RSy8Zb7E" });
  });

  it("requires the secret for the verification too, and the challenge header", async () => {
    const wrong = await t.request
      .get("/hooks/okta/okta")
      .set("Authorization", "nope")
      .set("X-Okta-Verification-Challenge", "abc");
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("unauthorized");
    const missing = await t.request.get("/hooks/okta/okta").set("Authorization", OKTA_SECRET);
    expect(missing.status).toBe(400);
  });

  it("reads the secret from the header the admin chose", async () => {
    const ok = await t.request
      .get("/hooks/custom/okta")
      .set("X-Hook-Key", OKTA_SECRET)
      .set("X-Okta-Verification-Challenge", "c1");
    expect(ok.body).toEqual({ verification: "c1" });
    const viaAuthorization = await t.request
      .get("/hooks/custom/okta")
      .set("Authorization", OKTA_SECRET)
      .set("X-Okta-Verification-Challenge", "c1");
    expect(viaAuthorization.status).toBe(401);
  });

  it("answers 404 for an unknown source or a source without that hook", async () => {
    for (const path of [
      "/hooks/nope/okta",
      "/hooks/plain/okta",
      "/hooks/custom/events",
      "/hooks/__proto__/okta",
    ]) {
      const res = await t.request.post(path).set("Authorization", OKTA_SECRET).send({});
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("answers 405 for other methods", async () => {
    const res = await t.request.put("/hooks/okta/okta").set("Authorization", OKTA_SECRET).send({});
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe("method_not_allowed");
  });

  it("refuses a delivery without the secret and stores nothing", async () => {
    const user = newOktaUser();
    const res = await t.request
      .post("/hooks/okta/okta")
      .set("Authorization", `Bearer ${OKTA_SECRET}`)
      .send(oktaDelivery([event("user-lifecycle-create", user, at(1))]));
    expect(res.status).toBe(401);
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("refuses oversize bodies (413) and bodies that are not JSON (400)", async () => {
    const big = oktaDelivery([{ ...oktaEvent("user-lifecycle-create"), padding: "x".repeat(70 * 1024) }]);
    const res = await t.postOkta(big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    const bad = await t.request.post("/hooks/okta/okta").set("Authorization", OKTA_SECRET).send("{not json");
    expect(bad.status).toBe(400);
  });
});

describe("Okta user lifecycle and group membership events", () => {
  it("creates, suspends, unsuspends, deactivates, activates, renames and deletes a user", async () => {
    const user = newOktaUser();
    const create = await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(1))]));
    expect(create.status).toBe(200);
    const created = await t.user({ externalId: user.id });
    // A create says nothing of the status: the user is staged (inactive) until an activation.
    expect(created?.resource).toMatchObject({
      userName: user.alternateId,
      externalId: user.id,
      displayName: user.displayName,
      active: false,
    });
    expect(t.notified).toContainEqual({ source: "okta", kind: "user", id: created!.resource.id });

    const steps: Array<[OktaFixture, boolean]> = [
      ["user-lifecycle-suspend", false],
      ["user-lifecycle-unsuspend", true],
      ["user-lifecycle-deactivate", false],
      ["user-lifecycle-activate", true],
    ];
    for (const [i, [name, active]] of steps.entries()) {
      expect((await t.postOkta(oktaDelivery([event(name, user, at(2 + i))]))).status).toBe(200);
      expect((await t.user({ externalId: user.id }))?.resource.active, name).toBe(active);
    }

    const renamed = { ...user, alternateId: `renamed.${user.alternateId}`, displayName: "Renamed User" };
    await t.postOkta(oktaDelivery([event("user-account-update-profile", renamed, at(10))]));
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      userName: renamed.alternateId,
      displayName: "Renamed User",
    });

    await t.postOkta(oktaDelivery([event("user-lifecycle-delete-initiated", renamed, at(11))]));
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.directory.getUser("okta", created!.resource.id)).toBeNull();
  });

  it("matches a user that another path created by login, and gives it the Okta id", async () => {
    const user = newOktaUser();
    const scim = await t.directory.createUser("okta", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: user.alternateId.toUpperCase(),
      active: true,
    });
    await t.postOkta(oktaDelivery([event("user-lifecycle-deactivate", user, Date.now() + 1000)]));
    const after = await t.directory.getUser("okta", scim.resource.id);
    expect(after?.resource.active).toBe(false);
  });

  it("rejects one event that cannot apply (a login another user holds) and applies the rest", async () => {
    const holder = newOktaUser();
    const user = newOktaUser();
    await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", holder, at(12)),
        event("user-lifecycle-create", user, at(12)),
        event("user-lifecycle-activate", user, at(12.5)),
      ]),
    );
    const res = await t.postOkta(
      oktaDelivery([
        event("user-account-update-profile", { ...user, alternateId: holder.alternateId }, at(13)),
        event("user-lifecycle-suspend", user, at(14)),
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ rejected: 1, applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      userName: user.alternateId,
      active: false,
    });
  });

  it("adds and removes group members, creating the group and the user when unknown", async () => {
    const user = newOktaUser();
    const group = { id: `00g${Date.now().toString(36)}`, displayName: `Analysts ${Date.now()}` };
    await t.postOkta(oktaDelivery([event("group-user-membership-add", user, at(20), { group })]));
    const g = await t.group({ externalId: group.id });
    const u = await t.user({ externalId: user.id });
    expect(g?.resource.displayName).toBe(group.displayName);
    expect(g?.members?.map((m) => m.value)).toEqual([u!.resource.id]);
    expect(u?.resource.active).toBe(true);

    await t.postOkta(oktaDelivery([event("group-user-membership-remove", user, at(21), { group })]));
    expect((await t.group({ externalId: group.id }))?.members).toEqual([]);
    expect(await t.user({ externalId: user.id })).not.toBeNull();
  });

  it("tolerates preview deliveries, unknown event types and failed outcomes, and counts them", async () => {
    const before = t.notified.length;
    for (const name of ["preview", "unknown-event-type", "failed-outcome"] as const) {
      const res = await t.postOkta(oktaDelivery([oktaEvent(name)]));
      expect(res.status, name).toBe(200);
    }
    expect(t.notified.length).toBe(before);
    expect(await t.counter({ hook: "okta", outcome: "unknown_type", event_type: "user.session.start" })).toBe(
      1,
    );
    expect(await t.counter({ hook: "okta", outcome: "no_target" })).toBe(1);
    expect(await t.counter({ hook: "okta", outcome: "not_success" })).toBe(1);
  });
});

describe("Okta at-least-once, out-of-order delivery", () => {
  it("applies an event once, even when it is delivered again after the user was deleted elsewhere", async () => {
    const user = newOktaUser();
    const create = event("user-lifecycle-create", user, at(30));
    await t.postOkta(oktaDelivery([create]));
    const first = await t.user({ externalId: user.id });
    await t.directory.deleteUser("okta", first!.resource.id);

    const again = await t.postOkta(oktaDelivery([create, create]));
    expect(again.status).toBe(200);
    expect(again.body.outcomes).toEqual({ duplicate: 2 });
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("applies every event of a batch although the first write is stamped later than the rest", async () => {
    const user = newOktaUser();
    const res = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", user, at(40)),
        event("user-lifecycle-activate", user, at(40.02)),
        event("user-lifecycle-deactivate", user, at(40.05)),
      ]),
    );
    expect(res.body.outcomes).toEqual({ applied: 3 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
  });

  it("does not let an older event undo a newer one", async () => {
    const user = newOktaUser();
    await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(50))]));
    await t.postOkta(oktaDelivery([event("user-lifecycle-deactivate", user, at(52))]));
    const late = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, at(51))]));
    expect(late.body.outcomes).toEqual({ stale: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
    // A profile update is independent of the lifecycle: an older deactivation still applies after it.
    await t.postOkta(oktaDelivery([event("user-account-update-profile", user, at(60))]));
    await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, at(55))]));
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);
  });

  it("converges when the deactivation arrives before the create", async () => {
    const user = newOktaUser();
    await t.postOkta(oktaDelivery([event("user-lifecycle-deactivate", user, at(71))]));
    await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(70))]));
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      active: false,
      userName: user.alternateId,
    });
  });

  it("ignores an event older than a change made through another intake path", async () => {
    const user = newOktaUser();
    await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", user, at(80)),
        event("user-lifecycle-activate", user, at(80.5)),
      ]),
    );
    const record = await t.user({ externalId: user.id });
    // A SCIM write now (later than every published time of this test).
    await t.directory.updateUser("okta", record!.resource.id, (cur) => ({ ...cur.resource, active: false }));
    const late = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, at(81))]));
    expect(late.body.outcomes).toEqual({ stale: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
    const newer = await t.postOkta(
      oktaDelivery([event("user-lifecycle-activate", user, Date.now() + 5_000)]),
    );
    expect(newer.body.outcomes).toEqual({ applied: 1 });
  });

  it("does not bring a deleted user back with a late event, but a newer create of the login is a new hire", async () => {
    const user = newOktaUser();
    await t.postOkta(oktaDelivery([event("user-lifecycle-create", user, at(90))]));
    await t.postOkta(oktaDelivery([event("user-lifecycle-delete-initiated", user, at(93))]));
    const lateActivate = await t.postOkta(oktaDelivery([event("user-lifecycle-activate", user, at(91))]));
    const lateMember = await t.postOkta(
      oktaDelivery([event("group-user-membership-add", user, at(92), { group: { id: `00gdel${n}` } })]),
    );
    expect(lateActivate.body.outcomes).toEqual({ stale: 1 });
    expect(lateMember.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.user({ userName: user.alternateId })).toBeNull();

    const rehire = { ...user, id: `${user.id}b` };
    await t.postOkta(oktaDelivery([event("user-lifecycle-create", rehire, at(100))]));
    expect((await t.user({ userName: user.alternateId }))?.resource.externalId).toBe(rehire.id);
  });

  it("does not take a deletion's own group changes for a newer change by another path", async () => {
    const leaver = newOktaUser();
    const joiner = newOktaUser();
    const group = { id: `00gdl${Date.now().toString(36)}`, displayName: `Offboarding ${Date.now()}` };
    await t.postOkta(oktaDelivery([event("group-user-membership-add", leaver, at(120), { group })]));
    // One batch: the leaver is deleted (which takes it out of the group), then the joiner is added.
    const res = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-delete-initiated", leaver, at(121)),
        event("group-user-membership-add", joiner, at(122), { group }),
      ]),
    );
    expect(res.body.outcomes).toEqual({ applied: 2 });
    const g = await t.group({ externalId: group.id });
    const j = await t.user({ externalId: joiner.id });
    expect(g?.members?.map((m) => m.value)).toEqual([j!.resource.id]);
  });

  it("does not re-add a member when the remove arrives before the add", async () => {
    const user = newOktaUser();
    const group = { id: `00gro${Date.now().toString(36)}`, displayName: `Reordered ${Date.now()}` };
    await t.postOkta(oktaDelivery([event("group-user-membership-add", newOktaUser(), at(110), { group })]));
    await t.postOkta(oktaDelivery([event("group-user-membership-remove", user, at(112), { group })]));
    await t.postOkta(oktaDelivery([event("group-user-membership-add", user, at(111), { group })]));
    const g = await t.group({ externalId: group.id });
    const u = await t.user({ externalId: user.id });
    expect(g?.memberCount).toBe(1);
    expect(g?.members?.map((m) => m.value)).not.toContain(u?.resource.id);
  });
});

describe("Okta logins get the userName hygiene of SCIM writes", () => {
  it("a login with surrounding whitespace is stored trimmed; one with a control character is rejected", async () => {
    const spaced = newOktaUser();
    const res = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", { ...spaced, alternateId: ` ${spaced.alternateId} ` }, at(200)),
      ]),
    );
    expect(res.status).toBe(200);
    expect((await t.user({ externalId: spaced.id }))?.resource.userName).toBe(spaced.alternateId);

    const bad = newOktaUser();
    const rejected = await t.postOkta(
      oktaDelivery([
        event("user-lifecycle-create", { ...bad, alternateId: `${bad.alternateId}\u0000` }, at(201)),
      ]),
    );
    expect(rejected.status).toBe(200);
    expect(rejected.body.outcomes).toEqual({ rejected: 1 });
    expect(await t.user({ externalId: bad.id })).toBeNull();
  });
});
