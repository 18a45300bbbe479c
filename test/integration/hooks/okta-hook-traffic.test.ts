import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

/**
 * Okta Event Hook traffic that must never fail (Okta disables a hook whose deliveries keep
 * failing): event types the bridge does not act on, envelopes without usable events, and a large
 * batch followed by Okta's redelivery of it.
 */
let t: HooksTestApp;
let n = 0;
const stamp = Date.now().toString(36);
function newOktaUser() {
  n++;
  return { id: `00u${n}tr${stamp}`, alternateId: `tr${n}.${stamp}@example.com`, displayName: `Tr ${n}` };
}
const base = Date.now() - 10 * 60_000;
const at = (s: number) => base + s * 1000;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-okta-traffic");
});
afterAll(async () => {
  await t.close();
});

describe("Okta deliveries the bridge acknowledges without acting", () => {
  it("answers 200 to app assignment events, a group create and the deletion of a group it does not hold, and changes nothing", async () => {
    const user = newOktaUser();
    const event = (eventType: string, target: unknown[]) => ({
      ...oktaEvent("user-lifecycle-create", { user, published: at(1) }),
      eventType,
      target,
    });
    const app = { id: "0oa1app", type: "AppInstance", alternateId: "Analytics", displayName: "Analytics" };
    const appUser = {
      id: "0ua1",
      type: "AppUser",
      alternateId: user.alternateId,
      displayName: user.displayName,
    };
    const group = { id: `00glc${stamp}`, type: "UserGroup", alternateId: "unknown", displayName: "New" };
    const before = t.notified.length;
    const res = await t.postOkta(
      oktaDelivery([
        event("application.user_membership.add", [app, appUser]),
        event("application.user_membership.remove", [app, appUser]),
        event("group.lifecycle.create", [group]),
        event("group.lifecycle.delete", [group]),
      ]),
    );
    expect(res.status).toBe(200);
    // A group is created with its first member; a deletion applies only to a group the bridge holds.
    expect(res.body).toEqual({ received: 4, outcomes: { unknown_type: 3, unknown_group: 1 } });
    expect(t.notified.length).toBe(before);
    expect(await t.user({ externalId: user.id })).toBeNull();
  });

  it("answers 200 to an empty delivery and to events that are not events", async () => {
    const empty = await t.postOkta({ eventType: "com.okta.event_hook", data: { events: [] } });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ received: 0, outcomes: {} });
    const junk = await t.postOkta(oktaDelivery([null, 1, "x", {}]));
    expect(junk.status).toBe(200);
    expect(junk.body).toEqual({ received: 4, outcomes: { malformed: 4 } });
  });
});

describe("a large Okta batch and its redelivery", () => {
  it("applies every event of a batch once; the redelivery is all duplicates", async () => {
    const group = { id: `00gbig${stamp}`, displayName: `Big ${stamp}` };
    // Events trimmed to what the bridge reads, so that 120 fit in the test app's body limit.
    const slim = (e: Record<string, unknown>) => ({
      uuid: e.uuid,
      published: e.published,
      eventType: e.eventType,
      outcome: e.outcome,
      target: e.target,
    });
    const events = [];
    for (let i = 0; i < 60; i++) {
      const user = newOktaUser();
      events.push(slim(oktaEvent("user-lifecycle-create", { user, published: at(10 + i) })));
      events.push(slim(oktaEvent("group-user-membership-add", { user, group, published: at(10 + i) + 1 })));
    }
    const res = await t.postOkta(oktaDelivery(events));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 120, outcomes: { applied: 120 } });
    expect((await t.group({ externalId: group.id }))?.memberCount).toBe(60);
    const again = await t.postOkta(oktaDelivery(events));
    expect(again.body).toEqual({ received: 120, outcomes: { duplicate: 120 } });
  });
});
