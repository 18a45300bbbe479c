import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import {
  type Canonicalisers,
  InvalidDeliveryError,
  parseSignedDelivery,
} from "../../../src/hooks/signed-event.js";
import { toCanonicalGroup, toCanonicalUser } from "../../../src/scim/canonical-resource.js";

const canon: Canonicalisers = { user: toCanonicalUser, group: (b) => toCanonicalGroup(b).resource };
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/hooks/${name}.json`, import.meta.url), "utf8"));

function itemsOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidDeliveryError);
    return (err as InvalidDeliveryError).items;
  }
  throw new Error("expected the delivery to be refused");
}

describe("signed event deliveries", () => {
  it("reads a batch: canonical SCIM users, a group with members by externalId or userName, a ping", () => {
    const events = parseSignedDelivery(fixture("events-batch"), canon);
    expect(events.map((e) => e.type)).toEqual(["user.upserted", "user.upserted", "group.upserted", "ping"]);
    expect(events[0]).toMatchObject({
      user: { userName: "kim.lee@example.com", externalId: "hr-1001", active: true },
    });
    expect(events[2]).toEqual({
      type: "group.upserted",
      group: expect.objectContaining({ displayName: "Finance Analysts", externalId: "hr-team-7" }),
      members: [{ externalId: "hr-1001" }, { userName: "ravi.patel@example.com" }],
      membersOmitted: false,
    });
    expect(events[2]?.type === "group.upserted" && "members" in events[2].group).toBe(false);
  });

  it("tells a group without members (absent or null) from one with an empty list", () => {
    const read = (data: object) => parseSignedDelivery({ type: "group.upserted", data }, canon)[0];
    expect(read({ displayName: "G" })).toMatchObject({ members: [], membersOmitted: true });
    expect(read({ displayName: "G", members: null })).toMatchObject({ members: [], membersOmitted: true });
    expect(read({ displayName: "G", members: [] })).toMatchObject({ members: [], membersOmitted: false });
  });

  it("reads a single event and the deletes", () => {
    expect(parseSignedDelivery({ type: "user.deleted", data: { externalId: "hr-1" } }, canon)).toEqual([
      { type: "user.deleted", key: { externalId: "hr-1" } },
    ]);
    expect(parseSignedDelivery({ type: "group.deleted", data: { displayName: "Ops" } }, canon)).toEqual([
      { type: "group.deleted", key: { displayName: "Ops" } },
    ]);
    expect(parseSignedDelivery({ type: "ping" }, canon)).toEqual([{ type: "ping" }]);
  });

  it("reports every bad item by its index", () => {
    const items = itemsOf(() => parseSignedDelivery(fixture("events-invalid"), canon));
    expect(items.map((i) => i.index)).toEqual([1, 3]);
    expect(items[0]?.message).toMatch(/userName/);
    expect(items[1]?.message).toMatch(/unknown event type "user.renamed"/);
  });

  it("refuses deletes without a key and members without a reference", () => {
    const items = itemsOf(() =>
      parseSignedDelivery(
        {
          events: [
            { type: "user.deleted", data: {} },
            { type: "group.upserted", data: { displayName: "G", members: [{ display: "x" }] } },
            { type: "group.deleted", data: { externalId: "" } },
            { type: "user.upserted" },
          ],
        },
        canon,
      ),
    );
    expect(items.map((i) => i.index)).toEqual([0, 1, 2, 3]);
  });

  it("refuses a body that is not a delivery", () => {
    expect(() => parseSignedDelivery([1, 2], canon)).toThrow(BadRequestError);
    expect(() => parseSignedDelivery({ events: {} }, canon)).toThrow(BadRequestError);
  });
});

describe("signed events get the name hygiene of SCIM writes", () => {
  it("trims userName and displayName; refuses control characters in them and in externalId", () => {
    const events = parseSignedDelivery(
      {
        events: [
          { type: "user.upserted", data: { userName: " kim@example.com ", externalId: " hr 1 " } },
          { type: "group.upserted", data: { displayName: " Team " } },
        ],
      },
      canon,
    );
    expect(events[0]).toMatchObject({ user: { userName: "kim@example.com", externalId: " hr 1 " } });
    expect(events[1]).toMatchObject({ group: { displayName: "Team" } });
    const items = itemsOf(() =>
      parseSignedDelivery(
        {
          events: [
            { type: "user.upserted", data: { userName: "kim\u0000@example.com" } },
            { type: "group.upserted", data: { displayName: "Team\u007f" } },
            { type: "user.upserted", data: { userName: "kim@example.com", externalId: "hr\n1" } },
          ],
        },
        canon,
      ),
    );
    expect(items.map((i) => i.index)).toEqual([0, 1, 2]);
    expect(items[0]?.message).toMatch(/"userName".*control characters/);
    expect(items[1]?.message).toMatch(/"displayName"/);
    expect(items[2]?.message).toMatch(/"externalId"/);
  });
});
