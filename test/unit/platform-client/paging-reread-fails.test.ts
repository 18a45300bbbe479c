/**
 * scimPages asks the earlier page's startIndex again to tell a list that moved from one that ignores
 * startIndex. A re-read that fails tells nothing either way (the page now at the earlier startIndex
 * too large to read: listGroups with members, a big group created at the head of a newest-first
 * list, the very creates that moved the list): the walk fails as a list that moved (transient, read
 * again). **Was a bug** (found in review round s): the re-read's permanent "answer too large" error
 * escaped the walk, and a list that merely moved failed for good.
 */
import { describe, expect, it } from "vitest";
import { scimPages } from "../../../src/platform/client/paging.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

class TooLarge extends Error {}

describe("scimPages re-read of the earlier page", () => {
  it("a list that moved stays transient when the re-read page is too large", async () => {
    let list = ["A", "B", "C", "D"].map((id) => ({ id, big: false }));
    let pages = 0;
    const fetchPage = async (startIndex: number, count: number) => {
      pages += 1;
      if (pages === 2) {
        // Two creates at the head (newest first) between page 1 and page 2; X is a huge group.
        list = [{ id: "X", big: true }, { id: "Y", big: false }, ...list];
      }
      const page = list.slice(startIndex - 1, startIndex - 1 + count);
      if (page.some((g) => g.big))
        throw new PlatformError("listGroups: answer body larger than 1 bytes", {
          operation: "listGroups",
          failure: "invalid_response",
          transient: false,
          cause: new TooLarge(),
        });
      return { Resources: page };
    };
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const g of scimPages(fetchPage, 2, {
        operation: "listGroups",
        smallerPageOn: (err) => err instanceof PlatformError && err.cause instanceof TooLarge,
      }))
        seen.push(g.id);
    } catch (err) {
      error = err;
    }
    expect(seen).toEqual(["A", "B"]);
    expect(error).toBeInstanceOf(PlatformError);
    // The list moved: the walk is to be read again later, not dead-lettered as a broken contract.
    expect(error).toMatchObject({ transient: true });
  });
});
