/**
 * Acceptance probes (round i) of the webhook intake with real senders' traffic: Okta Event Hooks
 * (System Log events in `com.okta.event_hook` deliveries: targets `{id, type, alternateId,
 * displayName}`, `outcome.result`, `debugContext.debugData`; batches out of `published` order,
 * redelivered `uuid`s) and Standard Webhooks signed events. What an identity admin expects: nobody
 * wrongly left in (a staged pre-hire never gets an active platform account), nobody wrongly locked
 * out, a group renamed in Okta renamed on the platform, bad deliveries refused clearly, retries
 * idempotent. Most probes run against the hooks intake (real Redis, a clock of its own); those
 * whose effect an admin sees on the platform run the whole bridge and the platform emulator.
 * Earlier rounds: test/acceptance/hook-probes-e.test.ts, test/e2e/hooks/hook-probes.test.ts.
 */
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import {
  EVENTS_SECRET,
  type HooksTestApp,
  OKTA_SECRET,
  createHooksTestApp,
} from "../integration/hooks/hooks-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const stamp = Date.now().toString(36);
let n = 0;
function oktaUser(stem = "u") {
  n++;
  return {
    id: `00u${stem}${n}i${stamp}`,
    alternateId: `${stem}${n}.${stamp}@example.com`,
    displayName: `${stem} ${n}`,
  };
}
function oktaGroup(stem = "g") {
  n++;
  return { id: `00g${stem}${n}i${stamp}`, displayName: `${stem} ${n} ${stamp}` };
}
const unique = (stem: string) => `${stem}${++n}.${stamp}@example.com`;
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

/** An Okta `group.profile.update` (the group renamed in Okta): the target carries the new name. */
function groupRenamed(group: { id: string; displayName: string }, published: number) {
  return {
    ...oktaEvent("group-lifecycle-delete", { group, published }),
    eventType: "group.profile.update",
    displayMessage: "Update group profile",
    legacyEventType: "core.user_group.profile_updated",
  };
}

let t: HooksTestApp;
beforeAll(async () => {
  t = await createHooksTestApp("acceptance-hook-probes-i");
});
afterAll(async () => {
  await t.close();
});

function postOkta(events: unknown[], headers: Record<string, string> = {}) {
  return t.request
    .post("/hooks/okta/okta")
    .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json", ...headers })
    .send(JSON.stringify(oktaDelivery(events)));
}

function postSigned(
  raw: string | Buffer,
  options: {
    id?: string;
    timestamp?: number | string;
    signature?: string;
    contentType?: string | null;
    headers?: Record<string, string>;
  } = {},
) {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const bytes = typeof raw === "string" ? Buffer.from(raw, "utf8") : raw;
  let req = t.request
    .post("/hooks/okta/events")
    .set("webhook-id", id)
    .set("webhook-timestamp", String(timestamp))
    .set("webhook-signature", options.signature ?? signWebhook(EVENTS_SECRET, id, timestamp, bytes));
  if (options.contentType !== null) req = req.set("Content-Type", options.contentType ?? "application/json");
  if (options.headers) req = req.set(options.headers);
  return req.serialize(() => bytes as unknown as string).send(bytes);
}

const upsert = (userName: string, extra: Record<string, unknown> = {}) => ({
  type: "user.upserted",
  data: { schemas: [USER], userName, ...extra },
});

