/**
 * Found in review (round q; commit 20e6ed5): a PATCH replace of a filtered element (emails[type eq "work"]) now
 * merges the value into the element: sub-attributes it leaves out are kept, one named with null is
 * cleared. Edge cases: no match, several matches and `primary` (RFC 7643 §2.4: at most one),
 * a value that is not an object, and sub-attribute names in another case (RFC 7643 §2.1: names
 * are case-insensitive). The last was a bug: `{"Primary": null}` was merged beside `primary` by a
 * spread and left it true (fixed with mergeComplex, as a complex attribute's add merges).
 */
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { applyUserPatch } from "../../../src/scim/patch.js";
import type { JsonObject, PatchOperation } from "../../../src/scim/scim-types.js";

const CORE = "urn:ietf:params:scim:schemas:core:2.0:User";

const base = (emails: JsonObject[]): JsonObject => ({
  schemas: [CORE],
  id: "u1",
  userName: "bjensen@example.com",
  active: true,
  emails,
});
const patch = (ops: PatchOperation[], emails: JsonObject[]) => applyUserPatch(base(emails), ops);

describe("review q: PATCH replace of a filtered element merges into it", () => {
  it("no match: the element is created from the filter and the value", () => {
    const out = patch(
      [{ op: "replace", path: 'emails[type eq "home"]', value: { value: "h@x.com" } }],
      [{ value: "w@x.com", type: "work", primary: true }],
    );
    expect(out.emails).toEqual([
      { value: "w@x.com", type: "work", primary: true },
      { value: "h@x.com", type: "home" },
    ]);
  });

  it("several matches given primary: true end with exactly one primary", () => {
    const out = patch(
      [{ op: "replace", path: 'emails[type eq "work"]', value: { primary: true } }],
      [
        { value: "a@x.com", type: "work" },
        { value: "b@x.com", type: "work" },
        { value: "h@x.com", type: "home", primary: true },
      ],
    );
    const primaries = (out.emails as JsonObject[]).filter((e) => e.primary === true);
    expect(primaries).toHaveLength(1);
  });

  it("a merge that makes the replaced element primary takes primary from the other one", () => {
    const out = patch(
      [{ op: "replace", path: 'emails[type eq "home"]', value: { primary: true } }],
      [
        { value: "w@x.com", type: "work", primary: true },
        { value: "h@x.com", type: "home" },
      ],
    );
    expect(out.emails).toEqual([
      { value: "w@x.com", type: "work", primary: false },
      { value: "h@x.com", type: "home", primary: true },
    ]);
  });

  it("a value that is not an object is 400 invalidValue", () => {
    expect(() =>
      patch(
        [{ op: "replace", path: 'emails[type eq "work"]', value: "w2@x.com" }],
        [{ value: "w@x.com", type: "work" }],
      ),
    ).toThrow(BadRequestError);
  });

  it("a sub-attribute given in another case replaces the kept one (names are case-insensitive)", () => {
    const out = patch(
      [{ op: "replace", path: 'emails[type eq "work"]', value: { Value: "w2@x.com" } }],
      [{ value: "w@x.com", type: "work", primary: true }],
    );
    expect(out.emails).toEqual([{ value: "w2@x.com", type: "work", primary: true }]);
  });

  it("a sub-attribute named with null in another case is cleared, as in schema case", () => {
    // `{"primary": null}` clears it (the commit's own test); RFC 7643 §2.1 makes "Primary" the same
    // name. Merged by a spread, `{primary: true, Primary: null}` keeps primary: true.
    const out = patch(
      [{ op: "replace", path: 'emails[type eq "work"]', value: { Primary: null } }],
      [
        { value: "w@x.com", type: "work", primary: true },
        { value: "h@x.com", type: "home" },
      ],
    );
    expect(out.emails).toEqual([
      { value: "w@x.com", type: "work" },
      { value: "h@x.com", type: "home" },
    ]);
  });
});
