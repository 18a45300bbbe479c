import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { parseOktaDelivery, toOktaAction } from "../../../src/hooks/okta-event.js";
import { type OktaFixture, loadOktaFixture, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";

const SAM = { oktaId: "00u1ek3vgbYkL8fdq0h8", login: "sam.rivera@example.com", displayName: "Sam Rivera" };

describe("Okta Event Hook deliveries", () => {
  it.each<[OktaFixture, string]>([
    ["user-lifecycle-create", "create"],
    ["user-lifecycle-activate", "activate"],
    ["user-lifecycle-unsuspend", "activate"],
    ["user-lifecycle-deactivate", "deactivate"],
    ["user-lifecycle-suspend", "deactivate"],
    ["user-lifecycle-delete-initiated", "delete"],
  ])("reads %s as a %s of the target user", (fixture, op) => {
    const [action] = parseOktaDelivery(loadOktaFixture(fixture));
    expect(action).toMatchObject({ kind: "user", op, user: SAM });
    expect(action && "uuid" in action && action.uuid).toMatch(/^4b54a3b4-/);
    expect(action?.published).toBe(Date.parse(loadOktaFixture(fixture).data.events[0].published));
  });

  it("reads a profile update with the new login and display name", () => {
    const [action] = parseOktaDelivery(loadOktaFixture("user-account-update-profile"));
    expect(action).toMatchObject({
      kind: "user",
      op: "profile",
      user: { oktaId: SAM.oktaId, login: "sam.rivera@corp.example.com", displayName: "Samantha Rivera" },
    });
  });

  it("finds membership targets by type, whatever their order", () => {
    const add = parseOktaDelivery(loadOktaFixture("group-user-membership-add"))[0];
    const remove = parseOktaDelivery(loadOktaFixture("group-user-membership-remove"))[0];
    // The add fixture lists the group first, the remove fixture the user first.
    expect(loadOktaFixture("group-user-membership-add").data.events[0].target[0].type).toBe("UserGroup");
    for (const [action, op] of [
      [add, "add"],
      [remove, "remove"],
    ] as const) {
      expect(action).toMatchObject({
        kind: "membership",
        op,
        user: SAM,
        group: { oktaId: "00g1emaKYZTWRYYRRTSK", displayName: "Analysts" },
      });
    }
  });

  it("reads a group deletion by its UserGroup target; one without it has no target", () => {
    const [action] = parseOktaDelivery(loadOktaFixture("group-lifecycle-delete"));
    expect(action).toMatchObject({
      kind: "group",
      op: "delete",
      group: { oktaId: "00g1emaKYZTWRYYRRTSK", displayName: "Analysts" },
    });
    const event = oktaEvent("group-lifecycle-delete");
    event.target = [];
    expect(toOktaAction(event).kind).toBe("no-target");
    expect(
      toOktaAction({ ...oktaEvent("group-lifecycle-delete"), eventType: "group.lifecycle.create" }).kind,
    ).toBe("unknown");
  });

  it("reads a group profile update as a rename to the target's name (changeDetails.to.name first); none without a name", () => {
    const renamed = { ...oktaEvent("group-lifecycle-delete"), eventType: "group.profile.update" };
    expect(toOktaAction(renamed)).toMatchObject({
      kind: "group",
      op: "rename",
      group: { oktaId: "00g1emaKYZTWRYYRRTSK", displayName: "Analysts" },
    });
    renamed.target[0].changeDetails = { from: { name: "Analysts" }, to: { name: "Data Analysts" } };
    expect(toOktaAction(renamed)).toMatchObject({ group: { displayName: "Data Analysts" } });
    const nameless = { ...oktaEvent("group-lifecycle-delete"), eventType: "group.profile.update" };
    delete nameless.target[0].displayName;
    expect(toOktaAction(nameless).kind).toBe("no-target");
  });

  it("tolerates a preview delivery with target: null", () => {
    expect(parseOktaDelivery(loadOktaFixture("preview"))[0]?.kind).toBe("no-target");
  });

  it("marks unknown event types, failed outcomes and unreadable events", () => {
    expect(parseOktaDelivery(loadOktaFixture("unknown-event-type"))[0]).toMatchObject({
      kind: "unknown",
      eventType: "user.session.start",
    });
    expect(parseOktaDelivery(loadOktaFixture("failed-outcome"))[0]?.kind).toBe("not-success");
    expect(toOktaAction({ ...oktaEvent("user-lifecycle-create"), published: "yesterday" }).kind).toBe(
      "malformed",
    );
    expect(toOktaAction("nope").kind).toBe("malformed");
  });

  it("needs a membership event's group as well as its user", () => {
    const event = oktaEvent("group-user-membership-add");
    event.target = event.target.filter((t: { type: string }) => t.type === "User");
    expect(toOktaAction(event).kind).toBe("no-target");
  });

  it("refuses a body that is not a delivery", () => {
    expect(() => parseOktaDelivery({ events: [] })).toThrow(BadRequestError);
    expect(() => parseOktaDelivery(null)).toThrow(BadRequestError);
  });
});
