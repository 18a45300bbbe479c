/**
 * A definition cached with another type than a rule's is checked against a new listing before a
 * clash is declared (it may have been replaced on the platform). Syncs that meet the clash at the
 * same time share one listing: a misconfigured rule meets every user of a source at once, and each
 * listing spends the platform's shared request budget.
 */
import { describe, expect, it } from "vitest";
import type { PlatformClient, UserAttribute } from "../../../src/platform/platform-types.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";

function platformListing(defs: () => UserAttribute[]) {
  let listings = 0;
  const platform = {
    listUserAttributes: async () => {
      listings++;
      await new Promise((r) => setTimeout(r, 5));
      return defs();
    },
    createUserAttribute: async () => {
      throw new Error("no create expected");
    },
  } as unknown as PlatformClient;
  return { platform, listings: () => listings };
}

describe("attribute definitions: a type clash", () => {
  it("ten syncs meeting it at once share one listing, and all see the clash", async () => {
    const p = platformListing(() => [{ id: 1, name: "dept", type: "number" }]);
    const defs = new AttributeDefinitions(p.platform);
    await expect(defs.ensure("dept", "string")).rejects.toThrow(/type number/);
    const before = p.listings();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => defs.ensure("dept", "string")));
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(p.listings() - before).toBe(1);
  });

  it("a definition replaced on the platform with the rule's type is found at the next sync", async () => {
    let current: UserAttribute = { id: 1, name: "dept", type: "number" };
    const p = platformListing(() => [current]);
    const defs = new AttributeDefinitions(p.platform);
    await expect(defs.ensure("dept", "string")).rejects.toThrow(/type number/);
    current = { id: 2, name: "dept", type: "string" };
    await expect(defs.ensure("dept", "string")).resolves.toBe(2);
  });
});
