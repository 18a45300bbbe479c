/**
 * A definition cached with another type than a rule's is checked against a new listing before a
 * clash is declared (it may have been replaced on the platform). Syncs that meet the clash at the
 * same time share one listing: a misconfigured rule meets every user of a source at once, and each
 * listing spends the platform's shared request budget. A sync that joined another's listing sent
 * no call: a pause the platform answered that listing with holds it back (its put-back does not
 * count towards the entity's rate-limit loops), as a pause another call met does.
 */
import { describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformClient, UserAttribute } from "../../../src/platform/platform-types.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";
import { classifyFailure } from "../../../src/sync/sync-error.js";

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

  it("a sync that joined another's listing answered 429 is held back (its put-back uncounted); the sync whose call it was is not", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let lists = 0;
    const platform = {
      listUserAttributes: async () => {
        lists++;
        await gate;
        throw new PlatformError("GET /api/v1/user-attributes answered 429", {
          operation: "listUserAttributes",
          failure: "rate_limited",
          transient: true,
          httpStatus: 429,
          retryAfterMs: 120_000,
        });
      },
    } as unknown as PlatformClient;
    const defs = new AttributeDefinitions(platform);
    const first = defs.ensure("dept", "string").catch((err: unknown) => err);
    const second = defs.ensure("dept", "string").catch((err: unknown) => err);
    release();
    const [own, joinedErr] = (await Promise.all([first, second])) as PlatformError[];
    expect(lists).toBe(1);
    expect(own).toBeInstanceOf(PlatformError);
    expect(own?.heldBack).toBe(false);
    expect(joinedErr).toBeInstanceOf(PlatformError);
    expect(joinedErr?.heldBack).toBe(true);
    expect(joinedErr?.retryAfterMs).toBe(120_000);
    expect(classifyFailure(joinedErr).heldBack).toBe(true);
    expect(classifyFailure(own).heldBack).toBeUndefined();
  });

  it("a joiner meets any other failure of the shared listing as it is", async () => {
    const refusal = new PlatformError("GET /api/v1/user-attributes answered 403", {
      operation: "listUserAttributes",
      failure: "forbidden",
      transient: false,
      httpStatus: 403,
    });
    const platform = {
      listUserAttributes: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw refusal;
      },
    } as unknown as PlatformClient;
    const defs = new AttributeDefinitions(platform);
    const both = await Promise.all([
      defs.ensure("dept", "string").catch((err: unknown) => err),
      defs.ensure("dept", "string").catch((err: unknown) => err),
    ]);
    expect(both).toEqual([refusal, refusal]);
  });
});
