/**
 * Acceptance probes (round e) of the webhook intake, with deliveries as real senders put them on the
 * wire: Okta Event Hooks (the one-time verification GET, `com.okta.event_hook` deliveries of System
 * Log events, header authentication, at-least-once and out-of-order delivery) and Standard Webhooks
 * signed events (https://www.standardwebhooks.com/: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature` with space-separated `v1,<base64>` entries, HMAC-SHA256 over
 * `id.timestamp.body`, 5 minutes of tolerance). Each case names who sends it and what an identity
 * admin expects: nobody wrongly locked out or left in, a bad request refused with a clear error,
 * nothing stored lost or half-changed, retries idempotent. Most probes run against the hooks intake
 * (real Redis, a clock of their own); those whose effect an admin sees on the platform run the whole
 * bridge and the platform emulator. Earlier probes: test/e2e/hooks/hook-probes.test.ts,
 * test/integration/hooks/*.
 */
import { randomUUID } from "node:crypto";
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
/** A fresh Okta user (id, login, name) for one probe. */
function oktaUser(stem = "u") {
  n++;
  return {
    id: `00u${stem}${n}e${stamp}`,
    alternateId: `${stem}${n}.${stamp}@example.com`,
    displayName: `${stem} ${n}`,
  };
}
function oktaGroup(stem = "g") {
  n++;
  return { id: `00g${stem}${n}e${stamp}`, displayName: `${stem} ${n} ${stamp}` };
}
const unique = (stem: string) => `${stem}${++n}.${stamp}@example.com`;
/** Published times a few minutes back, one second apart: older events first. */
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

let t: HooksTestApp;

beforeAll(async () => {
  t = await createHooksTestApp("acceptance-hook-probes-e");
});
afterAll(async () => {
  await t.close();
});

/** What Okta sends: its envelope around the events, the secret in Authorization. */
function postOkta(events: unknown[], headers: Record<string, string> = {}) {
  return t.request
    .post("/hooks/okta/okta")
    .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json", ...headers })
    .send(JSON.stringify(oktaDelivery(events)));
}

/** A signed delivery of these exact bytes (the signature header may be replaced). */
function postSigned(
  raw: string | Buffer,
  options: { id?: string; timestamp?: number; signature?: string; contentType?: string | null } = {},
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
  // superagent would JSON-encode a Buffer: hand the bytes over as they are.
  return req.serialize(() => bytes as unknown as string).send(bytes);
}

const upsert = (userName: string, extra: Record<string, unknown> = {}) => ({
  type: "user.upserted",
  data: { schemas: [USER], userName, ...extra },
});

describe("Okta's one-time verification (GET with X-Okta-Verification-Challenge)", () => {
  it("Okta's HTTP client sends the headers in lower case: the challenge is echoed as {verification}", async () => {
    const res = await t.request
      .get("/hooks/okta/okta")
      .set({ authorization: OKTA_SECRET, "x-okta-verification-challenge": "X4vP-challenge_01" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual({ verification: "X4vP-challenge_01" });
  });

  it("an admin who chose another auth header in Okta: the secret is read there, not from Authorization", async () => {
    const challenge = { "X-Okta-Verification-Challenge": "c-2" };
    const ok = await t.request.get("/hooks/custom/okta").set({ "x-hook-key": OKTA_SECRET, ...challenge });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ verification: "c-2" });
    const wrongHeader = await t.request
      .get("/hooks/custom/okta")
      .set({ Authorization: OKTA_SECRET, ...challenge });
    expect(wrongHeader.status).toBe(401);
  });

  it("a verification GET without the challenge header is a clear 400, not a 200 Okta would take as verified", async () => {
    const res = await t.request.get("/hooks/okta/okta").set("Authorization", OKTA_SECRET);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/X-Okta-Verification-Challenge/i);
  });
});

