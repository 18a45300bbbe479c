import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { ANY_CORE_ATTRS, type AttrDef, type AttrType } from "../../../src/scim/attribute-schema.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { parseFilter, parseFilterWithin } from "../../../src/scim/filter-parser.js";
import type { FilterNode } from "../../../src/scim/filter-types.js";
import { comparisonProblem, filterProblem, isFilterDateTime } from "../../../src/scim/filter-validate.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const def = (type: AttrType): AttrDef => ({
  name: "a",
  type,
  multiValued: false,
  caseExact: false,
  required: false,
  mutability: "readWrite",
  returned: "default",
});

function parseError(text: string): BadRequestError {
  try {
    parseFilter(text);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).scimType).toBe("invalidFilter");
    return err as BadRequestError;
  }
  throw new Error(`expected ${text} to fail`);
}

const VALID_DATES = [
  "2011-05-13T04:42:34Z",
  "2026-01-01T00:00:00.123+02:00",
  "2026-01-01T00:00:00.000Z", // Okta
  "2026-01-01T00:00:00.0000000Z", // Entra ID / .NET "o"
  "2026-01-01T00:00:00-05:00",
  "2026-01-01T00:00:00+0530",
  "2026-01-01T00:00:00", // no offset: xsd:dateTime allows it
  "2026-01-01T00:00Z",
  "2026-01-01 00:00:00Z",
  "2026-01-01t00:00:00z",
  "2026-01-01",
  "2024-02-29T12:00:00Z",
  "2000-02-29",
];

const INVALID_DATES = [
  "garbage",
  "",
  "garbage 2020", // Date.parse reads it (as 2020): the evaluator would have ordered it as an instant
  "1",
  "2020",
  "1/2/2024",
  "Mon, 01 Jan 2024 00:00:00 GMT",
  " 2026-01-01T00:00:00Z",
  "2026-01-01T00:00:00Z ",
  "2026-13-01T00:00:00Z",
  "2026-01-32",
  "2026-02-29",
  "2024-02-30T00:00:00Z",
  "1900-02-29",
  "2026-01-01T25:00:00Z",
  "2026-01-01T23:60:00Z",
  "2026-01-01T00:00:60Z",
  "2026-01-01T00:00:00+99:99",
  "2026-01-01T00:00:00.Z",
  "2026-01-01T00:00:00,5Z",
  "2026-01-01T1:00:00Z",
  "12026-01-01T00:00:00Z",
  "2026-01-01T",
];

describe("isFilterDateTime (RFC 7643 §2.3.5)", () => {
  it.each(VALID_DATES)("accepts %j", (text) => {
    expect(isFilterDateTime(text)).toBe(true);
    // and the evaluator orders it as an instant
    expect(Number.isNaN(Date.parse(text))).toBe(false);
  });

  it.each(INVALID_DATES)("refuses %j", (text) => {
    expect(isFilterDateTime(text)).toBe(false);
  });
});

describe("comparisonProblem", () => {
  it.each(["gt", "ge", "lt", "le"] as const)(
    "refuses %s on a boolean or binary attribute, whatever the value",
    (op) => {
      for (const value of [true, "true", "True", 1, "x"]) {
        expect(comparisonProblem("active", def("boolean"), op, value)).toMatch(
          new RegExp(`"${op}" cannot compare "active", a boolean attribute`),
        );
        expect(comparisonProblem("x509Certificates.value", def("binary"), op, value)).toMatch(
          /binary attribute/,
        );
      }
    },
  );

  it("lets eq, ne, co, sw, ew and pr-like comparisons of a boolean through", () => {
    for (const op of ["eq", "ne", "co", "sw", "ew"] as const) {
      expect(comparisonProblem("active", def("boolean"), op, true)).toBeUndefined();
      expect(comparisonProblem("active", def("boolean"), op, "maybe")).toBeUndefined();
    }
  });

  it.each(["eq", "ne", "gt", "ge", "lt", "le"] as const)(
    "refuses %s of a dateTime with what is not one",
    (op) => {
      expect(comparisonProblem("meta.lastModified", def("dateTime"), op, "garbage")).toBe(
        '"meta.lastModified" is a dateTime and "garbage" is not one ' +
          '(RFC 7643 §2.3.5: an xsd:dateTime such as "2011-05-13T04:42:34Z")',
      );
      expect(comparisonProblem("meta.created", def("dateTime"), op, 2020)).toMatch(
        /"meta.created" is a dateTime and 2020/,
      );
      for (const text of VALID_DATES) {
        expect(comparisonProblem("meta.lastModified", def("dateTime"), op, text)).toBeUndefined();
      }
    },
  );

  it("lets a dateTime be compared with null (absent) and by co, sw, ew (its text)", () => {
    expect(comparisonProblem("meta.created", def("dateTime"), "eq", null)).toBeUndefined();
    expect(comparisonProblem("meta.created", def("dateTime"), "ne", null)).toBeUndefined();
    for (const op of ["co", "sw", "ew"] as const) {
      expect(comparisonProblem("meta.created", def("dateTime"), op, "2026-")).toBeUndefined();
    }
  });

  it("checks nothing else: strings, numbers, references, unknown attributes", () => {
    for (const type of ["string", "integer", "decimal", "reference", "complex"] as const) {
      expect(comparisonProblem("a", def(type), "gt", "garbage")).toBeUndefined();
    }
    expect(comparisonProblem("custom", undefined, "gt", "garbage")).toBeUndefined();
  });

  it("cuts a long value short in the message", () => {
    const problem = comparisonProblem("meta.created", def("dateTime"), "gt", "x".repeat(5000));
    expect(problem?.length).toBeLessThan(200);
  });
});

