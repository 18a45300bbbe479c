import { describe, expect, it } from "vitest";
import { chunk, clampPageSize, cursorPages, scimPages } from "../../../src/platform/client/paging.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import {
  platformPaths,
  scimEqFilter,
  scimStringLiteral,
} from "../../../src/platform/client/platform-paths.js";

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("scimPages", () => {
  it("walks startIndex/count until totalResults (RFC 7644 §3.4.2.4)", async () => {
    const all = Array.from({ length: 250 }, (_, i) => i);
    const calls: Array<[number, number]> = [];
    const items = await collect(
      scimPages(async (startIndex, count) => {
        calls.push([startIndex, count]);
        return { totalResults: all.length, Resources: all.slice(startIndex - 1, startIndex - 1 + count) };
      }),
    );
    expect(items).toEqual(all);
    expect(calls).toEqual([
      [1, 100],
      [101, 100],
      [201, 100],
    ]);
  });

  it("stops on an empty page even when totalResults lies", async () => {
    let calls = 0;
    const items = await collect(
      scimPages(async () => {
        calls++;
        return calls === 1
          ? { totalResults: 1000, Resources: [1, 2] }
          : { totalResults: 1000, Resources: [] };
      }, 2),
    );
    expect(items).toEqual([1, 2]);
    expect(calls).toBe(2);
  });

  it("fails, not loops, when a platform without totalResults ignores startIndex", async () => {
    let calls = 0;
    const walk = collect(
      scimPages(async () => {
        calls++;
        return { Resources: [{ id: "a" }, { id: "b" }] };
      }, 10),
    );
    await expect(walk).rejects.toThrow(/ignores startIndex/);
    // Two pages, then the first page's startIndex asked again (it still starts with "a").
    expect(calls).toBe(3);
  });

  it("fails when the pages run in a cycle longer than one page, judged by the resources' ids", async () => {
    // Three pages without totalResults, the third answered as the first again (its resources'
    // meta changed between the reads: a page is known by its first id, not by its JSON).
    const pages = [
      [{ id: "a", meta: { version: "1" } }],
      [{ id: "b", meta: { version: "1" } }],
      [{ id: "a", meta: { version: "2" } }],
    ];
    let calls = 0;
    const walk = collect(
      scimPages(async (startIndex) => {
        calls++;
        if (calls > 10) throw new Error("still walking");
        return { Resources: pages[startIndex - 1] ?? [{ id: "a", meta: { version: "3" } }] };
      }, 1),
    );
    await expect(walk).rejects.toThrow(/startIndex=3 with a page it answered before.*ignores startIndex/);
    // Three pages, then the first page's startIndex asked again (it still starts with "a").
    expect(calls).toBe(4);
  });

  it("clamps the page size to the contract's 1..100", () => {
    expect(clampPageSize(undefined)).toBe(100);
    expect(clampPageSize(500)).toBe(100);
    expect(clampPageSize(0)).toBe(1);
    expect(clampPageSize(10)).toBe(10);
  });
});