describe("Okta user.lifecycle.create: the event does not say the user is active (STAGED until activated)", () => {
  it("a create alone (an admin's `activate=false`, a pre-hire from HR) stores the user inactive", async () => {
    const user = oktaUser("staged");
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      userName: user.alternateId,
      externalId: user.id,
      active: false,
    });
  });

  it("create then activate (Okta logs both when a user is created and activated): active", async () => {
    const user = oktaUser("act");
    const res = await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 2 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);
  });

  it("the activation delivered before the create (out of `published` order): active, not undone by the late create", async () => {
    const user = oktaUser("actfirst");
    const res = await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
    ]);
    expect(res.status).toBe(200);
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      active: true,
      userName: user.alternateId,
    });
  });

  it("a staged pre-hire put in a group, the membership delivered first: a member, and inactive", async () => {
    const user = oktaUser("prehire");
    const group = oktaGroup("Prehire");
    const res = await postOkta([
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
    ]);
    expect(res.status).toBe(200);
    const stored = await t.user({ externalId: user.id });
    expect(stored?.resource.active).toBe(false);
    expect((await t.group({ externalId: group.id }))?.members?.map((m) => m.value)).toEqual([
      stored?.resource.id,
    ]);
  });

  it("create, membership, activation shuffled across two deliveries: an active member in the end", async () => {
    const user = oktaUser("shuf");
    const group = oktaGroup("Shuf");
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(3) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    const stored = await t.user({ externalId: user.id });
    expect(stored?.resource.active).toBe(true);
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(1);
  });

  it("a create redelivered with a new uuid after the user was activated does not deactivate them", async () => {
    const user = oktaUser("redo");
    await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
    ]);
    // Same `published` as the create applied: its profile is as it was, the newer activation holds.
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    expect(res.body.outcomes).toEqual({ unchanged: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);
  });

  it("a create of a login another client holds active, published before that client's write: stale, nobody locked out", async () => {
    const login = unique("scimfirst");
    const res0 = await postSigned(JSON.stringify(upsert(login, { active: true })));
    expect(res0.status).toBe(200);
    const user = { id: oktaUser().id, alternateId: login, displayName: "Adopted" };
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    expect(res.body.outcomes).toEqual({ stale: 1 });
    expect((await t.user({ userName: login }))?.resource.active).toBe(true);
  });

  it("a create of a login another client holds, published after its write: adopted, and staged until Okta activates it", async () => {
    const login = unique("adopt");
    const res0 = await postSigned(JSON.stringify(upsert(login, { active: true })));
    expect(res0.status).toBe(200);
    const user = { id: oktaUser().id, alternateId: login, displayName: "Adopted" };
    const later = Date.now() + 1000;
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: later })]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ userName: login }))?.resource).toMatchObject({
      externalId: user.id,
      displayName: "Adopted",
      active: false,
    });
    await postOkta([oktaEvent("user-lifecycle-activate", { user, published: later + 1000 })]);
    expect((await t.user({ userName: login }))?.resource.active).toBe(true);
  });

  it("a deactivated user's create delivered late does not reactivate them, and the deactivation is not stale", async () => {
    const user = oktaUser("late");
    const res = await postOkta([
      oktaEvent("user-lifecycle-deactivate", { user, published: at(3) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
    ]);
    expect(res.status).toBe(200);
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
  });
});

describe("Okta group.profile.update: a group renamed in Okta", () => {
  it("renames the group the hooks created (by Okta group id); its members stay", async () => {
    const user = oktaUser("ren");
    const group = oktaGroup("Old");
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    const renamed = { id: group.id, displayName: `New name ${stamp}` };
    const res = await postOkta([groupRenamed(renamed, at(3))]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    const stored = await t.group({ externalId: group.id });
    expect(stored?.resource.displayName).toBe(renamed.displayName);
    expect(stored?.memberCount).toBe(1);
    // A later membership event naming the new name finds the same group.
    const other = oktaUser("ren2");
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user: other, published: at(4) }),
      oktaEvent("group-user-membership-add", { user: other, group: renamed, published: at(5) }),
    ]);
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(2);
  });

  it("two renames delivered newest first: the newest name stays (the older one is stale)", async () => {
    const user = oktaUser("ren3");
    const group = oktaGroup("Twice");
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    const newest = await postOkta([groupRenamed({ id: group.id, displayName: `Second ${stamp}` }, at(5))]);
    const res = await postOkta([groupRenamed({ id: group.id, displayName: `First ${stamp}` }, at(4))]);
    expect([newest.body.outcomes, res.body.outcomes]).toEqual([{ applied: 1 }, { stale: 1 }]);
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(`Second ${stamp}`);
  });

  it("a rename of a group the bridge does not hold creates nothing (`unknown_group`)", async () => {
    const group = oktaGroup("Nobody");
    const res = await postOkta([groupRenamed(group, at(1))]);
    expect(res.body.outcomes).toEqual({ unknown_group: 1 });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.group({ displayName: group.displayName })).toBeNull();
  });

  it("a rename onto a name another group holds is refused for that event (`rejected`); both groups stay as they were", async () => {
    const user = oktaUser("clash");
    const a = oktaGroup("ClashA");
    const b = oktaGroup("ClashB");
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group: a, published: at(2) }),
      oktaEvent("group-user-membership-add", { user, group: b, published: at(3) }),
    ]);
    const res = await postOkta([groupRenamed({ id: a.id, displayName: b.displayName }, at(4))]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ rejected: 1 });
    expect((await t.group({ externalId: a.id }))?.resource.displayName).toBe(a.displayName);
    expect((await t.group({ externalId: b.id }))?.resource.displayName).toBe(b.displayName);
  });

  it("a group of the same name that a SCIM client made (another externalId) is not renamed by an Okta group's event", async () => {
    const name = `Scim made ${stamp}`;
    const res0 = await postSigned(
      JSON.stringify({ type: "group.upserted", data: { externalId: `hr-${name}`, displayName: name } }),
    );
    expect(res0.status).toBe(200);
    const res = await postOkta([groupRenamed({ id: oktaGroup().id, displayName: name }, at(1))]);
    expect(res.body.outcomes).toEqual({ unknown_group: 1 });
    expect((await t.group({ displayName: name }))?.resource.externalId).toBe(`hr-${name}`);
  });
});

