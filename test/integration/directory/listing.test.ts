import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FilterNode } from "../../../src/scim/filter-types.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";
import { cmp, createHarness, group, testMatcher, user } from "./directory-fixture.js";

let matcherCalls = 0;
const countingMatcher = (node: FilterNode, resource: JsonObject) => {
  matcherCalls += 1;
  return testMatcher(node, resource);
};
// A small scan chunk, so paging across chunks is exercised with few users.
const h = createHarness({ scanChunkSize: 7, matcher: countingMatcher });
const { store } = h;
const SOURCE = "lst";
const ids: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 40; i += 1) {
    const created = await store.createUser(
      SOURCE,
      user(`User.${String(i).padStart(2, "0")}@Example.com`, {
        externalId: `ext-${i}`,
        active: i % 2 === 0,
        emails: [{ value: `Shared.${i % 4}@Example.com`, type: "work" }],
        title: i % 5 === 0 ? "Manager" : "Engineer",
      }),
    );
    ids.push(created.resource.id);
  }
  await store.deleteUser(SOURCE, ids[3]!); // a hole in the creation order
});

afterAll(() => h.close());

describe("listing and lookups", () => {
  it("answers indexed eq lookups from the indexes, never through the matcher", async () => {
    matcherCalls = 0;
    const byName = await store.listUsers(SOURCE, {
      filter: cmp("userName", "eq", "user.07@EXAMPLE.com"),
      startIndex: 1,
      count: 10,
    });
    expect(byName.totalResults).toBe(1);
    expect(byName.items[0]?.resource.id).toBe(ids[7]);
    expect(byName.items[0]?.resource.userName).toBe("User.07@Example.com");

    const urn = "urn:ietf:params:scim:schemas:core:2.0:User:userName";
    expect(
      (
        await store.listUsers(SOURCE, {
          filter: cmp(urn, "eq", "USER.08@example.com"),
          startIndex: 1,
          count: 10,
        })
      ).items[0]?.resource.id,
    ).toBe(ids[8]);
    expect(
      (await store.listUsers(SOURCE, { filter: cmp("externalId", "eq", "ext-9"), startIndex: 1, count: 10 }))
        .items[0]?.resource.id,
    ).toBe(ids[9]);
    expect(
      (await store.listUsers(SOURCE, { filter: cmp("externalId", "eq", "EXT-9"), startIndex: 1, count: 10 }))
        .totalResults,
    ).toBe(0);
    expect(
      (await store.listUsers(SOURCE, { filter: cmp("id", "eq", ids[10]!), startIndex: 1, count: 10 }))
        .items[0]?.resource.id,
    ).toBe(ids[10]);
    expect(
      (await store.listUsers(SOURCE, { filter: cmp("id", "eq", ids[3]!), startIndex: 1, count: 10 }))
        .totalResults,
    ).toBe(0);
    expect(
      (await store.listUsers(SOURCE, { filter: cmp("userName", "eq", "nobody"), startIndex: 1, count: 10 }))
        .items,
    ).toEqual([]);

    // emails are not unique: an index to a set of ids, results in creation order, paged
    const emails = await store.listUsers(SOURCE, {
      filter: cmp("emails.value", "eq", "shared.1@example.COM"),
      startIndex: 2,
      count: 3,
    });
    const expected = ids.filter((_, i) => i % 4 === 1);
    expect(emails.totalResults).toBe(expected.length);
    expect(emails.items.map((u) => u.resource.id)).toEqual(expected.slice(1, 4));
    const valuePath: FilterNode = {
      type: "valuePath",
      path: "emails",
      filter: cmp("value", "eq", "SHARED.2@example.com"),
    };
    expect(
      (await store.listUsers(SOURCE, { filter: valuePath, startIndex: 1, count: 100 })).totalResults,
    ).toBe(10);
    expect(matcherCalls).toBe(0);
  });

  it("scans other filters in chunks, in creation order, with correct totals and 1-based paging", async () => {
    const filter: FilterNode = {
      type: "and",
      left: cmp("active", "eq", true),
      right: cmp("title", "eq", "engineer"),
    };
    const expected = ids.filter((_, i) => i % 2 === 0 && i % 5 !== 0);
    const seen: string[] = [];
    for (let start = 1; start <= expected.length; start += 4) {
      const page = await store.listUsers(SOURCE, { filter, startIndex: start, count: 4 });
      expect(page.totalResults).toBe(expected.length);
      seen.push(...page.items.map((u) => u.resource.id));
    }
    expect(seen).toEqual(expected);
    const beyond = await store.listUsers(SOURCE, { filter, startIndex: 100, count: 4 });
    expect(beyond).toEqual({ totalResults: expected.length, items: [] });
    const countOnly = await store.listUsers(SOURCE, { filter, startIndex: 1, count: 0 });
    expect(countOnly).toEqual({ totalResults: expected.length, items: [] });
  });

  it("applies the matcher to the resource plus its meta", async () => {
    const created = (await store.getUser(SOURCE, ids[0]!))!.meta.created;
    const page = await store.listUsers(SOURCE, {
      filter: cmp("meta.created", "eq", created),
      startIndex: 1,
      count: 50,
    });
    expect(page.items.map((u) => u.resource.id)).toContain(ids[0]);
    const notEq = await store.listUsers(SOURCE, {
      filter: cmp("userName", "ne", "user.00@example.com"),
      startIndex: 1,
      count: 100,
    });
    expect(notEq.totalResults).toBe(38);
  });

  it("lists without a filter in creation order, skipping deleted users", async () => {
    const live = ids.filter((_, i) => i !== 3);
    const page = await store.listUsers(SOURCE, { startIndex: 3, count: 5 });
    expect(page.totalResults).toBe(live.length);
    expect(page.items.map((u) => u.resource.id)).toEqual(live.slice(2, 7));
    expect(await store.countEntities(SOURCE, "user")).toBe(live.length);
  });

  it("streams ids page by page", async () => {
    const pages: string[][] = [];
    for await (const page of store.scanIds(SOURCE, "user", 8)) pages.push(page);
    expect(pages.flat()).toEqual(ids.filter((_, i) => i !== 3));
    expect(pages.every((p) => p.length <= 8)).toBe(true);
    const none: string[][] = [];
    for await (const page of store.scanIds("empty-source", "group")) none.push(page);
    expect(none).toEqual([]);
  });

  it("looks groups up by displayName and externalId, and lists them with members", async () => {
    const g1 = await store.createGroup(SOURCE, group("Admins", { externalId: "g-ext-1" }), [
      ids[1]!,
      ids[2]!,
    ]);
    const g2 = await store.createGroup(SOURCE, group("Readers"), [ids[2]!]);
    const byName = await store.listGroups(SOURCE, {
      filter: cmp("displayName", "eq", "ADMINS"),
      startIndex: 1,
      count: 10,
    });
    expect(byName.items.map((g) => g.resource.id)).toEqual([g1.resource.id]);
    expect(byName.items[0]?.members).toBeUndefined();
    expect(byName.items[0]?.memberCount).toBe(2);
    const byExt = await store.listGroups(SOURCE, {
      filter: cmp("externalId", "eq", "g-ext-1"),
      startIndex: 1,
      count: 10,
      withMembers: true,
    });
    expect(byExt.items[0]?.members?.map((m) => m.value)).toEqual([ids[1]!, ids[2]!].sort());
    const scanned = await store.listGroups(SOURCE, {
      filter: cmp("displayName", "sw", "r"),
      startIndex: 1,
      count: 10,
      withMembers: true,
    });
    expect(scanned.items.map((g) => [g.resource.id, g.members?.length])).toEqual([[g2.resource.id, 1]]);
    const all = await store.listGroups(SOURCE, { startIndex: 1, count: 10 });
    expect(all.items.map((g) => g.resource.id)).toEqual([g1.resource.id, g2.resource.id]);
    expect(await store.findGroupId(SOURCE, { externalId: "nope", displayName: "readers" })).toBe(
      g2.resource.id,
    );
    expect(await store.countEntities(SOURCE, "group")).toBe(2);
  });
});
