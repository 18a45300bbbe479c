import { describe, expect, it } from "vitest";
import { heldButOut } from "../../../src/sync/group-refusals.js";

describe("heldButOut", () => {
  it("names the held members the group no longer has, and only them", () => {
    const group = { members: ["a", "c", "x"] };
    expect(heldButOut(new Set(["a", "b", "c", "d"]), group)).toEqual(["b", "d"]);
    expect(heldButOut(new Set(["a"]), group)).toEqual([]);
    expect(heldButOut(new Set(), group)).toEqual([]);
    expect(heldButOut(new Set(["a"]), { members: [] })).toEqual(["a"]);
  });
});
