import { describe, expect, it } from "vitest";
import { addMembersOperations, removeMembersOperations } from "../../../src/mapping/plan-group.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { applyOps } from "../../../src/sync/group-record.js";
import { refusedMembersError } from "../../../src/sync/sync-error.js";

/**
 * Review n: what the record helpers and the refusal's letter say, pinned before they were tidied
 * (applyOps on the PATCHes planGroup writes; the letter naming members by ids, at most 20 of each).
 */

describe("applyOps", () => {
  const group = { platformId: "g1", displayName: "Eng", members: ["a", "b", 'q"uote'] };

  it("adds, removes (ids with quotes and backslashes too) and renames, in the order sent", () => {
    const odd = 'x\\"y';
    const added = applyOps(group, addMembersOperations(["c", odd, "a"]));
    expect(added.members).toEqual(["a", "b", 'q"uote', "c", odd]);
    const removed = applyOps(added, removeMembersOperations(['q"uote', odd, "nobody"]));
    expect(removed.members).toEqual(["a", "b", "c"]);
    const renamed = applyOps(removed, [{ op: "replace", path: "displayName", value: "Eng 2" }]);
    expect(renamed).toEqual({ platformId: "g1", displayName: "Eng 2", members: ["a", "b", "c"] });
    // In order: added, then removed in the same PATCH, it is out.
    const both = applyOps(group, [...addMembersOperations(["d"]), ...removeMembersOperations(["d", "a"])]);
    expect(both.members).toEqual(["b", 'q"uote']);
  });

  it("leaves what is not a member operation alone", () => {
    const same = applyOps(group, [
      { op: "add", path: "members", value: [{ display: "no value" }] },
      { op: "remove", path: "emails" },
      { op: "replace", path: "displayName", value: 3 },
    ]);
    expect(same).toEqual(group);
  });
});

describe("refusedMembersError", () => {
  const refusal = new PlatformError("patchGroup: 400 refused", {
    operation: "patchGroup",
    failure: "bad_request",
    transient: false,
    httpStatus: 400,
  });

  it("names members by the bridge's ids, and those it no longer knows by platform ids, 20 of each at most", () => {
    const ids = Array.from({ length: 23 }, (_, i) => `u${i}`);
    const err = refusedMembersError({ added: 23, removed: 2 }, refusal, ids, ["p1", "p2"]);
    expect(err.message).toBe(
      "the platform refused to add 23 member(s) to the group and remove 2 member(s) from the group (they are still in it) (patchGroup: 400 refused); the group's other changes were applied" +
        `; refused members (the bridge's user ids): ${ids.slice(0, 20).join(", ")} and 3 more` +
        "; refused members the bridge no longer knows (platform user ids): p1, p2",
    );
    expect(err).toMatchObject({ code: "platform_bad_request", permanent: true, operation: "patchGroup" });
  });

  it("names no one when no id is given", () => {
    expect(refusedMembersError({ added: 1, removed: 0 }, refusal).message).toBe(
      "the platform refused to add 1 member(s) to the group (patchGroup: 400 refused); the group's other changes were applied",
    );
  });
});
