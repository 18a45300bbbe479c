/**
 * Acceptance, end to end: an Okta org that provisions over SCIM and also delivers Event Hooks to the
 * same source, in Okta's documented envelope (verification GET, then `com.okta.event_hook`
 * deliveries), with a late, older event arriving after a SCIM change.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

const SECRET = "okta-hook-secret-value";
let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-okta-hooks", {
    sources: { okta: { tokens: ["okta-token"], hooks: { okta: { secret: SECRET } } } },
  });
});
afterAll(async () => {
  await h?.close();
});

function delivery(events: Array<{ eventType: string; published: string; target: unknown[] }>) {
  return {
    eventType: "com.okta.event_hook",
    eventTypeVersion: "1.0",
    cloudEventsVersion: "0.1",
    source: "https://example.okta.com/api/v1/eventHooks/whoql0HfiLGPWc8Jx0g3",
    eventId: randomUUID(),
    eventTime: new Date().toISOString(),
    contentType: "application/json",
    data: {
      events: events.map((e) => ({
        uuid: randomUUID(),
        version: "0",
        severity: "INFO",
        displayMessage: e.eventType,
        actor: { id: "00uadmin", type: "User", alternateId: "admin@example.com", displayName: "Admin" },
        outcome: { result: "SUCCESS" },
        ...e,
      })),
    },
  };
}

const send = (body: unknown) =>
  h.http
    .post("/hooks/okta/okta")
    .set({ Authorization: SECRET, "Content-Type": "application/json" })
    .send(body as object);

const userTarget = {
  id: "00uHOOK1",
  type: "User",
  alternateId: "hook.user@example.com",
  displayName: "Hook User",
};

describe("Okta Event Hooks next to SCIM on one source", () => {
  it("verification echoes the challenge only with the secret", async () => {
    const ok = await h.http
      .get("/hooks/okta/okta")
      .set({ Authorization: SECRET, "X-Okta-Verification-Challenge": "challenge-123" });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ verification: "challenge-123" });
    const wrong = await h.http
      .get("/hooks/okta/okta")
      .set({ Authorization: "wrong", "X-Okta-Verification-Challenge": "challenge-123" });
    expect(wrong.status).toBe(401);
  });

  it("create and group membership by hook reach the platform; a late older activate does not undo a SCIM deactivation", async () => {
    const t0 = Date.now();
    const created = await send(
      delivery([
        {
          eventType: "user.lifecycle.create",
          published: new Date(t0 - 60_000).toISOString(),
          target: [userTarget],
        },
        // Okta logs an activation after the create of a user created active (a create alone is STAGED).
        {
          eventType: "user.lifecycle.activate",
          published: new Date(t0 - 59_500).toISOString(),
          target: [userTarget],
        },
        {
          eventType: "group.user_membership.add",
          published: new Date(t0 - 59_000).toISOString(),
          target: [
            userTarget,
            { id: "00gHOOKGRP", type: "UserGroup", alternateId: "Hooked", displayName: "Hooked" },
          ],
        },
      ]),
    );
    expect(created.status).toBe(200);
    await h.waitForIdle();
    const platformUser = h.platformUsers().get("hook.user@example.com");
    expect(platformUser?.active).toBe(true);
    const group = (
      h.emulator.state() as unknown as { groups: Array<{ displayName: string; members: string[] }> }
    ).groups.find((g) => g.displayName.endsWith("Hooked"));
    expect(group?.members).toEqual([platformUser?.id]);

    // The same person seen over SCIM: found by externalId (the Okta id), deactivated there.
    const found = await h.scim("okta").get(`/Users?filter=${encodeURIComponent('externalId eq "00uHOOK1"')}`);
    expect(found.body.totalResults).toBe(1);
    const off = await h
      .scim("okta")
      .patchUser(found.body.Resources[0].id, [{ op: "replace", value: { active: false } }]);
    expect(off.status).toBe(200);

    // An activate published before that SCIM change arrives late: ignored.
    const late = await send(
      delivery([
        {
          eventType: "user.lifecycle.activate",
          published: new Date(t0 - 30_000).toISOString(),
          target: [userTarget],
        },
      ]),
    );
    expect(late.status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get("hook.user@example.com")?.active).toBe(false);

    // A newer deactivate-then-activate pair, delivered out of order, ends active.
    const later = Date.now();
    await send(
      delivery([
        {
          eventType: "user.lifecycle.activate",
          published: new Date(later + 1).toISOString(),
          target: [userTarget],
        },
      ]),
    );
    await send(
      delivery([
        {
          eventType: "user.lifecycle.deactivate",
          published: new Date(later).toISOString(),
          target: [userTarget],
        },
      ]),
    );
    await h.waitForIdle();
    expect(h.platformUsers().get("hook.user@example.com")?.active).toBe(true);
    expect(h.emulator.violations()).toEqual([]);
  });
});