describe("cursorPages", () => {
  it("follows endCursor while hasNextPage", async () => {
    const afters: Array<string | undefined> = [];
    const items = await collect(
      cursorPages(async (first, after) => {
        afters.push(after);
        expect(first).toBe(100);
        if (after === undefined)
          return { items: ["a", "b"], pageInfo: { hasNextPage: true, endCursor: "c1" } };
        if (after === "c1") return { items: ["c"], pageInfo: { hasNextPage: true, endCursor: "c2" } };
        return { items: [], pageInfo: { hasNextPage: false, endCursor: null } };
      }),
    );
    expect(items).toEqual(["a", "b", "c"]);
    expect(afters).toEqual([undefined, "c1", "c2"]);
  });

  it("fails visibly when the cursor does not move (the list would never end)", async () => {
    let calls = 0;
    const seen: number[] = [];
    const walk = async () => {
      for await (const item of cursorPages(async () => {
        calls++;
        return { items: [calls], pageInfo: { hasNextPage: true, endCursor: "same" } };
      })) {
        seen.push(item);
      }
    };
    await expect(walk()).rejects.toThrow(/never end/);
    expect(seen).toEqual([1, 2]);
  });

  it("fails visibly when a next page is announced without a cursor to it (not a partial list)", async () => {
    for (const endCursor of [null, undefined, ""]) {
      const walk = collect(
        cursorPages(async (_first, after) =>
          after === undefined
            ? { items: ["a"], pageInfo: { hasNextPage: true, endCursor } }
            : { items: ["b"], pageInfo: { hasNextPage: false, endCursor: null } },
        ),
      );
      await expect(walk, String(endCursor)).rejects.toThrow(/without an endCursor/);
    }
  });

  it("fails visibly when the cursors run in a cycle longer than one page (the list would never end)", async () => {
    const next: Record<string, string> = { start: "c1", c1: "c2", c2: "c1" };
    let calls = 0;
    const walk = collect(
      cursorPages(async (_first, after) => {
        calls++;
        if (calls > 10) throw new Error("still walking");
        return { items: [calls], pageInfo: { hasNextPage: true, endCursor: next[after ?? "start"] } };
      }),
    );
    await expect(walk).rejects.toThrow(/cursor .*asked with before.*\(page 3\).*never end/);
    expect(calls).toBe(3);
  });

  it("fails as the platform's contract break of the list it walks (not an internal error)", async () => {
    const cases: Array<[string, () => AsyncIterable<unknown>]> = [
      [
        "no cursor",
        () =>
          cursorPages(async () => ({ items: [1], pageInfo: { hasNextPage: true, endCursor: null } }), 10, {
            operation: "listEmbedGroups",
          }),
      ],
      [
        "same cursor",
        () =>
          cursorPages(async () => ({ items: [1], pageInfo: { hasNextPage: true, endCursor: "x" } }), 10, {
            operation: "listEmbedGroups",
          }),
      ],
      [
        "startIndex ignored",
        () => scimPages(async () => ({ Resources: [{ id: "a" }] }), 10, { operation: "listEmbedGroups" }),
      ],
    ];
    for (const [name, walk] of cases) {
      const err = await collect(walk()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, name).toBeInstanceOf(PlatformError);
      const failure = err as PlatformError;
      expect(failure.operation, name).toBe("listEmbedGroups");
      expect(failure.failure, name).toBe("invalid_response");
      expect(failure.code, name).toBe("platform_invalid_response");
      expect(failure.transient, name).toBe(false);
      expect(failure.message, name).toMatch(/^listEmbedGroups: /);
    }
  });

  it("ends at hasNextPage false whatever the cursor", async () => {
    expect(
      await collect(
        cursorPages(async () => ({ items: ["a"], pageInfo: { hasNextPage: false, endCursor: "c9" } })),
      ),
    ).toEqual(["a"]);
  });
});

describe("chunk", () => {
  it("splits into parts of at most 100", () => {
    const parts = chunk(Array.from({ length: 205 }, (_, i) => i));
    expect(parts.map((p) => p.length)).toEqual([100, 100, 5]);
    expect(chunk([])).toEqual([]);
  });
});

describe("platform paths and filters", () => {
  it("keeps the contract's trailing slashes and encodes parameters", () => {
    expect(platformPaths.userAttributes()).toBe("/api/v1/user-attributes/");
    expect(platformPaths.embedTenants()).toBe("/api/v1/embed-tenants/");
    expect(platformPaths.upsertUserAttributeValue()).toBe("/api/v1/user-attribute-values/");
    expect(platformPaths.embedTenant("acme")).toBe("/api/v1/embed-tenants/acme");
    expect(platformPaths.user("a/b?c#d")).toBe("/api/scim/v2/Users/a%2Fb%3Fc%23d");
    expect(platformPaths.embedGroupMembers("t 1", "g/1")).toBe(
      "/api/v1/embed-tenants/t%201/groups/g%2F1/users",
    );
  });

  it("escapes quotes and backslashes in SCIM filter literals (RFC 7644 §3.4.2.2)", () => {
    expect(scimStringLiteral('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(scimEqFilter("userName", 'x" or userName pr or "')).toBe(
      'userName eq "x\\" or userName pr or \\""',
    );
  });
});

describe("scimPages: a page too large to read", () => {
  const tooLarge = new Error("too large");
  it("asks the same page again, half as large, and keeps that size", async () => {
    const all = Array.from({ length: 60 }, (_, i) => i);
    const calls: Array<[number, number]> = [];
    const items = await collect(
      scimPages(
        async (startIndex, count) => {
          calls.push([startIndex, count]);
          if (count > 25) throw tooLarge;
          return { totalResults: all.length, Resources: all.slice(startIndex - 1, startIndex - 1 + count) };
        },
        undefined,
        { smallerPageOn: (err) => err === tooLarge },
      ),
    );
    expect(items).toEqual(all);
    expect(calls).toEqual([
      [1, 100],
      [1, 50],
      [1, 25],
      [26, 25],
      [51, 25],
    ]);
  });

  it("fails with the error once a page of one is too large, and on any other error at once", async () => {
    const one = scimPages(
      async () => {
        throw tooLarge;
      },
      4,
      { smallerPageOn: (err) => err === tooLarge },
    );
    await expect(collect(one)).rejects.toBe(tooLarge);
    const other = new Error("other");
    let calls = 0;
    const failing = scimPages(
      async () => {
        calls++;
        throw other;
      },
      undefined,
      { smallerPageOn: (err) => err === tooLarge },
    );
    await expect(collect(failing)).rejects.toBe(other);
    expect(calls).toBe(1);
  });
});
