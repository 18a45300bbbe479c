/**
 * Round k: PATCH semantics the earlier rounds left open (RFC 7644 §3.5.2), as pure functions.
 * - `add` to a list no schema describes (a custom extension's, kept whole under its URN) sets it,
 *   as Entra ID means it (pinned: see below; RFC 7644 §3.5.2.1 would append).
 * - `add` or `replace` of an object held by a custom extension: RFC 7644 §3.5.2.3 sets the
 *   sub-attributes given and leaves the others; the whole object was replaced, and a sub-attribute
 *   given as null was stored as null.
 * - a value filter on a list of plain values of a custom extension (`tags[value eq "a"]`): RFC
 *   7644 §3.5.2.2 removes the values the filter matches; nothing matched (the filter only looked
 *   at objects), so the remove answered 200 and removed nothing, and a replace was a 400.
 */
import { describe, expect, it } from "vitest";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import { applyUserPatch } from "../../../src/scim/patch.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ACME = "urn:ietf:params:scim:schemas:extension:Acme:2.0:User";

const ops = (Operations: unknown[]) =>
  normalizePatchRequest({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations });

const user = (ext: JsonObject): JsonObject => ({
  schemas: [USER, ACME],
  userName: "ada@example.com",
  active: true,
  [ACME]: ext,
});

describe("add to a list of a custom extension (Entra ID: the whole new list, as an Add)", () => {
  // Entra sends a multi-valued custom attribute's new list as an Add, and no Remove of the values
  // dropped at the source (Microsoft Q&A 1693075, "Why is Entra ID sending 'Add' Operations instead
  // of 'Replace'"). No schema says such a list is multi-valued, so the add sets it: appended, the
  // values the source dropped would stay for good.
  it("sets the list by path and without, strings and objects alike", () => {
    const stored = user({ department_ids: [{ value: "2" }], tags: ["a"], level: 3 });
    const out = applyUserPatch(
      stored,
      ops([
        { op: "Add", path: `${ACME}:department_ids`, value: [{ value: "1" }] },
        { op: "Add", value: { [`${ACME}:tags`]: ["b"] } },
      ]),
    );
    expect(out[ACME]).toEqual({ department_ids: [{ value: "1" }], tags: ["b"], level: 3 });
  });

  it("a known multi-valued attribute still gets the values added (RFC 7644 §3.5.2.1)", () => {
    const stored = { ...user({}), emails: [{ value: "a@example.com", type: "work" }] };
    const out = applyUserPatch(
      stored,
      ops([{ op: "add", path: "emails", value: [{ value: "b@example.com" }] }]),
    );
    expect(out.emails).toEqual([{ value: "a@example.com", type: "work" }, { value: "b@example.com" }]);
  });
});

describe("add or replace of an object held by a custom extension (RFC 7644 §3.5.2.3)", () => {
  const stored = user({ site: { city: "Berlin", zip: "10115" }, costCenter: "4711" });

  it("sets the sub-attributes the value names and leaves the others, by path and without", () => {
    for (const op of ["add", "replace"]) {
      expect(
        applyUserPatch(stored, ops([{ op, path: `${ACME}:site`, value: { city: "Bonn" } }]))[ACME],
      ).toEqual({ site: { city: "Bonn", zip: "10115" }, costCenter: "4711" });
      expect(
        applyUserPatch(stored, ops([{ op, value: { [ACME]: { site: { city: "Bonn" } } } }]))[ACME],
      ).toEqual({
        site: { city: "Bonn", zip: "10115" },
        costCenter: "4711",
      });
    }
  });

  it("a sub-attribute given as null is unassigned (RFC 7643 §2.5); nothing left, the object goes", () => {
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:site`, value: { city: null } }]))[ACME],
    ).toEqual({ site: { zip: "10115" }, costCenter: "4711" });
    expect(
      applyUserPatch(
        stored,
        ops([{ op: "replace", path: `${ACME}:site`, value: { city: null, zip: null } }]),
      )[ACME],
    ).toEqual({ costCenter: "4711" });
  });

  it("a value that is no object, or an attribute holding none, is set as given", () => {
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:site`, value: "Bonn" }]))[ACME],
    ).toEqual({
      site: "Bonn",
      costCenter: "4711",
    });
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:costCenter`, value: { code: "4712" } }]))[
        ACME
      ],
    ).toEqual({ site: { city: "Berlin", zip: "10115" }, costCenter: { code: "4712" } });
  });
});

describe("a value filter on a list of plain values of a custom extension", () => {
  const stored = user({ tags: ["a", "b", "c"] });

  it("remove removes the values it matches (RFC 7644 §3.5.2.2), in any case, and keeps the others", () => {
    expect(applyUserPatch(stored, ops([{ op: "remove", path: `${ACME}:tags[value eq "b"]` }]))[ACME]).toEqual(
      {
        tags: ["a", "c"],
      },
    );
    expect(
      applyUserPatch(stored, ops([{ op: "remove", path: `${ACME}:tags[value eq "A" or value eq "c"]` }]))[
        ACME
      ],
    ).toEqual({ tags: ["b"] });
    expect(
      applyUserPatch(stored, ops([{ op: "remove", path: `${ACME}:tags[value ne "zzz"]` }]))[ACME],
    ).toBeUndefined();
  });

  it("replace swaps the matching value for the one given", () => {
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:tags[value eq "b"]`, value: "x" }]))[ACME],
    ).toEqual({ tags: ["a", "x", "c"] });
  });

  it("a filter matching nothing removes nothing; objects of such a list are matched as before", () => {
    expect(applyUserPatch(stored, ops([{ op: "remove", path: `${ACME}:tags[value eq "q"]` }]))[ACME]).toEqual(
      {
        tags: ["a", "b", "c"],
      },
    );
    const badges = user({ badges: [{ type: "x", value: "1" }, "2"] });
    expect(
      applyUserPatch(badges, ops([{ op: "remove", path: `${ACME}:badges[type eq "x"]` }]))[ACME],
    ).toEqual({ badges: ["2"] });
  });
});