describe("Okta group.profile.update: renames delivered out of order, odd names", () => {
  async function groupWithMember(stem: string) {
    const user = oktaUser(stem);
    const group = oktaGroup(stem);
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    return { user, group };
  }

  it("a rename that only changes the case applies (the group does not clash with itself)", async () => {
    const { group } = await groupWithMember("case");
    const upper = { id: group.id, displayName: group.displayName.toUpperCase() };
    const res = await postOkta([groupRenamed(upper, at(3))]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(upper.displayName);
  });

  it("a late membership add published before the rename, carrying the old name, neither renames back nor makes a second group", async () => {
    const { group } = await groupWithMember("lateadd");
    const renamed = { id: group.id, displayName: `Renamed late ${stamp}` };
    await postOkta([groupRenamed(renamed, at(5))]);
    const other = oktaUser("lateadd2");
    const res = await postOkta([
      oktaEvent("user-lifecycle-activate", { user: other, published: at(3) }),
      oktaEvent("group-user-membership-add", { user: other, group, published: at(4) }),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 2 });
    const stored = await t.group({ externalId: group.id });
    expect(stored?.resource.displayName).toBe(renamed.displayName);
    expect(stored?.memberCount).toBe(2);
    expect(await t.group({ displayName: group.displayName })).toBeNull();
  });

  it("the rename listed before the group's first membership add in one batch: applied in published order, the newer name", async () => {
    const user = oktaUser("first");
    const group = oktaGroup("First");
    const renamed = { id: group.id, displayName: `Renamed first ${stamp}` };
    const res = await postOkta([
      groupRenamed(renamed, at(3)),
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 3 });
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(renamed.displayName);
    expect(await t.group({ displayName: group.displayName })).toBeNull();
  });

  it("the rename delivered before the group's first membership add (separate deliveries): remembered, the group gets the newer name", async () => {
    const user = oktaUser("remember");
    const group = oktaGroup("Remember");
    const renamed = { id: group.id, displayName: `Remembered ${stamp}` };
    const first = await postOkta([groupRenamed(renamed, at(3))]);
    expect(first.body.outcomes).toEqual({ unknown_group: 1 });
    const res = await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 2 });
    const stored = await t.group({ externalId: group.id });
    expect(stored?.resource.displayName).toBe(renamed.displayName);
    expect(stored?.memberCount).toBe(1);
    expect(await t.group({ displayName: group.displayName })).toBeNull();
    // An older rename, delivered after all that, is stale.
    const older = await postOkta([groupRenamed({ id: group.id, displayName: `Older ${stamp}` }, at(2.5))]);
    expect(older.body.outcomes).toEqual({ stale: 1 });
  });

  it("a rename older than the first membership add does not name the group created from it", async () => {
    const user = oktaUser("oldren");
    const group = oktaGroup("OldRen");
    await postOkta([groupRenamed({ id: group.id, displayName: `Too old ${stamp}` }, at(1))]);
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(3) }),
    ]);
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(group.displayName);
  });

  it("a group a SCIM client made (no externalId) that membership events adopted by name is renamed too", async () => {
    const name = `Adopted group ${stamp}`;
    const made = await postSigned(JSON.stringify({ type: "group.upserted", data: { displayName: name } }));
    expect(made.status).toBe(200);
    const user = oktaUser("adoptg");
    const group = { id: oktaGroup().id, displayName: name };
    await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: Date.now() + 1000 }),
      oktaEvent("group-user-membership-add", { user, group, published: Date.now() + 2000 }),
    ]);
    const res = await postOkta([
      groupRenamed({ id: group.id, displayName: `${name} v2` }, Date.now() + 3000),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.group({ displayName: `${name} v2` }))?.memberCount).toBe(1);
  });

  it("a rename published before a SCIM client renamed the group is stale; one published after applies", async () => {
    const { group } = await groupWithMember("scimren");
    const stored = await t.group({ externalId: group.id });
    const put = await postSigned(
      JSON.stringify({
        type: "group.upserted",
        data: { externalId: group.id, displayName: `By HR ${stamp}` },
      }),
    );
    expect(put.status).toBe(200);
    expect((await t.group({ externalId: group.id }))?.resource.id).toBe(stored?.resource.id);
    const late = await postOkta([groupRenamed({ id: group.id, displayName: `Okta old ${stamp}` }, at(3))]);
    expect(late.body.outcomes).toEqual({ stale: 1 });
    const newer = await postOkta([
      groupRenamed({ id: group.id, displayName: `Okta new ${stamp}` }, Date.now() + 1000),
    ]);
    expect(newer.body.outcomes).toEqual({ applied: 1 });
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(`Okta new ${stamp}`);
  });

  it("the new name from `changeDetails.to.name` is preferred; a description-only update is `unchanged`", async () => {
    const { group } = await groupWithMember("chg");
    const event = groupRenamed(group, at(3));
    event.target[0].changeDetails = { from: { name: group.displayName }, to: { name: `Changed ${stamp}` } };
    const res = await postOkta([event]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(`Changed ${stamp}`);
    const same = await postOkta([groupRenamed({ id: group.id, displayName: `Changed ${stamp}` }, at(4))]);
    expect(same.body.outcomes).toEqual({ unchanged: 1 });
  });

  it("a rename without a name, to blanks or with control characters changes nothing", async () => {
    const { group } = await groupWithMember("odd");
    const noName = groupRenamed(group, at(3));
    delete noName.target[0].displayName;
    const res = await postOkta([
      noName,
      groupRenamed({ id: group.id, displayName: "   " }, at(4)),
      groupRenamed({ id: group.id, displayName: "Bad\u0007name" }, at(5)),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ no_target: 1, rejected: 2 });
    expect((await t.group({ externalId: group.id }))?.resource.displayName).toBe(group.displayName);
  });

  it("a rename after the group was deleted in Okta does not bring it back", async () => {
    const { group } = await groupWithMember("gone");
    await postOkta([oktaEvent("group-lifecycle-delete", { group, published: at(3) })]);
    const res = await postOkta([groupRenamed({ id: group.id, displayName: `Ghost ${stamp}` }, at(4))]);
    expect(res.body.outcomes).toEqual({ unknown_group: 1 });
    expect(await t.group({ externalId: group.id })).toBeNull();
    expect(await t.group({ displayName: `Ghost ${stamp}` })).toBeNull();
  });
});

