import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { applyGroupPatch } from "../../../src/scim/patch.js";
import type { JsonObject, PatchOperation } from "../../../src/scim/scim-types.js";
import { loadFixture } from "./load-fixture.js";

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const base = (): JsonObject => ({ schemas: [GROUP], id: "g1", displayName: "Admins", externalId: "ext-1" });

const patch = (ops: PatchOperation[], current?: readonly string[]) => applyGroupPatch(base(), current, ops);
const patchFixture = (name: string, current?: readonly string[]) =>
  applyGroupPatch(base(), current, normalizePatchRequest(loadFixture(name).body));

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

  it("removes by a members filter with or", () => {
    expect(patch([{ op: "remove", path: 'members[value eq "a" or value eq "b"]' }]).members).toEqual({
      remove: ["a", "b"],
    });
  });

  it("evaluates other members filters against the current member list", () => {
    const out = patch([{ op: "remove", path: 'members[value sw "old-"]' }], ["old-1", "new-1", "old-2"]);
    expect(out.members).toEqual({ remove: ["old-1", "old-2"] });
  });

  it("asks for the member list when a filter needs it and none was given", () => {
    expect(() => patch([{ op: "remove", path: 'members[value sw "old-"]' }])).toThrow(BadRequestError);
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

  it("invalidValue: removing displayName", () => {
    expect(() => patch([{ op: "remove", path: "displayName" }])).toThrow(
      expect.objectContaining({ scimType: "invalidValue" }),
    );
  });

  it("never mutates the input", () => {
    const input = { ...base(), members: [{ value: "a" }] };
    const snapshot = structuredClone(input);
    const current = ["a"];
    applyGroupPatch(input, current, [{ op: "replace", path: "displayName", value: "X" }]);
    expect(input).toEqual(snapshot);
    expect(current).toEqual(["a"]);
  });
});