describe("Okta deliveries on the wire", () => {
  it("`Content-Type: application/json; charset=UTF-8` is read like application/json", async () => {
    const user = oktaUser("ct");
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })], {
      "Content-Type": "application/json; charset=UTF-8",
    });
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.userName).toBe(user.alternateId);
  });

  it("a delivery without a Content-Type (a proxy stripped it) is still read: Okta sends only JSON", async () => {
    const user = oktaUser("noct");
    const res = await t.request
      .post("/hooks/okta/okta")
      .set("Authorization", OKTA_SECRET)
      .send(Buffer.from(JSON.stringify(oktaDelivery([oktaEvent("user-lifecycle-create", { user })]))));
    expect(res.status).toBe(200);
    expect(await t.user({ externalId: user.id })).not.toBeNull();
  });

  it("a UTF-8 byte order mark before the JSON is ignored (RFC 8259 §8.1 allows it; the SCIM intake does)", async () => {
    const user = oktaUser("bom");
    const json = JSON.stringify(
      oktaDelivery([oktaEvent("user-lifecycle-create", { user, published: at(1) })]),
    );
    const res = await t.request
      .post("/hooks/okta/okta")
      .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json" })
      .send(`\uFEFF${json}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ externalId: user.id })).not.toBeNull();
  });

  it("the secret sent as `Bearer <secret>` or with another value is 401 with a JSON error, and stores nothing", async () => {
    const user = oktaUser("auth");
    const body = JSON.stringify(oktaDelivery([oktaEvent("user-lifecycle-create", { user })]));
    for (const value of [`Bearer ${OKTA_SECRET}`, `${OKTA_SECRET}x`, ""]) {
      const res = await t.request
        .post("/hooks/okta/okta")
        .set({ Authorization: value, "Content-Type": "application/json" })
        .send(body);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
    }
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("a body that is JSON but not an Event Hook delivery (data.events not an array) is 400 and names what is wrong", async () => {
    const res = await t.request
      .post("/hooks/okta/okta")
      .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json" })
      .send(JSON.stringify({ eventType: "com.okta.event_hook", data: { events: { uuid: "x" } } }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalidSyntax");
    expect(res.body.error.message).toMatch(/data\.events/);
  });
  it("PUT and DELETE on the Okta route are 405 with an Allow header naming what it serves (RFC 9110 §15.5.6)", async () => {
    const put = await t.request.put("/hooks/okta/okta").set("Authorization", OKTA_SECRET).send({});
    expect(put.status).toBe(405);
    expect(put.headers.allow).toMatch(/POST/);
    expect(put.headers.allow).toMatch(/GET/);
    const del = await t.request.delete("/hooks/okta/okta").set("Authorization", OKTA_SECRET);
    expect(del.status).toBe(405);
    expect(del.headers.allow).toMatch(/POST/);
  });
});

describe("Okta batches of many event types", () => {
  it("one malformed event among good ones: the good ones apply, the delivery is 200 (Okta would retry it all otherwise)", async () => {
    const user = oktaUser("mal");
    const broken = { ...oktaEvent("user-lifecycle-deactivate", { user }), published: "yesterday" };
    const res = await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(1) + 500 }),
      broken,
      oktaEvent("user-account-update-profile", {
        user: { ...user, displayName: "Renamed" },
        published: at(2),
      }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 4, outcomes: { applied: 3, malformed: 1 } });
    const stored = await t.user({ externalId: user.id });
    // The malformed deactivation changed nothing: the user is active, renamed by the event after it.
    expect(stored?.resource).toMatchObject({ active: true, displayName: "Renamed" });
  });

  it("the same event uuid twice in one batch (Okta's at-least-once) is applied once", async () => {
    const user = oktaUser("dup");
    const group = oktaGroup("Dup");
    const add = oktaEvent("group-user-membership-add", { user, group, published: at(3) });
    const remove = oktaEvent("group-user-membership-remove", { user, group, published: at(4) });
    const res = await postOkta([add, remove, { ...add }]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ applied: 2, duplicate: 1 });
    // The copy of the add did not put the user back after the remove.
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(0);
  });

  it("Okta's retry of a delivery it timed out on, arriving while the first is still applied: 200 twice, applied once", async () => {
    const group = oktaGroup("Retry");
    const events = [];
    for (let i = 0; i < 10; i++) {
      const user = oktaUser("rt");
      events.push(oktaEvent("user-lifecycle-create", { user, published: at(10 + i) }));
      events.push(oktaEvent("group-user-membership-add", { user, group, published: at(10 + i) + 1 }));
    }
    const delivery = JSON.stringify(oktaDelivery(events));
    const send = () =>
      t.request
        .post("/hooks/okta/okta")
        .set({ Authorization: OKTA_SECRET, "Content-Type": "application/json" })
        .send(delivery);
    const [first, retry] = await Promise.all([send(), send()]);
    expect([first.status, retry.status]).toEqual([200, 200]);
    const applied = (first.body.outcomes.applied ?? 0) + (retry.body.outcomes.applied ?? 0);
    const duplicate = (first.body.outcomes.duplicate ?? 0) + (retry.body.outcomes.duplicate ?? 0);
    expect({ applied, duplicate }).toEqual({ applied: 20, duplicate: 20 });
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(10);
  });

  it("events about users the bridge never saw (deactivate, profile, remove, delete) provision nobody", async () => {
    const user = oktaUser("ghost");
    const group = oktaGroup("Ghost");
    const res = await postOkta([
      oktaEvent("user-lifecycle-deactivate", { user, published: at(1) }),
      oktaEvent("user-account-update-profile", { user, published: at(2) }),
      oktaEvent("group-user-membership-remove", { user, group, published: at(3) }),
      oktaEvent("user-lifecycle-delete-initiated", { user, published: at(4) }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ unknown_user: 3, unchanged: 1 });
    expect(await t.user({ externalId: user.id })).toBeNull();
    expect(await t.user({ userName: user.alternateId })).toBeNull();
    expect(await t.group({ externalId: group.id })).toBeNull();
  });

  it("event types the bridge does not act on (app assignment, group create, sign-in) are acknowledged and change nothing; a rename of a group it does not hold neither", async () => {
    const user = oktaUser("other");
    const created = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    expect(created.status).toBe(200);
    const before = await t.user({ externalId: user.id });
    const as = (eventType: string, target: unknown[]) => ({
      ...oktaEvent("user-lifecycle-create", { user, published: at(2) }),
      eventType,
      target,
    });
    const app = { id: "0oaApp1", type: "AppInstance", alternateId: "Analytics", displayName: "Analytics" };
    const appUser = { id: "0uaAppUser1", type: "AppUser", alternateId: user.alternateId };
    const group = { id: oktaGroup().id, type: "UserGroup", alternateId: "unknown", displayName: "Fresh" };
    const res = await postOkta([
      as("application.user_membership.add", [appUser, app]),
      as("application.user_membership.remove", [appUser, app]),
      as("group.lifecycle.create", [group]),
      as("group.profile.update", [group]),
      as("user.session.start", [{ ...user, type: "User" }]),
    ]);
    expect(res.status).toBe(200);
    // group.profile.update renames a group the bridge holds (hook-probes-i): this one it does not.
    expect(res.body).toEqual({ received: 5, outcomes: { unknown_type: 4, unknown_group: 1 } });
    expect((await t.user({ externalId: user.id }))?.meta.version).toBe(before?.meta.version);
  });

  it("the actor (the admin who acted) is never provisioned or changed: only the target is", async () => {
    const user = oktaUser("tgt");
    const admin = oktaUser("adm");
    const event = oktaEvent("user-lifecycle-create", { user, published: at(1) });
    event.actor = { ...admin, type: "User", detailEntry: null };
    const res = await postOkta([event]);
    expect(res.status).toBe(200);
    expect(await t.user({ externalId: user.id })).not.toBeNull();
    expect(await t.user({ externalId: admin.id })).toBeNull();
    expect(await t.user({ userName: admin.alternateId })).toBeNull();
  });

  it("a membership add whose targets come User first (the order differs across Okta event types) applies", async () => {
    const user = oktaUser("order");
    const group = oktaGroup("Order");
    const event = oktaEvent("group-user-membership-add", { user, group, published: at(1) });
    event.target.reverse();
    expect(event.target[0].type).toBe("User");
    const res = await postOkta([event]);
    expect(res.status).toBe(200);
    const stored = await t.user({ externalId: user.id });
    expect((await t.group({ externalId: group.id }))?.members?.map((m) => m.value)).toEqual([
      stored?.resource.id,
    ]);
  });

  it("a membership add of a deactivated user does not reactivate them (nobody wrongly let back in)", async () => {
    const user = oktaUser("off");
    const group = oktaGroup("Off");
    await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-deactivate", { user, published: at(2) }),
    ]);
    const res = await postOkta([oktaEvent("group-user-membership-add", { user, group, published: at(3) })]);
    expect(res.status).toBe(200);
    const stored = await t.user({ externalId: user.id });
    expect(stored?.resource.active).toBe(false);
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(1);
  });

  it("suspend, then unsuspend delivered first (published later): the user ends active", async () => {
    const user = oktaUser("susp");
    await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(1) + 500 }),
    ]);
    // In one batch the events are applied in `published` order: suspended, then unsuspended.
    const res = await postOkta([
      oktaEvent("user-lifecycle-unsuspend", { user, published: at(3) }),
      oktaEvent("user-lifecycle-suspend", { user, published: at(2) }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toEqual({ applied: 2 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);
    // In two deliveries, the older suspension delivered last is stale.
    const user2 = oktaUser("susp");
    await postOkta([oktaEvent("user-lifecycle-activate", { user: user2, published: at(1) })]);
    const first = await postOkta([oktaEvent("user-lifecycle-unsuspend", { user: user2, published: at(3) })]);
    const late = await postOkta([oktaEvent("user-lifecycle-suspend", { user: user2, published: at(2) })]);
    expect([first.body.outcomes, late.body.outcomes]).toEqual([{ unchanged: 1 }, { stale: 1 }]);
    expect((await t.user({ externalId: user2.id }))?.resource.active).toBe(true);
  });

  it("a non-ASCII login is stored as sent; a later event naming it in decomposed Unicode finds the same user", async () => {
    const composed = `zoë.ørsted.${stamp}@example.com`.normalize("NFC");
    const user = { id: oktaUser().id, alternateId: composed, displayName: "Zoë Ørsted" };
    const res = await postOkta([oktaEvent("user-lifecycle-create", { user, published: at(1) })]);
    expect(res.status).toBe(200);
    expect((await t.user({ externalId: user.id }))?.resource.userName).toBe(composed);
    // The same person as a second client (no Okta id in hand) names them: one user, deactivated.
    const other = { id: user.id, alternateId: composed.normalize("NFD") };
    const off = await postOkta([oktaEvent("user-lifecycle-deactivate", { user: other, published: at(2) })]);
    expect(off.status).toBe(200);
    expect(await t.user({ userName: composed.normalize("NFD") })).toMatchObject({
      resource: { externalId: user.id, active: false },
    });
  });
});

describe("Standard Webhooks signed events on the wire", () => {
  it("an HR system signing with the old and new secret, the valid one last: accepted (zero-downtime rotation)", async () => {
    const name = unique("rot");
    const raw = JSON.stringify(upsert(name));
    const id = `msg_${randomUUID()}`;
    const ts = Math.floor(Date.now() / 1000);
    const old = `whsec_${Buffer.from("an old signing key of thirty-two").toString("base64")}`;
    const res = await postSigned(raw, {
      id,
      timestamp: ts,
      signature: `${signWebhook(old, id, ts, raw)}  ${signWebhook(EVENTS_SECRET, id, ts, raw)}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("an asymmetric `v1a` signature beside a valid `v1` is skipped; `v1a` alone is 401 (the bridge holds no public key)", async () => {
    const name = unique("v1a");
    const raw = JSON.stringify(upsert(name));
    const id = `msg_${randomUUID()}`;
    const ts = Math.floor(Date.now() / 1000);
    const v1a = `v1a,${Buffer.alloc(64, 7).toString("base64")}`;
    const alone = await postSigned(raw, { id, timestamp: ts, signature: v1a });
    expect(alone.status).toBe(401);
    expect(await t.user({ userName: name })).toBeNull();
    const both = await postSigned(raw, {
      id,
      timestamp: ts,
      signature: `${v1a} ${signWebhook(EVENTS_SECRET, id, ts, raw)}`,
    });
    expect(both.status).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("a pretty-printed body with CRLF line ends and a trailing newline, signed as sent, is accepted", async () => {
    const name = unique("pretty");
    const raw = `${JSON.stringify(upsert(name, { displayName: "Pretty" }), null, 2).replace(/\n/g, "\r\n")}\r\n`;
    const res = await postSigned(raw);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await t.user({ userName: name }))?.resource.displayName).toBe("Pretty");
  });

  it("a body re-serialised after signing (other whitespace) is 401: the signature is over the raw bytes", async () => {
    const name = unique("reser");
    const pretty = JSON.stringify(upsert(name), null, 2);
    const id = `msg_${randomUUID()}`;
    const ts = Math.floor(Date.now() / 1000);
    const res = await postSigned(JSON.stringify(JSON.parse(pretty)), {
      id,
      timestamp: ts,
      signature: signWebhook(EVENTS_SECRET, id, ts, pretty),
    });
    expect(res.status).toBe(401);
    expect(await t.user({ userName: name })).toBeNull();
  });

  it("a body with a UTF-8 byte order mark, signed over those bytes, is accepted (RFC 8259 §8.1)", async () => {
    const name = unique("bom");
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(upsert(name)))]);
    const res = await postSigned(bytes);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("`application/json; charset=utf-8`, `text/plain` and no Content-Type at all are read alike", async () => {
    for (const contentType of ["application/json; charset=utf-8", "text/plain", null]) {
      const name = unique("ct");
      const res = await postSigned(JSON.stringify(upsert(name)), { contentType });
      expect(res.status, `${contentType}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(await t.user({ userName: name })).not.toBeNull();
    }
  });

  it("a non-ASCII userName signed over its UTF-8 bytes is accepted and stored as sent", async () => {
    const name = `søren.ñandú.${stamp}@example.com`;
    const res = await postSigned(JSON.stringify(upsert(name, { displayName: "Søren Ñandú" })));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await t.user({ userName: name }))?.resource.userName).toBe(name);
  });

  it("an event carrying the spec's recommended top-level `timestamp` is accepted", async () => {
    const name = unique("ts");
    const res = await postSigned(JSON.stringify({ ...upsert(name), timestamp: new Date().toISOString() }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("one invalid event among good ones: 400 naming it, nothing stored; the same webhook-id again is 400 again, not `duplicate`", async () => {
    const good = unique("good");
    const raw = JSON.stringify({
      events: [upsert(good), { type: "user.upserted", data: { schemas: [USER] } }, { type: "ping" }],
    });
    const id = `msg_${randomUUID()}`;
    const first = await postSigned(raw, { id });
    expect(first.status).toBe(400);
    expect(first.body.error.items).toEqual([expect.objectContaining({ index: 1 })]);
    expect(await t.user({ userName: good })).toBeNull();
    const retry = await postSigned(raw, { id });
    expect(retry.status).toBe(400);
    expect(await t.user({ userName: good })).toBeNull();
  });

  it("user.deleted then user.upserted of the same userName in one delivery (a re-hire) leaves one active user", async () => {
    const name = unique("rehire");
    expect((await postSigned(JSON.stringify(upsert(name, { externalId: `hr-${name}` })))).status).toBe(200);
    const old = await t.user({ userName: name });
    const res = await postSigned(
      JSON.stringify({
        events: [
          { type: "user.deleted", data: { externalId: `hr-${name}` } },
          upsert(name, { externalId: `hr2-${name}`, active: true }),
        ],
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const now = await t.user({ userName: name });
    expect(now?.resource).toMatchObject({ externalId: `hr2-${name}`, active: true });
    expect(now?.resource.id).not.toBe(old?.resource.id);
  });

  it("a webhook-id of 256 characters is accepted; 257 is a clear 400 and stores nothing", async () => {
    const ok = unique("id256");
    const res = await postSigned(JSON.stringify(upsert(ok)), { id: "m".repeat(256) });
    expect(res.status).toBe(200);
    const long = unique("id257");
    const refused = await postSigned(JSON.stringify(upsert(long)), { id: "m".repeat(257) });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/webhook-id/);
    expect(await t.user({ userName: long })).toBeNull();
  });
  it("an HR system's full sync of 500 users and one group in one signed delivery applies whole; its retry is `duplicate`", async () => {
    const names = Array.from({ length: 500 }, () => unique("sync"));
    const group = `Everyone ${stamp}`;
    const raw = JSON.stringify({
      events: [
        ...names.map((name) => ({ type: "user.upserted", data: { userName: name } })),
        {
          type: "group.upserted",
          data: { displayName: group, members: names.map((userName) => ({ userName })) },
        },
      ],
    });
    const id = `msg_${randomUUID()}`;
    const res = await postSigned(raw, { id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ status: "applied", events: 501, changed: 501 });
    expect((await t.group({ displayName: group }))?.memberCount).toBe(500);
    const retry = await postSigned(raw, { id });
    expect(retry.body).toEqual({ status: "duplicate", events: 0, changed: 0 });
  });

  it("GET and HEAD on the events route are 405 with `Allow: POST` (RFC 9110 §15.5.6), not 404 or 401", async () => {
    const get = await t.request.get("/hooks/okta/events");
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    expect(get.body.error.code).toBe("method_not_allowed");
    const head = await t.request.head("/hooks/okta/events");
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe("POST");
  });
});

describe("Standard Webhooks timestamps (the bridge's clock set by the probe)", () => {
  afterAll(() => t.setNow(Date.now()));

  it("the specification's sample payload, correctly signed, is 400 naming the bad event: signed, just not a delivery (not 401)", async () => {
    t.setNow(Date.now());
    const res = await postSigned('{"test": 2432232314}', { id: "msg_p5jXN8AQM9LWM0D4loKWxJek" });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      expect.objectContaining({ index: 0, message: expect.stringMatching(/unknown event type/) }),
    ]);
  });

  it("a timestamp 300 whole seconds old is inside the tolerance, as the reference libraries count it", async () => {
    const ts = Math.floor(Date.now() / 1000) - 600;
    // The bridge's clock is 300.5 s after the timestamp: 300 whole seconds.
    t.setNow(ts * 1000 + 300_500);
    const name = unique("edge");
    const res = await postSigned(JSON.stringify(upsert(name)), { timestamp: ts });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("just inside (299 s, either way) is accepted; just outside (301 s old or ahead) is 401 timestamp_out_of_tolerance", async () => {
    const now = Math.floor(Date.now() / 1000);
    t.setNow(now * 1000);
    for (const offset of [-299, 299]) {
      const name = unique("in");
      const res = await postSigned(JSON.stringify(upsert(name)), { timestamp: now + offset });
      expect(res.status, `${offset}`).toBe(200);
    }
    for (const offset of [-301, 301]) {
      const name = unique("out");
      const res = await postSigned(JSON.stringify(upsert(name)), { timestamp: now + offset });
      expect(res.status, `${offset}`).toBe(401);
      expect(res.body.error.code).toBe("timestamp_out_of_tolerance");
      expect(await t.user({ userName: name })).toBeNull();
    }
  });

  it("a timestamp in milliseconds (a common sender bug) is 401 with a message saying it is not unix seconds", async () => {
    t.setNow(Date.now());
    const res = await postSigned(JSON.stringify({ type: "ping" }), { timestamp: Date.now() });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("timestamp_out_of_tolerance");
    expect(res.body.error.message).toMatch(/seconds/);
  });
});

describe("what an admin sees on the platform (whole bridge and emulator)", () => {
  const SECRET = "e2e-okta-probe-e-secret";
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("acceptance-hook-probes-e2e", {
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

  it("suspend takes the platform user's access away; unsuspend gives it back", async () => {
    const user = oktaUser("psusp");
    const created = await post([
      oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      oktaEvent("user-lifecycle-activate", { user, published: at(1) + 500 }),
    ]);
    expect(created.status).toBe(200);
    expect((await post([oktaEvent("user-lifecycle-suspend", { user, published: at(2) })])).status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get(user.alternateId)?.active).toBe(false);
    expect((await post([oktaEvent("user-lifecycle-unsuspend", { user, published: at(3) })])).status).toBe(
      200,
    );
    await h.waitForIdle();
    expect(h.platformUsers().get(user.alternateId)?.active).toBe(true);
  });

  it("a leaver deleted and the login re-hired under a new Okta id, in one batch: one active platform user", async () => {
    const leaver = oktaUser("hire");
    const group = oktaGroup("Hire");
    await post([
      oktaEvent("user-lifecycle-create", { user: leaver, published: at(1) }),
      oktaEvent("group-user-membership-add", { user: leaver, group, published: at(2) }),
    ]);
    await h.waitForIdle();
    const rehire = { ...leaver, id: `${leaver.id}r` };
    const res = await post([
      oktaEvent("user-lifecycle-deactivate", { user: leaver, published: at(3) }),
      oktaEvent("user-lifecycle-delete-initiated", { user: leaver, published: at(4) }),
      oktaEvent("user-lifecycle-create", { user: rehire, published: at(5) }),
      oktaEvent("user-lifecycle-activate", { user: rehire, published: at(6) }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.outcomes).toMatchObject({ applied: 3 });
    await h.waitForIdle();
    const found = await h
      .scim("okta")
      .get(`/Users?filter=${encodeURIComponent(`userName eq "${leaver.alternateId}"`)}`);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]).toMatchObject({ externalId: rehire.id, active: true });
    expect(h.platformUsers().get(leaver.alternateId)?.active).toBe(true);
    // The re-hire is not in the leaver's group.
    const groups = (
      h.emulator.state() as unknown as { groups: Array<{ displayName: string; members: string[] }> }
    ).groups;
    const platformGroup = groups.find((g) => g.displayName.endsWith(group.displayName));
    expect(platformGroup?.members ?? []).toEqual([]);
  });

  it("a batch of 600 events (200 joiners created, activated and put in their group) lands every user in the platform group; its redelivery changes nothing", async () => {
    const group = oktaGroup("Big");
    const slim = (e: Record<string, unknown>) => ({
      uuid: e.uuid,
      published: e.published,
      eventType: e.eventType,
      outcome: e.outcome,
      target: e.target,
      actor: e.actor,
    });
    const users = [];
    const events = [];
    for (let i = 0; i < 200; i++) {
      const user = oktaUser("big");
      users.push(user);
      events.push(slim(oktaEvent("user-lifecycle-create", { user, published: at(100 + i) })));
      events.push(slim(oktaEvent("user-lifecycle-activate", { user, published: at(100 + i) + 1 })));
      events.push(slim(oktaEvent("group-user-membership-add", { user, group, published: at(100 + i) + 2 })));
    }
    const res = await post(events);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 600, outcomes: { applied: 600 } });
    await h.waitForIdle(60_000);
    const platformGroup = (
      h.emulator.state() as unknown as { groups: Array<{ displayName: string; members: string[] }> }
    ).groups.find((g) => g.displayName.endsWith(group.displayName));
    expect(platformGroup?.members.length).toBe(200);
    for (const user of users) expect(h.platformUsers().get(user.alternateId)?.active).toBe(true);
    const again = await post(events);
    expect(again.body).toEqual({ received: 600, outcomes: { duplicate: 600 } });
    // About 10 s on an idle machine; room for a loaded CI runner (no speed target here: bench/).
  }, 120_000);
});