describe("Okta verification, batches and lifecycle", () => {
  it("the verification GET echoes the challenge; HEAD answers without a body; a wrong secret is 401", async () => {
    const ok = await t.request
      .get("/hooks/okta/okta")
      .set({ Authorization: OKTA_SECRET, "X-Okta-Verification-Challenge": "abc_DEF-123" });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ verification: "abc_DEF-123" });
    const head = await t.request
      .head("/hooks/okta/okta")
      .set({ Authorization: OKTA_SECRET, "X-Okta-Verification-Challenge": "abc_DEF-123" });
    expect(head.status).toBe(200);
    expect(head.text ?? "").toBe("");
    const wrong = await t.request
      .get("/hooks/okta/okta")
      .set({ Authorization: "nope", "X-Okta-Verification-Challenge": "abc" });
    expect(wrong.status).toBe(401);
    const unknownSource = await t.request
      .get("/hooks/nosuch/okta")
      .set({ Authorization: OKTA_SECRET, "X-Okta-Verification-Challenge": "abc" });
    expect(unknownSource.status).toBe(404);
  });

  it("a batch of every lifecycle event of one user, shuffled, ends as the newest says (deleted)", async () => {
    const user = oktaUser("all");
    const group = oktaGroup("All");
    const events = [
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(3) }),
      oktaEvent("user-lifecycle-suspend", { user, published: at(4) }),
      oktaEvent("user-lifecycle-unsuspend", { user, published: at(5) }),
      oktaEvent("user-account-update-profile", {
        user: { ...user, displayName: "Renamed" },
        published: at(6),
      }),
      oktaEvent("user-lifecycle-deactivate", { user, published: at(7) }),
      oktaEvent("user-lifecycle-delete-initiated", { user, published: at(8) }),
    ];
    const shuffled = [events[5], events[7], events[2], events[0], events[6], events[3], events[1], events[4]];
    const res = await postOkta([...shuffled, { ...events[2] }]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes.duplicate).toBe(1);
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.user({ userName: user.alternateId })).toBeNull();
  });

  it("the same batch in published order ends the same; its redelivery is all `duplicate`", async () => {
    const user = oktaUser("ord");
    const events = [
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
      oktaEvent("user-lifecycle-suspend", { user, published: at(3) }),
      oktaEvent("user-lifecycle-unsuspend", { user, published: at(4) }),
      oktaEvent("user-lifecycle-deactivate", { user, published: at(5) }),
      {
        ...oktaEvent("user-lifecycle-activate", { user, published: at(6) }),
        eventType: "user.lifecycle.reactivate",
      },
    ];
    const res = await postOkta(events);
    expect(res.body.outcomes).toEqual({ applied: 6 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);
    const again = await postOkta(events);
    expect(again.body.outcomes).toEqual({ duplicate: 6 });
  });

  it("a login change (user.account.update_profile with a new alternateId) moves the userName; the old login is free", async () => {
    const user = oktaUser("login");
    await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(2) }),
    ]);
    const newLogin = unique("newlogin");
    const res = await postOkta([
      oktaEvent("user-account-update-profile", {
        user: { ...user, alternateId: newLogin },
        published: at(3),
      }),
    ]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource).toMatchObject({
      userName: newLogin,
      active: true,
    });
    expect(await t.user({ userName: user.alternateId })).toBeNull();
  });

  it("an empty batch is 200 `received: 0`; a body that is not JSON is 400; one over the limit is 413 (JSON errors)", async () => {
    const empty = await postOkta([]);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ received: 0, outcomes: {} });
    const notJson = await t.request
      .post("/hooks/okta/okta")
      .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json" })
      .send("{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe("invalidSyntax");
    const user = oktaUser("huge");
    const huge = oktaEvent("user-lifecycle-activate", { user, published: at(1) });
    huge.debugContext = { debugData: { pad: "x".repeat(70 * 1024) } };
    const tooBig = await postOkta([huge]);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe("payload_too_large");
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("events for users never created: a suspension and a deletion provision nobody, nor does a late unsuspension published before the deletion", async () => {
    const user = oktaUser("never");
    const res = await postOkta([
      oktaEvent("user-lifecycle-suspend", { user, published: at(1) }),
      oktaEvent("user-lifecycle-delete-initiated", { user, published: at(2) }),
    ]);
    expect(res.body.outcomes).toEqual({ unknown_user: 2 });
    // A late activation published before the deletion brings nobody in.
    const late = await postOkta([oktaEvent("user-lifecycle-unsuspend", { user, published: at(1.5) })]);
    expect(late.body.outcomes).toEqual({ deleted: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.user({ userName: user.alternateId })).toBeNull();
  });

  it("a failed attempt (`outcome.result: FAILURE`) and a preview (`target: null`) change nothing", async () => {
    const user = oktaUser("fail");
    const failed = oktaEvent("user-lifecycle-activate", { user, published: at(1) });
    failed.outcome = { result: "FAILURE", reason: "INVALID_CREDENTIALS" };
    const preview = { ...oktaEvent("user-lifecycle-activate", { published: at(2) }), target: null };
    const res = await postOkta([failed, preview]);
    expect(res.body.outcomes).toEqual({ not_success: 1, no_target: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
  });
});

describe("Standard Webhooks signed events", () => {
  it("a replay of the same webhook-id (even with another body) is `duplicate` and changes nothing", async () => {
    const name = unique("replay");
    const id = `msg_${randomUUID()}`;
    const first = await postSigned(JSON.stringify(upsert(name, { displayName: "One" })), { id });
    expect(first.body).toEqual({ status: "applied", events: 1, changed: 1 });
    const again = await postSigned(JSON.stringify(upsert(name, { displayName: "One" })), { id });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("duplicate");
    const other = await postSigned(JSON.stringify(upsert(name, { displayName: "Two" })), { id });
    expect(other.body.status).toBe("duplicate");
    expect((await t.user({ userName: name }))?.resource.displayName).toBe("One");
  });

  it("timestamps that are not unix seconds (`+1700000000`, fractions, negative, words, exponents) are 401", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const ts of [`+${now}`, `${now}.5`, `-${now}`, "abc", `${now}e0`]) {
      const name = unique("badts");
      const res = await postSigned(JSON.stringify(upsert(name)), { timestamp: ts });
      expect(res.status, ts).toBe(401);
      expect(await t.user({ userName: name })).toBeNull();
    }
  });

  it("signature header variants: several entries, extra spaces, unknown versions, a `v1,` entry without padding", async () => {
    const raw = JSON.stringify(upsert(unique("sigs")));
    const ts = Math.floor(Date.now() / 1000);
    const otherKey = `whsec_${Buffer.from("another key, 32 bytes long......").toString("base64")}`;
    const variants: Array<(good: string, wrong: string) => string> = [
      (good, wrong) => `${wrong} ${good}`,
      (good, wrong) => `${good} ${wrong}`,
      (good) => `  ${good}  `,
      (good) => `v2,abc ${good}`,
      (good, wrong) => `${wrong}   ${good}`,
      (good) => good.replace(/=+$/, ""),
    ];
    for (const [i, variant] of variants.entries()) {
      const id = `msg_${randomUUID()}`;
      const signature = variant(signWebhook(EVENTS_SECRET, id, ts, raw), signWebhook(otherKey, id, ts, raw));
      const res = await postSigned(raw, { id, timestamp: ts, signature });
      expect(res.status, `variant ${i}: ${signature}`).toBe(200);
    }
    const id = `msg_${randomUUID()}`;
    const good = signWebhook(EVENTS_SECRET, id, ts, raw);
    const refused = [
      signWebhook(otherKey, id, ts, raw),
      `v1,${"A".repeat(44)}`,
      good.slice(3),
      `v1=${good.slice(3)}`,
      `V1,${good.slice(3)}`,
      `v1,${good.slice(3, 20)}`,
    ];
    for (const signature of refused) {
      const res = await postSigned(raw, { id, timestamp: ts, signature });
      expect(res.status, signature).toBe(401);
    }
  });

  it("a delivery signed with another secret, or for another webhook-id, is 401 and stores nothing", async () => {
    const name = unique("wrongkey");
    const raw = JSON.stringify(upsert(name));
    const id = `msg_${randomUUID()}`;
    const ts = Math.floor(Date.now() / 1000);
    const otherSecret = `whsec_${Buffer.from("not the source's key 32 bytes...").toString("base64")}`;
    expect(
      (await postSigned(raw, { id, timestamp: ts, signature: signWebhook(otherSecret, id, ts, raw) })).status,
    ).toBe(401);
    expect(
      (await postSigned(raw, { id, timestamp: ts, signature: signWebhook(EVENTS_SECRET, `${id}x`, ts, raw) }))
        .status,
    ).toBe(401);
    expect(await t.user({ userName: name })).toBeNull();
    // Refused attempts do not burn the webhook-id: the genuine delivery still applies.
    expect((await postSigned(raw, { id, timestamp: ts })).body.status).toBe("applied");
  });

  it("a signed body that is not JSON (or is empty) is 400 invalidSyntax; unsigned it is 401", async () => {
    for (const raw of ["not json", "", '{"type": "ping"', "\u0000"]) {
      const res = await postSigned(raw);
      expect(res.status, JSON.stringify(raw)).toBe(400);
      expect(res.body.error.code).toBe("invalidSyntax");
    }
    const unsigned = await postSigned("not json", { signature: "v1,AAAA" });
    expect(unsigned.status).toBe(401);
  });

  it("a body over the limit is 413 with a JSON error, signed or not", async () => {
    const raw = JSON.stringify({ type: "ping", pad: "x".repeat(70 * 1024) });
    const signed = await postSigned(raw);
    expect(signed.status).toBe(413);
    expect(signed.body.error.code).toBe("payload_too_large");
    const unsigned = await postSigned(raw, { signature: "v1,AAAA" });
    expect(unsigned.status).toBe(413);
  });

  it("a gzip-encoded body (Content-Encoding: gzip) is read and verified over the JSON bytes", async () => {
    const name = unique("gzip");
    const raw = JSON.stringify(upsert(name));
    const id = `msg_${randomUUID()}`;
    const ts = Math.floor(Date.now() / 1000);
    const res = await postSigned(gzipSync(raw), {
      id,
      timestamp: ts,
      signature: signWebhook(EVENTS_SECRET, id, ts, raw),
      headers: { "Content-Encoding": "gzip" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("form, octet-stream and CloudEvents content types are still read as the signed bytes (senders label JSON oddly)", async () => {
    for (const contentType of [
      "application/x-www-form-urlencoded",
      "application/octet-stream",
      "application/cloudevents+json",
    ]) {
      const name = unique("ctype");
      const res = await postSigned(JSON.stringify(upsert(name)), { contentType });
      expect(res.status, contentType).toBe(200);
      expect(await t.user({ userName: name })).not.toBeNull();
    }
  });
});

describe("what an admin sees on the platform (whole bridge and emulator)", () => {
  const SECRET = "e2e-okta-probe-i-secret";
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("acceptance-hook-probes-i-e2e", {
      sources: { okta: { tokens: ["okta-token"], hooks: { okta: { secret: SECRET } } } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });
  const post = (events: unknown[]) =>
    h.http
      .post("/hooks/okta/okta")
      .set({ Authorization: SECRET, "Content-Type": "application/json" })
      .send(JSON.stringify(oktaDelivery(events)));
  const platformGroup = (name: string) =>
    (
      h.emulator.state() as unknown as { groups: Array<{ displayName: string; members: string[] }> }
    ).groups.find((g) => g.displayName.endsWith(name));

  it("a staged pre-hire (create, group membership) has no active platform account; the activation gives it one", async () => {
    const user = oktaUser("pstaged");
    const group = oktaGroup("PStaged");
    const res = await post([
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
    ]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get(user.alternateId)?.active ?? false).toBe(false);
    expect((await post([oktaEvent("user-lifecycle-activate", { user, published: at(3) })])).status).toBe(200);
    await h.waitForIdle();
    const platformUser = h.platformUsers().get(user.alternateId);
    expect(platformUser?.active).toBe(true);
    expect(platformGroup(group.displayName)?.members).toEqual([platformUser?.id]);
  });

  it("a group renamed in Okta is renamed on the platform, members kept", async () => {
    const user = oktaUser("prename");
    const group = oktaGroup("PBefore");
    await post([
      oktaEvent("user-lifecycle-activate", { user, published: at(1) }),
      oktaEvent("group-user-membership-add", { user, group, published: at(2) }),
    ]);
    await h.waitForIdle();
    const before = platformGroup(group.displayName);
    expect(before?.members.length).toBe(1);
    const after = `PAfter ${stamp}`;
    expect((await post([groupRenamed({ id: group.id, displayName: after }, at(3))])).status).toBe(200);
    await h.waitForIdle();
    expect(platformGroup(group.displayName)).toBeUndefined();
    expect(platformGroup(after)?.members).toEqual(before?.members);
    expect(h.emulator.violations()).toEqual([]);
  });
});
