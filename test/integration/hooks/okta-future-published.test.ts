import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-okta-future");
});
afterAll(async () => {
  await t.close();
});

const DAY = 24 * 3600_000;
const MINUTE = 60_000;

/**
 * An Okta event's `published` time orders it against the user's other changes (docs/webhooks.md).
 * One published far in the future (a sender's clock gone wrong, a crafted event) must not outrank
 * every real change for as long as that: it counts as published when it was received, give or take
 * the few minutes of clock skew tolerated (OKTA_FUTURE_TOLERANCE_MS).
 */
describe("an Okta event published in the future", () => {
  it("does not make the user's real later deactivation stale", async () => {
    const now = Date.now();
    t.setNow(now);
    const user = { id: "00uFuture00001", alternateId: "future@example.com", displayName: "Future" };
    const created = await t.postOkta(
      oktaDelivery([oktaEvent("user-lifecycle-create", { user, published: now - MINUTE })]),
    );
    expect(created.body.outcomes).toEqual({ applied: 1 });
    // An activation stamped a day ahead.
    const ahead = await t.postOkta(
      oktaDelivery([
        oktaEvent("user-lifecycle-deactivate", { user, published: now - 30_000 }),
        oktaEvent("user-lifecycle-activate", { user, published: now + DAY }),
      ]),
    );
    expect(ahead.body.outcomes).toEqual({ applied: 2 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(true);

    // Ten minutes later, Okta deactivates the user.
    t.setNow(now + 10 * MINUTE);
    const res = await t.postOkta(
      oktaDelivery([oktaEvent("user-lifecycle-deactivate", { user, published: now + 10 * MINUTE })]),
    );
    expect(res.body.outcomes).toEqual({ applied: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
  });

  it("still orders events a little ahead of the bridge's clock (skew) by their published time", async () => {
    const now = Date.now();
    t.setNow(now);
    const user = { id: "00uSkewed00001", alternateId: "skewed@example.com", displayName: "Skewed" };
    const res = await t.postOkta(
      oktaDelivery([
        oktaEvent("user-lifecycle-create", { user, published: now + 60_000 }),
        oktaEvent("user-lifecycle-deactivate", { user, published: now + 62_000 }),
        oktaEvent("user-lifecycle-activate", { user, published: now + 61_000 }),
      ]),
    );
    expect(res.body.outcomes).toEqual({ applied: 2, stale: 1 });
    expect((await t.user({ externalId: user.id }))?.resource.active).toBe(false);
  });
});
