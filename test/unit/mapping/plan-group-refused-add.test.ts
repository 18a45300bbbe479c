import { describe, expect, it } from "vitest";
import {
  addedMemberIds,
  planGroup,
  refusedAddFate,
  usersOfPlatformIds,
} from "../../../src/mapping/plan-group.js";

describe("addedMemberIds", () => {
  it("names the members a planned add PATCH adds, in order", () => {
    const plan = planGroup({
      desiredName: "Eng",
      desiredMembers: ["a", "b", "c"],
      applied: { platformId: "g1", displayName: "Eng", members: ["a"] },
    });
    const step = plan.steps[0];
    expect(step?.type).toBe("patchGroup");
    expect(step?.type === "patchGroup" ? addedMemberIds(step.operations) : []).toEqual(["b", "c"]);
  });

  it("names none for removals and renames", () => {
    expect(
      addedMemberIds([
        { op: "remove", path: 'members[value eq "a"]' },
        { op: "replace", path: "displayName", value: "Eng" },
      ]),
    ).toEqual([]);
  });
});

describe("refusedAddFate", () => {
  it("leaves out the added members that are no platform user, once each", () => {
    const onPlatform = new Set(["a", "c"]);
    expect(refusedAddFate(["a", "b", "c", "d", "b"], (id) => onPlatform.has(id))).toEqual({
      type: "leaveOut",
      platformIds: ["b", "d"],
    });
  });

  it("lets the refusal stand when every added member is a platform user", () => {
    expect(refusedAddFate(["a", "b"], () => true)).toEqual({ type: "stands" });
  });

  it("lets the refusal stand when the PATCH added no one", () => {
    expect(refusedAddFate([], () => false)).toEqual({ type: "stands" });
  });
});

describe("usersOfPlatformIds", () => {
  it("names the directory users recorded under the given platform ids", () => {
    expect(
      usersOfPlatformIds("okta", ["u1", "u2", "u3", "u4"], ["p1", null, "p3", "p4"], ["p3", "p1", "px"]),
    ).toEqual([
      { source: "okta", kind: "user", id: "u1" },
      { source: "okta", kind: "user", id: "u3" },
    ]);
  });
});
