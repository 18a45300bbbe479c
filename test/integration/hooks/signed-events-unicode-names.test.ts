import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-unicode-names");
});
afterAll(async () => {
  await t.close();
});

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const COMPOSED = "Jos\u00e9";
const DECOMPOSED = "Jose\u0301";

/**
 * A delivery is validated as a whole before anything is stored (docs/webhooks.md), with names
 * compared as the directory compares them: case-insensitively and in Unicode normalisation form C,
 * so "José" sent composed and decomposed is one name. Two people of one delivery that take that
 * one name are refused together, never stored half-way.
 */
describe("signed deliveries: names that differ only in Unicode normalisation are one name", () => {
  it("two new users of one delivery named José, composed and decomposed: 400, nothing stored", async () => {
    const res = await t.postEvents({
      events: [
        {
          type: "user.upserted",
          data: { schemas: [USER], externalId: "uni-1", userName: `${COMPOSED}@example.com` },
        },
        {
          type: "user.upserted",
          data: { schemas: [USER], externalId: "uni-2", userName: `${DECOMPOSED.toUpperCase()}@example.com` },
        },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 1, message: "userName is already taken by another user" },
    ]);
    expect(await t.user({ externalId: "uni-1" })).toBeNull();
    expect(await t.user({ externalId: "uni-2" })).toBeNull();
  });

  it("two new groups of one delivery, composed and decomposed: 400, nothing stored", async () => {
    const res = await t.postEvents({
      events: [
        {
          type: "group.upserted",
          data: { schemas: [GROUP], externalId: "g-uni-1", displayName: `${COMPOSED} team` },
        },
        {
          type: "group.upserted",
          data: { schemas: [GROUP], externalId: "g-uni-2", displayName: `${DECOMPOSED} team` },
        },
      ],
    });
    expect(res.status).toBe(400);
    expect(await t.group({ externalId: "g-uni-1" })).toBeNull();
    expect(await t.group({ externalId: "g-uni-2" })).toBeNull();
  });

  it("a member named by the other form of a user's name upserted earlier in the delivery is that user", async () => {
    const res = await t.postEvents({
      events: [
        {
          type: "user.upserted",
          data: { schemas: [USER], externalId: "uni-3", userName: `${COMPOSED}3@example.com` },
        },
        {
          type: "group.upserted",
          data: {
            schemas: [GROUP],
            externalId: "g-uni-3",
            displayName: "Unicode members",
            members: [{ userName: `${DECOMPOSED}3@example.com` }],
          },
        },
      ],
    });
    expect(res.status).toBe(200);
    const user = await t.user({ externalId: "uni-3" });
    const group = await t.group({ externalId: "g-uni-3" });
    expect(group?.members?.map((m) => m.value)).toEqual([user?.resource.id]);
  });
});
