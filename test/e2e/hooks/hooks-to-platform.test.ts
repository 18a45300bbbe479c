/**
 * End-to-end: webhook deliveries change platform state through the emulator just as SCIM does
 * (the bridge's /hooks routes -> directory -> sync queue -> workers -> platform emulator).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

const OKTA_SECRET = "e2e-okta-hook-secret";
const EVENTS_SECRET = `whsec_${Buffer.from("e2e signing key, 32 bytes long!!").toString("base64")}`;

let bridge: TestBridge;

beforeAll(async () => {
  bridge = await startTestBridge("e2e-hooks", {
    sources: {
      okta: {
        tokens: ["okta-token"],
        hooks: { okta: { secret: OKTA_SECRET }, events: { secret: EVENTS_SECRET } },
      },
    },
  });
});

afterAll(async () => {
  await bridge?.close();
});

function postOkta(events: unknown[]) {
  return bridge.http
    .post("/hooks/okta/okta")
    .set("Authorization", OKTA_SECRET)
    .set("Content-Type", "application/json")
    .send(JSON.stringify(oktaDelivery(events)));
}

function postEvents(body: unknown) {
  const raw = JSON.stringify(body);
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const ts = Math.floor(Date.now() / 1000);
  return bridge.http
    .post("/hooks/okta/events")
    .set("Content-Type", "application/json")
    .set("webhook-id", id)
    .set("webhook-timestamp", String(ts))
    .set("webhook-signature", signWebhook(EVENTS_SECRET, id, ts, raw))
    .send(raw);
}

function platformGroup(displayName: string) {
  const state = bridge.emulator.state() as unknown as {
    groups: Array<{ id: string; displayName: string; members: string[] }>;
  };
  return state.groups.find((g) => g.displayName === displayName);
}

describe("webhooks to platform", () => {
  it("Okta Event Hook events create, group and deactivate a platform user", async () => {
    const user = { id: "00ue2eUser0001", alternateId: "dana.e2e@example.com", displayName: "Dana E2E" };
    const group = { id: "00ge2eGroup001", displayName: "E2E Analysts" };
    const t0 = Date.now() - 60_000;
    const res = await postOkta([
      oktaEvent("user-lifecycle-create", { user, published: t0 }),
      oktaEvent("user-lifecycle-activate", { user, published: t0 + 10 }),
      oktaEvent("group-user-membership-add", { user, group, published: t0 + 20 }),
    ]);
    expect(res.status).toBe(200);
    await bridge.waitForIdle();
    const platformUser = bridge.platformUsers().get("dana.e2e@example.com");
    expect(platformUser?.active).toBe(true);
    await waitFor(() => platformGroup("E2E Analysts")?.members.includes(platformUser!.id), {
      what: "the platform group to hold the user",
    });

    await postOkta([
      oktaEvent("user-lifecycle-deactivate", { user, published: t0 + 30 }),
      oktaEvent("group-user-membership-remove", { user, group, published: t0 + 40 }),
    ]);
    await bridge.waitForIdle();
    expect(bridge.platformUsers().get("dana.e2e@example.com")?.active).toBe(false);
    expect(platformGroup("E2E Analysts")?.members).toEqual([]);
  });

  it("an Okta group deletion deletes the platform group; its members stay active platform users", async () => {
    const user = { id: "00ue2eGrpDel001", alternateId: "grpdel.e2e@example.com", displayName: "Grp Del" };
    const group = { id: "00ge2eGrpDel001", displayName: "E2E Deleted In Okta" };
    const t0 = Date.now() - 60_000;
    await postOkta([oktaEvent("group-user-membership-add", { user, group, published: t0 })]);
    await bridge.waitForIdle();
    const platformUser = bridge.platformUsers().get(user.alternateId);
    expect(platformGroup(group.displayName)?.members).toEqual([platformUser?.id]);

    const res = await postOkta([oktaEvent("group-lifecycle-delete", { group, published: t0 + 10 })]);
    expect(res.body.outcomes).toEqual({ applied: 1 });
    await bridge.waitForIdle();
    expect(platformGroup(group.displayName)).toBeUndefined();
    expect(bridge.platformUsers().get(user.alternateId)?.active).toBe(true);

    // A late add published before the deletion does not bring the group back.
    const late = await postOkta([oktaEvent("group-user-membership-add", { user, group, published: t0 + 5 })]);
    expect(late.body.outcomes).toEqual({ deleted: 1 });
    await bridge.waitForIdle();
    expect(platformGroup(group.displayName)).toBeUndefined();
  });

  it("signed events upsert users and a group on the platform, and deactivate through an upsert", async () => {
    const batch = JSON.parse(
      readFileSync(new URL("../../fixtures/hooks/events-batch.json", import.meta.url), "utf8"),
    );
    expect((await postEvents(batch)).status).toBe(200);
    await bridge.waitForIdle();
    const users = bridge.platformUsers();
    const kim = users.get("kim.lee@example.com");
    const ravi = users.get("ravi.patel@example.com");
    expect(kim?.active).toBe(true);
    expect(platformGroup("Finance Analysts")?.members.sort()).toEqual([kim!.id, ravi!.id].sort());

    await postEvents({
      type: "user.upserted",
      data: { externalId: "hr-1001", userName: "kim.lee@example.com", displayName: "Kim Lee", active: false },
    });
    await bridge.waitForIdle();
    expect(bridge.platformUsers().get("kim.lee@example.com")?.active).toBe(false);
  });

  it("a late Okta event published before a SCIM DELETE does not provision the user again", async () => {
    const user = { id: "00ue2eScimDel01", alternateId: "leaver.e2e@example.com", displayName: "Leaver" };
    const scim = bridge.scim("okta");
    const created = await scim.createUser(user.alternateId, { externalId: user.id });
    await bridge.waitForIdle();
    expect(bridge.platformUsers().get(user.alternateId)?.active).toBe(true);
    const beforeDelete = Date.now();
    expect((await scim.deleteUser(created.id)).status).toBe(204);
    await bridge.waitForIdle();
    const gone = bridge.platformUsers().get(user.alternateId);
    expect(gone === undefined || gone.active === false).toBe(true);

    const late = await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: beforeDelete - 5_000 }),
      oktaEvent("user-account-update-profile", { user, published: beforeDelete - 1_000 }),
    ]);
    expect(late.status).toBe(200);
    expect(late.body.outcomes).toEqual({ deleted: 2 });
    await bridge.waitForIdle();
    const list = await bridge.http
      .get(`/scim/v2/okta/Users?filter=${encodeURIComponent(`userName eq "${user.alternateId}"`)}`)
      .set("Authorization", "Bearer okta-token");
    expect(list.body.totalResults).toBe(0);
    const after = bridge.platformUsers().get(user.alternateId);
    expect(after === undefined || after.active === false).toBe(true);

    // Published after the delete: a re-hire.
    const rehire = await postOkta([
      oktaEvent("user-lifecycle-activate", { user, published: Date.now() + 1_000 }),
    ]);
    expect(rehire.body.outcomes).toEqual({ applied: 1 });
    await bridge.waitForIdle();
    expect(bridge.platformUsers().get(user.alternateId)?.active).toBe(true);
  });
});
