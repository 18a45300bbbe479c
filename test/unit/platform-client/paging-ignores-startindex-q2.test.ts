/**
 * Found in review (round q2; commit 7a45fa8): scimPages now takes a page that starts where an earlier one did as a
 * list that moved under the walk (transient, "the list changed while it was read") whenever the
 * list's totalResults differs from that earlier page's. But a platform that really ignores
 * startIndex (answers the first page at every startIndex) on a tenant whose list changes while it is
 * read (the bridge's own sync workers create users during a reconciliation; any other integration)
 * also shows a different totalResults on the repeated page: it is then never failed as the
 * permanent contract break ("it ignores startIndex") that pages the operator
 * (platform_failures_total{class="permanent"}), but as a transient failure blamed on the list
 * moving, run after run. A list that really moved by a page's worth of creates changed its
 * totalResults by exactly the distance between the two pages' startIndex (newest first); one create
 * (+1) between pages 100 apart cannot shift the first resource of page 1 to startIndex 101.
 * Fixed: the earlier page's startIndex is asked again; a platform that still starts it with the
 * same resource ignores startIndex.
 */
import { describe, expect, it } from "vitest";
import { scimPages } from "../../../src/platform/client/paging.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

describe("a platform that ignores startIndex, on a list that changes while it is read", () => {
  it("still fails as a permanent contract break (it ignores startIndex), not as a list that moved", async () => {
    // Oldest first; one user created (appended at the end) between every two pages.
    let total = 250;
    const ids = () => Array.from({ length: total }, (_, i) => ({ id: `u${i}` }));
    const asked: number[] = [];
    const fetchPage = async (startIndex: number, count: number) => {
      asked.push(startIndex);
      // Ignores startIndex: always the first `count` resources.
      const page = { totalResults: total, Resources: ids().slice(0, count) };
      total += 1;
      return page;
    };
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const r of scimPages(fetchPage, 100, { operation: "listUsers" })) seen.push(r.id);
    } catch (err) {
      error = err;
    }
    // The first page's startIndex asked again tells a platform that ignores it from a moved list.
    expect(asked).toEqual([1, 101, 1]);
    expect(error).toBeInstanceOf(PlatformError);
    expect.soft(String((error as Error).message)).toContain("ignores startIndex");
    expect(error).toMatchObject({ failure: "invalid_response", transient: false, operation: "listUsers" });
  });
});