describe("filterProblem: over a parsed tree and the schema", () => {
  const cmp = (path: string, op: "gt" | "eq", value: string | boolean): FilterNode => ({
    type: "compare",
    path,
    op,
    value,
  });

  it("finds the problem wherever it is in the tree", () => {
    const bad = cmp("meta.lastModified", "gt", "garbage");
    const good = cmp("userName", "eq", "a");
    for (const node of [
      bad,
      { type: "and", left: good, right: bad },
      { type: "or", left: bad, right: good },
      { type: "not", expr: { type: "or", left: good, right: bad } },
    ] satisfies FilterNode[]) {
      expect(filterProblem(node, ANY_CORE_ATTRS)).toMatch(/"meta.lastModified" is a dateTime/);
    }
    expect(
      filterProblem(
        { type: "and", left: good, right: { type: "present", path: "meta.created" } },
        ANY_CORE_ATTRS,
      ),
    ).toBeUndefined();
  });

  it("resolves a value path's filter against the attribute's sub-attributes", () => {
    const node: FilterNode = { type: "valuePath", path: "emails", filter: cmp("primary", "gt", true) };
    expect(filterProblem(node, ANY_CORE_ATTRS)).toMatch(/"gt" cannot compare "primary", a boolean attribute/);
    const fine: FilterNode = { type: "valuePath", path: "emails", filter: cmp("type", "eq", "work") };
    expect(filterProblem(fine, ANY_CORE_ATTRS)).toBeUndefined();
  });

  it("is pure: the same answer every time, and the tree is left as it was", () => {
    const node = parseFilter('meta.lastModified gt "2026-01-01T00:00:00Z" and active eq true');
    const copy = structuredClone(node);
    expect(filterProblem(node, ANY_CORE_ATTRS)).toBeUndefined();
    expect(filterProblem(node, ANY_CORE_ATTRS)).toBeUndefined();
    expect(node).toEqual(copy);
  });
});

describe("parseFilter refuses, with invalidFilter, a comparison the attribute's type cannot answer", () => {
  it.each([
    ['meta.lastModified gt "garbage"', /"meta.lastModified" is a dateTime and "garbage" is not one/],
    ['meta.created le "yesterday"', /"meta.created" is a dateTime/],
    ['meta.lastModified eq "2026-02-30T00:00:00Z"', /"meta.lastModified" is a dateTime/],
    ['META.LASTMODIFIED ge "garbage 2020"', /"meta.lastModified" is a dateTime/],
    [
      'urn:ietf:params:scim:schemas:core:2.0:User:meta.lastModified lt "x"',
      /"meta.lastModified" is a dateTime/,
    ],
    ["meta.created gt 2020", /"meta.created" is a dateTime and 2020/],
    ['userName eq "a" or meta.lastModified ne "garbage"', /"meta.lastModified" is a dateTime/],
    ['not (meta.lastModified gt "garbage")', /"meta.lastModified" is a dateTime/],
    ['active gt "true"', /"gt" cannot compare "active", a boolean attribute/],
    ["active le 1", /"le" cannot compare "active", a boolean attribute/],
    ['emails[primary ge "True"]', /"ge" cannot compare "primary", a boolean attribute/],
    ['emails.primary lt "false"', /"lt" cannot compare "emails.primary", a boolean attribute/],
    ['x509Certificates.value gt "TUlJ"', /binary attribute/],
    ["active gt true", /"gt" cannot compare with true/],
  ])("%s", (text, message) => {
    expect(parseError(text).message).toMatch(message);
  });

  it("and so in a PATCH value filter (a sub-attribute table)", () => {
    const emails = ANY_CORE_ATTRS.get("emails")?.sub;
    expect(emails).toBeDefined();
    expect(() => parseFilterWithin('primary gt "true"', emails!, true)).toThrow(/boolean attribute/);
    expect(parseFilterWithin('type eq "work"', emails!, true)).toEqual({
      type: "compare",
      path: "type",
      op: "eq",
      value: "work",
    });
  });

  it("keeps every valid dateTime comparison, and they still order as instants", () => {
    const user = { meta: { lastModified: "2026-01-01T00:00:00.000Z", created: "2025-06-01T00:00:00Z" } };
    for (const text of VALID_DATES) {
      expect(() => parseFilter(`meta.lastModified gt "${text}"`)).not.toThrow();
    }
    expect(matchesFilter(parseFilter('meta.lastModified gt "2025-12-31T23:00:00.123-02:00"'), user)).toBe(
      false,
    );
    expect(matchesFilter(parseFilter('meta.lastModified gt "2026-01-01T00:00:00.123+02:00"'), user)).toBe(
      true,
    );
    expect(matchesFilter(parseFilter('meta.created lt "2025-06-02"'), user)).toBe(true);
    expect(matchesFilter(parseFilter("meta.created eq null"), user)).toBe(false);
    expect(matchesFilter(parseFilter('meta.created sw "2025-"'), user)).toBe(true);
  });

  it("keeps what it did not check: booleans by eq/ne, strings ordered, unknown and extension attributes", () => {
    expect(parseFilter('active eq "maybe"')).toMatchObject({ value: "maybe" });
    expect(parseFilter('active ne "False"')).toMatchObject({ value: false });
    expect(parseFilter('emails[primary eq "True"]')).toMatchObject({ filter: { value: true } });
    expect(parseFilter('title gt "garbage"')).toMatchObject({ op: "gt" });
    expect(parseFilter('customDate gt "garbage"')).toMatchObject({ op: "gt" });
    expect(parseFilter(`${ENT}:department lt "garbage"`)).toMatchObject({ op: "lt" });
    expect(parseFilter('urn:example:ext:2.0:User:hired gt "garbage"')).toMatchObject({ op: "gt" });
  });
});
