import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { applyGroupPatch, groupPatchNeedsMembers } from "../../../src/scim/patch.js";
import type { GroupMember, Json, JsonObject, PatchOperation } from "../../../src/scim/scim-types.js";
import { loadFixture } from "./load-fixture.js";

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const base = (): JsonObject => ({ schemas: [GROUP], id: "g1", displayName: "Admins", externalId: "ext-1" });

/** Members as the directory hands them over: every member is a user. */
const stored = (ids?: readonly string[]): GroupMember[] | undefined =>
  ids?.map((value) => ({ value, type: "User" }));
const patch = (ops: PatchOperation[], current?: readonly string[]) =>
  applyGroupPatch(base(), stored(current), ops);
const patchFixture = (name: string, current?: readonly string[]) =>
  applyGroupPatch(base(), stored(current), normalizePatchRequest(loadFixture(name).body));

describe("applyGroupPatch (RFC 7644 §3.5.2)", () => {
  it("quirk: Okta remove-and-add in one PATCH, applied in order", () => {
    const out = patchFixture("okta/group-remove-and-add");
    expect(out.members).toEqual({
      add: ["23a35c27-23d3-4c03-b4c5-6443c09e7173"],
      remove: ["89bb1940-b905-4575-9e7f-6f887cfb368e"],
    });
    expect(out.resource).toEqual({ schemas: [GROUP], displayName: "Admins", externalId: "ext-1" });
  });

  it("quirk: Okta replace members with [] empties the group", () => {
    expect(patchFixture("okta/group-replace-members-empty", ["a", "b"]).members).toEqual({ replace: [] });
  });

  it("quirk: Okta no-path replace renames and ignores the id in the value", () => {
    const out = patchFixture("okta/rename-group");
    expect(out.resource.displayName).toBe("Test SCIMv2");
    expect(out.resource).not.toHaveProperty("id");
    expect(out.members).toEqual({});
  });

  it("quirk: Entra add members", () => {
    expect(patchFixture("entra/group-add-member").members).toEqual({ add: ["f648f8d5ea4e4cd38e9c"] });
  });

  it("quirk: Entra remove members with a value removes only those", () => {
    expect(patchFixture("entra/group-remove-member", ["f648f8d5ea4e4cd38e9c", "other"]).members).toEqual({
      remove: ["f648f8d5ea4e4cd38e9c"],
    });
  });

  it("quirk: Entra Replace displayName", () => {
    expect(patchFixture("entra/group-rename").resource.displayName).toBe(
      "1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName",
    );
  });

  it("remove of members without a value removes every member", () => {
    expect(patch([{ op: "remove", path: "members" }]).members).toEqual({ replace: [] });
  });

  it("replace of members sets the list, later ops edit it", () => {
    const out = patch([
      { op: "replace", path: "members", value: [{ value: "a" }, { value: "b" }] },
      { op: "add", path: "members", value: [{ value: "c" }] },
      { op: "remove", path: 'members[value eq "a"]' },
    ]);
    expect(out.members).toEqual({ replace: ["b", "c"] });
  });

  it("add then remove of the same member nets out; remove then add keeps it", () => {
    expect(
      patch([
        { op: "add", path: "members", value: [{ value: "x" }] },
        { op: "remove", path: "members", value: [{ value: "x" }] },
      ]).members,
    ).toEqual({ remove: ["x"] });
    expect(
      patch([
        { op: "remove", path: 'members[value eq "x"]' },
        { op: "add", path: "members", value: [{ value: "x" }] },
      ]).members,
    ).toEqual({ add: ["x"] });
  });

  it("replace members[value eq x] with another member replaces x (RFC 7644 §3.5.2.3), without the list", () => {
    expect(patch([{ op: "replace", path: 'members[value eq "a"]', value: { value: "z" } }]).members).toEqual({
      add: ["z"],
      remove: ["a"],
    });
    expect(
      patch([{ op: "replace", path: 'members[value eq "a"]', value: [{ value: "y" }, { value: "z" }] }])
        .members,
    ).toEqual({ add: ["y", "z"], remove: ["a"] });
  });

  it("replace members[value eq x] naming x itself, or no member id, keeps or creates x", () => {
    const values: Json[] = [{ value: "a" }, [{ value: "a" }], { type: "User" }];
    for (const value of values) {
      expect(
        patch([{ op: "replace", path: 'members[value eq "a"]', value }]).members,
        JSON.stringify(value),
      ).toEqual({
        add: ["a"],
      });
    }
  });

  it("removes by a members filter with or", () => {
    expect(patch([{ op: "remove", path: 'members[value eq "a" or value eq "b"]' }]).members).toEqual({
      remove: ["a", "b"],
    });
  });

  it("evaluates other members filters against the current member list", () => {
    const out = patch([{ op: "remove", path: 'members[value sw "old-"]' }], ["old-1", "new-1", "old-2"]);
    expect(out.members).toEqual({ remove: ["old-1", "old-2"] });
  });

  it("refuses to guess when a filter needs the member list and the caller did not read it", () => {
    // A wiring bug (groupPatchNeedsMembers was not honoured), not bad input: not a 400.
    const err = (() => {
      try {
        patch([{ op: "remove", path: 'members[value sw "old-"]' }]);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toMatch(/member list/);
  });

  describe("members filters beyond value eq (read against the current members)", () => {
    const current = ["u1", "u2", "u3"];

    it("remove with ne removes every other member", () => {
      expect(patch([{ op: "remove", path: 'members[value ne "u2"]' }], current).members).toEqual({
        remove: ["u1", "u3"],
      });
    });

    it("remove by type: every member is a user", () => {
      expect(patch([{ op: "remove", path: 'members[type eq "User"]' }], current).members).toEqual({
        remove: current,
      });
      expect(patch([{ op: "remove", path: 'members[type eq "Group"]' }], current).members).toEqual({});
    });

    it("remove with value eq or-ed with another comparison", () => {
      const out = patch([{ op: "remove", path: 'members[value eq "u1" or value sw "u3"]' }], current);
      expect(out.members).toEqual({ remove: ["u1", "u3"] });
    });

    it("remove by display matches nothing (the directory keeps no display) and is a no-op", () => {
      expect(patch([{ op: "remove", path: 'members[display eq "Ada"]' }], current).members).toEqual({});
    });

    it("sees the members added and removed earlier in the same PATCH", () => {
      const out = patch(
        [
          { op: "add", path: "members", value: [{ value: "u9" }] },
          { op: "remove", path: 'members[value eq "u1"]' },
          { op: "remove", path: 'members[not (value eq "u2")]' },
        ],
        current,
      );
      // u9 was a member by then, so the last filter took it out again: nothing is added.
      expect(out.members).toEqual({ remove: ["u1", "u3", "u9"] });
    });

    it("works on a list replaced earlier in the PATCH without the stored list", () => {
      const out = patch([
        { op: "replace", path: "members", value: [{ value: "a" }, { value: "b" }] },
        { op: "remove", path: 'members[value ne "a"]' },
      ]);
      expect(out.members).toEqual({ replace: ["a"] });
    });

    it("replace swaps the matching members for the value's", () => {
      const out = patch(
        [{ op: "replace", path: 'members[value eq "u1" and type eq "User"]', value: { value: "u7" } }],
        current,
      );
      expect(out.members).toEqual({ add: ["u7"], remove: ["u1"] });
    });

    it("replace with a filter matching nothing creates the member the filter names", () => {
      const out = patch(
        [{ op: "replace", path: 'members[value eq "u8" and type eq "User"]', value: { type: "User" } }],
        current,
      );
      expect(out.members).toEqual({ add: ["u8"] });
    });

    it("noTarget: replace with a filter matching nothing that describes no member", () => {
      expect(() =>
        patch([{ op: "replace", path: 'members[value sw "zz"]', value: { value: "u7" } }], current),
      ).toThrow(expect.objectContaining({ scimType: "noTarget" }));
      expect(() =>
        patch([{ op: "replace", path: 'members[type eq "Group"]', value: { display: "x" } }], current),
      ).toThrow(expect.objectContaining({ scimType: "noTarget" }));
    });

    it("invalidValue: replace of matching members with a value that names none", () => {
      expect(() =>
        patch([{ op: "replace", path: 'members[value ne "u1"]', value: { display: "x" } }], current),
      ).toThrow(expect.objectContaining({ scimType: "invalidValue" }));
    });

    it("invalidPath: add needs member values, not a filter", () => {
      expect(() => patch([{ op: "add", path: 'members[type eq "User"]', value: {} }], current)).toThrow(
        expect.objectContaining({ scimType: "invalidPath" }),
      );
    });

    it("invalidFilter: a members filter that does not parse", () => {
      for (const path of ['members[value eq "a" or]', "members[value zz 1]", "members[(value eq 1]"]) {
        expect(() => patch([{ op: "remove", path }], current)).toThrow(
          expect.objectContaining({ scimType: "invalidFilter" }),
        );
      }
    });
  });

  describe("groupPatchNeedsMembers", () => {
    const needs = (ops: PatchOperation[]) => groupPatchNeedsMembers(ops);

    it("is false for value lists and value eq filters (the fast path)", () => {
      expect(needs([{ op: "add", path: "members", value: [{ value: "a" }] }])).toBe(false);
      expect(needs([{ op: "remove", path: "members", value: [{ value: "a" }] }])).toBe(false);
      expect(needs([{ op: "remove", path: 'members[value eq "a"]' }])).toBe(false);
      expect(needs([{ op: "remove", path: 'members[value eq "a" or value eq "b"]' }])).toBe(false);
      expect(needs([{ op: "replace", path: 'members[value eq "a"]', value: { value: "a" } }])).toBe(false);
      expect(needs([{ op: "replace", path: "displayName", value: "x" }])).toBe(false);
      expect(needs([{ op: "remove", path: 'members[display eq "x"].display' }])).toBe(false);
    });

    it("is true for other filters on remove or replace, with or without a path", () => {
      expect(needs([{ op: "remove", path: 'members[value ne "a"]' }])).toBe(true);
      expect(needs([{ op: "remove", path: 'members[display eq "Ada"]' }])).toBe(true);
      expect(needs([{ op: "replace", path: 'members[type eq "User"]', value: { value: "a" } }])).toBe(true);
      expect(needs([{ op: "replace", value: { 'members[value sw "x"]': { value: "a" } } }])).toBe(true);
    });

    it("reads `remove members[<filter>].value` as the remove of those members", () => {
      expect(needs([{ op: "remove", path: 'members[value eq "a"].value' }])).toBe(false);
      expect(needs([{ op: "remove", path: 'members[type eq "User"].value' }])).toBe(true);
      expect(patch([{ op: "remove", path: 'members[value eq "a"].value' }], ["a", "b"]).members).toEqual({
        remove: ["a"],
      });
      expect(patch([{ op: "remove", path: 'members[value ne "a"].Value' }], ["a", "b"]).members).toEqual({
        remove: ["b"],
      });
      expect(patch([{ op: "remove", path: 'members[value eq "a"].display' }], ["a"]).members).toEqual({});
    });

    it("is false for a path that does not parse (applying it answers the error)", () => {
      expect(needs([{ op: "remove", path: "members[value eq" }])).toBe(false);
      expect(needs([{ op: "remove", path: "members[value zz 1]" }])).toBe(false);
    });
  });

  it("no-path add with members adds them", () => {
    expect(patch([{ op: "add", value: { members: [{ value: "m1" }] } }]).members).toEqual({ add: ["m1"] });
  });

  it("member ids in a value are deduplicated", () => {
    expect(patch([{ op: "add", path: "members", value: [{ value: "a" }, { value: "a" }] }]).members).toEqual({
      add: ["a"],
    });
  });

  it("handles 5,000 members in one PATCH as one replace", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `u${i}`);
    const out = patch(
      [
        { op: "replace", path: "members", value: ids.map((value) => ({ value })) },
        { op: "remove", path: "members", value: ids.slice(0, 2500).map((value) => ({ value })) },
      ],
      ids,
    );
    expect(out.members.replace).toEqual(ids.slice(2500));
  });

  it("invalidPath: members sub-attribute changes", () => {
    expect(() => patch([{ op: "replace", path: "members.display", value: "x" }])).toThrow(
      expect.objectContaining({ scimType: "invalidPath" }),
    );
  });

  it("invalidValue: a member without a value", () => {
    expect(() => patch([{ op: "add", path: "members", value: [{ display: "Bob" }] }])).toThrow(
      expect.objectContaining({ scimType: "invalidValue" }),
    );
  });

  it("mutability: removing the required displayName (RFC 7644 §3.5.2.2)", () => {
    expect(() => patch([{ op: "remove", path: "displayName" }])).toThrow(
      expect.objectContaining({ scimType: "mutability" }),
    );
  });

  it("a remove of displayName followed by a replace in the same PATCH renames the group", () => {
    const out = patch([
      { op: "remove", path: "displayName" },
      { op: "replace", path: "displayName", value: "Renamed" },
    ]);
    expect(out.resource.displayName).toBe("Renamed");
  });

  it("invalidValue: a displayName of only spaces", () => {
    expect(() => patch([{ op: "replace", path: "displayName", value: "  " }])).toThrow(
      expect.objectContaining({ scimType: "invalidValue" }),
    );
  });

  it("a displayName set by PATCH is trimmed; control characters in it are invalidValue", () => {
    expect(patch([{ op: "replace", path: "displayName", value: " Ops " }]).resource.displayName).toBe("Ops");
    expect(() => patch([{ op: "replace", path: "displayName", value: "Ops\u0000" }])).toThrow(
      expect.objectContaining({ scimType: "invalidValue" }),
    );
    expect(() => patch([{ op: "replace", path: "externalId", value: "e\u007f" }])).toThrow(
      expect.objectContaining({ scimType: "invalidValue" }),
    );
  });

  it("never mutates the input", () => {
    const input = { ...base(), members: [{ value: "a" }] };
    const snapshot = structuredClone(input);
    const current: GroupMember[] = [{ value: "a", type: "User" }];
    applyGroupPatch(input, current, [{ op: "replace", path: "displayName", value: "X" }]);
    expect(input).toEqual(snapshot);
    expect(current).toEqual([{ value: "a", type: "User" }]);
  });
});