describe("the same value filter in a query", () => {
  it("matches a list of plain values by its elements, in any case; null elements match nothing", () => {
    const stored = { ...user({ tags: ["a", null, "B"] }), id: "u1" };
    const matches = (f: string) => matchesFilter(parseFilter(f, "User"), stored);
    expect(matches(`${ACME}:tags[value eq "b"]`)).toBe(true);
    expect(matches(`${ACME}:tags[value eq "q"]`)).toBe(false);
    expect(matches(`${ACME}:tags[value sw "a" or value eq "q"]`)).toBe(true);
    expect(matches(`${ACME}:tags[value eq null]`)).toBe(false);
  });
});

describe("review of round k: a value filter selecting plain values keeps the attribute's shape", () => {
  it("a single plain value replaced through a value filter stays a single value (3 becomes 4, not [4])", () => {
    const stored = user({ level: 3, site: { city: "Berlin" } });
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:level[value eq 3]`, value: 4 }]))[ACME],
    ).toEqual({ level: 4, site: { city: "Berlin" } });
    expect(
      applyUserPatch(stored, ops([{ op: "add", path: `${ACME}:level[value eq 3]`, value: 4 }]))[ACME],
    ).toEqual({ level: 4, site: { city: "Berlin" } });
    expect(
      applyUserPatch(
        stored,
        ops([{ op: "replace", path: `${ACME}:site[city eq "Berlin"]`, value: { city: "Rome" } }]),
      )[ACME],
    ).toEqual({ level: 3, site: { city: "Rome" } });
  });

  it("an object given for a plain value the filter selects takes its place, by add as by replace", () => {
    // A plain value has no sub-attributes to keep: the add spread "abc" as {0: "a", 1: "b", 2: "c"}
    // and merged the value given into that.
    const stored = user({ tags: ["a", "abc"] });
    for (const op of ["add", "replace"]) {
      expect(
        applyUserPatch(stored, ops([{ op, path: `${ACME}:tags[value eq "abc"]`, value: { value: "x" } }]))[
          ACME
        ],
      ).toEqual({ tags: ["a", { value: "x" }] });
    }
  });
});

describe("review of round k: null sub-attributes of a custom extension's object are unassigned", () => {
  it("also when the object does not exist yet (RFC 7643 §2.5): the nulls are not stored", () => {
    const stored = user({ costCenter: "4711" });
    for (const op of ["add", "replace"]) {
      expect(
        applyUserPatch(stored, ops([{ op, path: `${ACME}:site`, value: { city: "Bonn", zip: null } }]))[ACME],
      ).toEqual({ site: { city: "Bonn" }, costCenter: "4711" });
      expect(
        applyUserPatch(stored, ops([{ op, value: { [ACME]: { site: { city: null } } } }]))[ACME],
      ).toEqual({ costCenter: "4711" });
    }
  });
});

describe("review of round k: `.value` of a plain value a filter selects is that value", () => {
  const stored = user({ tags: ["a", "b"] });

  it('remove of tags[value eq "a"].value removes "a" (it answered 200 and kept it)', () => {
    expect(
      applyUserPatch(stored, ops([{ op: "remove", path: `${ACME}:tags[value eq "a"].value` }]))[ACME],
    ).toEqual({ tags: ["b"] });
  });

  it("replace of it puts the value given in its place, a plain value still (not {value: …})", () => {
    expect(
      applyUserPatch(stored, ops([{ op: "replace", path: `${ACME}:tags[value eq "a"].value`, value: "z" }]))[
        ACME
      ],
    ).toEqual({ tags: ["z", "b"] });
  });
});

describe("review of round k: a filter naming a prototype key (constructor, toString) finds nothing", () => {
  // Read as `element[name]`, an attribute nobody set was found on Object.prototype: the filter
  // matched every element (every user in a query), and a PATCH remove took them all.
  const stored = { ...user({ tags: ["a", "b"] }), emails: [{ value: "a@example.com", type: "work" }] };

  it("in a query", () => {
    const matches = (f: string) => matchesFilter(parseFilter(f, "User"), { ...stored, id: "u1" });
    for (const f of [
      "constructor pr",
      "toString pr",
      "emails[constructor pr]",
      "emails.hasOwnProperty pr",
      `${ACME}:tags[constructor pr]`,
    ])
      expect(matches(f), f).toBe(false);
  });

  it("in a PATCH path: the remove removes nothing", () => {
    const out = applyUserPatch(
      stored,
      ops([
        { op: "remove", path: "emails[constructor pr]" },
        { op: "remove", path: `${ACME}:tags[toString pr]` },
      ]),
    );
    expect(out.emails).toEqual([{ value: "a@example.com", type: "work" }]);
    expect(out[ACME]).toEqual({ tags: ["a", "b"] });
  });
});
