import { describe, expect, it } from "vitest";
import { planGroup, removedMemberIds } from "../../../src/mapping/plan-group.js";

describe("removedMemberIds", () => {
  it("names the members a planned removal PATCH removes, quotes and all", () => {
    const plan = planGroup({
      desiredName: "Eng",
      desiredMembers: ["a"],
      applied: { platformId: "g1", displayName: "Eng", members: ["a", 'b"q', "c"] },
    });
    const step = plan.steps[0];
    expect(step?.type === "patchGroup" ? removedMemberIds(step.operations) : []).toEqual(['b"q', "c"]);
  });

  it("names none for adds and renames", () => {
    expect(
      removedMemberIds([
        { op: "add", path: "members", value: [{ value: "a" }] },
        { op: "replace", path: "displayName", value: "Eng" },
      ]),
    ).toEqual([]);
  });
});

describe("planGroup with members whose removal was refused for good", () => {
  it("does not remove them again, and still sends the other removals, the adds and the rename", () => {
    const plan = planGroup({
      desiredName: "Eng 2",
      desiredMembers: ["a", "d"],
      applied: { platformId: "g1", displayName: "Eng", members: ["a", "b", "c"] },
      heldMembers: new Set(["b"]),
    });
    expect(plan.steps).toEqual([
      { type: "patchGroup", operations: [{ op: "remove", path: 'members[value eq "c"]' }] },
      { type: "patchGroup", operations: [{ op: "add", path: "members", value: [{ value: "d" }] }] },
      { type: "patchGroup", operations: [{ op: "replace", path: "displayName", value: "Eng 2" }] },
    ]);
  });

  it("never adds a held member that is not in the group", () => {
    const plan = planGroup({
      desiredName: "Eng",
      desiredMembers: ["a"],
      applied: { platformId: "g1", displayName: "Eng", members: ["a"] },
      heldMembers: new Set(["b"]),
    });
    expect(plan.steps).toEqual([]);
  });
});
