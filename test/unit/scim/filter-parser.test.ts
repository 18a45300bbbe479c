import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import type { AttrDef } from "../../../src/scim/attribute-schema.js";
import { coerceLiteral, parseFilter, parseFilterWithin } from "../../../src/scim/filter-parser.js";
import { loadFixture } from "./load-fixture.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

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

describe("parseFilter (RFC 7644 §3.4.2.2)", () => {
  it.each(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"])("parses the %s operator", (op) => {
    expect(parseFilter(`title ${op} "x"`)).toEqual({ type: "compare", path: "title", op, value: "x" });
  });

  it("parses pr", () => {
    expect(parseFilter("title pr")).toEqual({ type: "present", path: "title" });
  });

  it("treats operators and keywords case-insensitively", () => {
    expect(parseFilter('userName EQ "a" AND NOT (title Pr) Or active eq TRUE')).toEqual({
      type: "or",
      left: {
        type: "and",
        left: { type: "compare", path: "userName", op: "eq", value: "a" },
        right: { type: "not", expr: { type: "present", path: "title" } },
      },
      right: { type: "compare", path: "active", op: "eq", value: true },
    });
  });

  it("binds and tighter than or", () => {
    const n = parseFilter('a eq "1" or b eq "2" and c eq "3"');
    expect(n).toMatchObject({ type: "or", left: { path: "a" }, right: { type: "and" } });
  });

  it("binds not tighter than and", () => {
    const n = parseFilter('not (a eq "1") and b eq "2"');
    expect(n).toMatchObject({ type: "and", left: { type: "not" }, right: { path: "b" } });
  });

  it("groups with parentheses", () => {
    const n = parseFilter('(a eq "1" or b eq "2") and c eq "3"');
    expect(n).toMatchObject({ type: "and", left: { type: "or" }, right: { path: "c" } });
  });

  it("associates or/and to the left", () => {
    const n = parseFilter('a eq "1" or b eq "2" or c eq "3"');
    expect(n).toMatchObject({ type: "or", left: { type: "or" }, right: { path: "c" } });
  });

  it("parses a value path with a logical filter inside", () => {
    expect(parseFilter('emails[type eq "work" and value co "@x.com"]')).toEqual({
      type: "valuePath",
      path: "emails",
      filter: {
        type: "and",
        left: { type: "compare", path: "type", op: "eq", value: "work" },
        right: { type: "compare", path: "value", op: "co", value: "@x.com" },
      },
    });
  });

  it("combines a value path with other expressions", () => {
    const n = parseFilter('userType eq "Employee" and (emails[type eq "work"] or not (emails pr))');
    expect(n).toMatchObject({ type: "and", right: { type: "or", left: { type: "valuePath" } } });
  });

  it("parses sub-attribute paths", () => {
    expect(parseFilter('name.givenName sw "Ba"')).toMatchObject({ path: "name.givenName" });
    expect(parseFilter('emails.value ew "@x.com"')).toMatchObject({ path: "emails.value" });
    expect(parseFilter('meta.lastModified gt "2011-05-13T04:42:34Z"')).toMatchObject({
      path: "meta.lastModified",
      op: "gt",
    });
  });

  it("normalises attribute names to the schema's case", () => {
    expect(parseFilter('USERNAME eq "a"')).toMatchObject({ path: "userName" });
    expect(parseFilter('NAME.GIVENNAME eq "a"')).toMatchObject({ path: "name.givenName" });
    expect(parseFilter('EMAILS[TYPE eq "work"]')).toMatchObject({ path: "emails", filter: { path: "type" } });
    expect(parseFilter("meta.LASTMODIFIED pr")).toMatchObject({ path: "meta.lastModified" });
    expect(parseFilter('EXTERNALID eq "a"')).toMatchObject({ path: "externalId" });
  });

  it("keeps unknown attribute names as given", () => {
    expect(parseFilter('customThing eq "a"')).toMatchObject({ path: "customThing" });
  });

  it("drops the core schema URN prefix", () => {
    expect(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"')).toMatchObject({
      path: "userName",
    });
    expect(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:name.familyName eq "a"')).toMatchObject({
      path: "name.familyName",
    });
  });

  it("keeps an extension URN prefix in canonical case", () => {
    expect(parseFilter(`${ENT}:department eq "Sales"`)).toMatchObject({ path: `${ENT}:department` });
    expect(parseFilter(`${ENT.toUpperCase()}:DEPARTMENT eq "Sales"`)).toMatchObject({
      path: `${ENT}:department`,
    });
    expect(parseFilter(`${ENT}:manager.value eq "42"`)).toMatchObject({ path: `${ENT}:manager.value` });
  });

  it("parses string literals with JSON escapes", () => {
    expect(parseFilter(String.raw`displayName eq "a \"quoted\" \\ name \u00e9"`)).toMatchObject({
      value: 'a "quoted" \\ name é',
    });
    expect(parseFilter('displayName eq "and or not ( ) [ ]"')).toMatchObject({ value: "and or not ( ) [ ]" });
  });

  it("parses numbers, booleans and null", () => {
    expect(parseFilter("x eq 42")).toMatchObject({ value: 42 });
    expect(parseFilter("x gt -1.5e3")).toMatchObject({ value: -1500 });
    expect(parseFilter("active eq false")).toMatchObject({ value: false });
    expect(parseFilter("title eq null")).toMatchObject({ value: null });
  });

  it("parses the filters Okta and Entra send", () => {
    expect(parseFilter(loadFixture("okta/filter-username").body.filter)).toEqual({
      type: "compare",
      path: "userName",
      op: "eq",
      value: "test.user@okta.local",
    });
    expect(parseFilter(loadFixture("entra/filter-username").body.filter)).toMatchObject({ path: "userName" });
  });

  describe("rejects with invalidFilter", () => {
    it.each([
      ["an empty filter", ""],
      ["a missing value", "userName eq"],
      ["an unknown operator", 'userName like "a"'],
      ["an unterminated string", 'userName eq "a'],
      ["a bad escape", String.raw`userName eq "\x"`],
      ["an unquoted string value", "userName eq bob"],
      ["a missing closing parenthesis", '(userName eq "a"'],
      ["a stray closing parenthesis", 'userName eq "a")'],
      ["a missing closing bracket", 'emails[type eq "work"'],
      ["a dangling and", 'userName eq "a" and'],
      ["two expressions without a logical operator", 'a eq "1" b eq "2"'],
      ["gt with a boolean", "active gt true"],
      ["le with null", "title le null"],
      ["a bad attribute name", '1abc eq "x"'],
    ])("%s", (_name, text) => {
      parseError(text);
    });

    it("a nested value path", () => {
      expect(parseError('emails[type eq "work" and x[y eq "z"]]').message).toMatch(/nested value path/);
    });

    it("with a message naming the position of the problem", () => {
      expect(parseError('userName zz "a"').message).toMatch(/unknown operator "zz" at position 10/);
    });

    it("when too deeply nested", () => {
      parseError(`${"(".repeat(60)}a eq "1"${")".repeat(60)}`);
    });
  });
});

describe("an attribute path after a value filter (the PATCH path form sent as a filter)", () => {
  it('reads emails[type eq "work"].value eq "x" as one element meeting both', () => {
    expect(parseFilter('emails[type eq "work"].value eq "w@x.com"')).toEqual({
      type: "valuePath",
      path: "emails",
      filter: {
        type: "and",
        left: { type: "compare", path: "type", op: "eq", value: "work" },
        right: { type: "compare", path: "value", op: "eq", value: "w@x.com" },
      },
    });
  });

  it("refuses a name that is not a sub-attribute path", () => {
    expect(() => parseFilter('emails[type eq "work"].value.x eq "w"')).toThrow(
      /invalidFilter|not a sub-attribute/,
    );
  });
});

describe("coerceLiteral: a literal in its attribute's schema type", () => {
  const def = (type: AttrDef["type"]): AttrDef => ({
    name: "x",
    type,
    multiValued: false,
    caseExact: false,
    required: false,
    mutability: "readWrite",
    returned: "default",
  });

  it("reads boolean strings as booleans for a boolean attribute, as intake does", () => {
    expect(coerceLiteral(def("boolean"), "true")).toBe(true);
    expect(coerceLiteral(def("boolean"), "True")).toBe(true);
    expect(coerceLiteral(def("boolean"), "FALSE")).toBe(false);
    expect(coerceLiteral(def("boolean"), true)).toBe(true);
  });

  it("reads numeric strings as numbers for a number-typed attribute", () => {
    expect(coerceLiteral(def("integer"), "42")).toBe(42);
    expect(coerceLiteral(def("decimal"), "-1.5e2")).toBe(-150);
    expect(coerceLiteral(def("integer"), " 7 ")).toBe(7);
    expect(coerceLiteral(def("integer"), 7)).toBe(7);
  });

  it("keeps what cannot be coerced, and everything of other types", () => {
    expect(coerceLiteral(def("boolean"), "maybe")).toBe("maybe");
    expect(coerceLiteral(def("boolean"), 1)).toBe(1);
    expect(coerceLiteral(def("integer"), "4x")).toBe("4x");
    expect(coerceLiteral(def("integer"), "0x10")).toBe("0x10");
    expect(coerceLiteral(def("string"), "true")).toBe("true");
    expect(coerceLiteral(def("dateTime"), "42")).toBe("42");
    expect(coerceLiteral(undefined, "true")).toBe("true");
    expect(coerceLiteral(def("boolean"), null)).toBeNull();
  });

  it("is applied by the parser with the attribute's definition", () => {
    expect(parseFilter('active eq "True"')).toEqual({
      type: "compare",
      path: "active",
      op: "eq",
      value: true,
    });
    expect(parseFilter('active ne "false"')).toMatchObject({ op: "ne", value: false });
    expect(parseFilter('active eq "maybe"')).toMatchObject({ value: "maybe" });
    expect(parseFilter('emails[primary eq "true"]')).toMatchObject({
      type: "valuePath",
      filter: { path: "primary", value: true },
    });
    expect(parseFilter('emails.primary eq "true"')).toMatchObject({ path: "emails.primary", value: true });
    // String attributes keep their string, even one that reads as a boolean or a number.
    expect(parseFilter('userName eq "true"')).toMatchObject({ value: "true" });
    expect(parseFilter('externalId eq "12345"')).toMatchObject({ value: "12345" });
    expect(parseFilter('x eq "true"')).toMatchObject({ value: "true" });
  });

  it("coerces in PATCH value filters too (a sub-attribute table)", () => {
    const emails = parseFilterWithin('primary eq "True"', new Map([["primary", def("boolean")]]), true);
    expect(emails).toMatchObject({ value: true });
  });
});

const textDef: AttrDef = {
  name: "userName",
  type: "string",
  multiValued: false,
  caseExact: false,
  required: false,
  mutability: "readWrite",
  returned: "default",
};

describe("a literal compared with an attribute stored trimmed (userName, a Group's displayName)", () => {
  const OPS = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"];

  it.each(["eq", "ne"])(
    "trims a userName or displayName literal for %s, as intake trims the stored name",
    (op) => {
      expect(parseFilter(`userName ${op} " ada@example.com "`)).toEqual({
        type: "compare",
        path: "userName",
        op,
        value: "ada@example.com",
      });
      expect(parseFilter(`displayName ${op} "\u00a0Admins\\t"`)).toMatchObject({ value: "Admins" });
      expect(parseFilter(`USERNAME ${op} " x "`)).toMatchObject({ path: "userName", value: "x" });
    },
  );

  it.each(OPS.filter((op) => op !== "eq" && op !== "ne"))(
    "keeps a userName or displayName literal as sent for %s (only a whole-name comparison trims)",
    (op) => {
      expect(parseFilter(`userName ${op} " ada@example.com "`)).toEqual({
        type: "compare",
        path: "userName",
        op,
        value: " ada@example.com ",
      });
      expect(parseFilter(`displayName ${op} "\u00a0Admins\\t"`)).toMatchObject({ value: "\u00a0Admins\t" });
      expect(parseFilter(`USERNAME ${op} " x "`)).toMatchObject({ path: "userName", value: " x " });
    },
  );

  it("trims them wherever they appear in the filter, and with a core schema URN", () => {
    expect(parseFilter('userName eq " a " or (active eq true and not (displayName ne " Ops"))')).toEqual({
      type: "or",
      left: { type: "compare", path: "userName", op: "eq", value: "a" },
      right: {
        type: "and",
        left: { type: "compare", path: "active", op: "eq", value: true },
        right: { type: "not", expr: { type: "compare", path: "displayName", op: "ne", value: "Ops" } },
      },
    });
    expect(
      parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq " ada@example.com "'),
    ).toMatchObject({ path: "userName", value: "ada@example.com" });
    expect(
      parseFilter('urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq " Admins "'),
    ).toMatchObject({ path: "displayName", value: "Admins" });
  });

  it("keeps the literal of every other attribute as it is", () => {
    expect(parseFilter('externalId eq " E-1 "')).toMatchObject({ value: " E-1 " });
    expect(parseFilter('emails eq " a@x.com "')).toMatchObject({ value: " a@x.com " });
    expect(parseFilter('emails.value eq " a@x.com "')).toMatchObject({ value: " a@x.com " });
    expect(parseFilter('emails[value eq " a@x.com "]')).toMatchObject({ filter: { value: " a@x.com " } });
    expect(parseFilter('emails[type eq "work"].display eq " x "')).toMatchObject({
      filter: { right: { path: "display", value: " x " } },
    });
    expect(parseFilter('name.formatted eq " Ada "')).toMatchObject({ value: " Ada " });
    expect(parseFilter('members[display eq " Ada "]')).toMatchObject({ filter: { value: " Ada " } });
    expect(parseFilter('title eq " x "')).toMatchObject({ value: " x " });
    expect(parseFilter(`${ENT}:manager.displayName eq " Boss "`)).toMatchObject({ value: " Boss " });
    // A PATCH value filter resolves against a complex attribute's sub-attributes: never trimmed.
    const members = new Map([["display", { ...textDef, name: "display" }]]);
    expect(parseFilterWithin('display eq " Ada "', members, true)).toMatchObject({ value: " Ada " });
  });

  it("given the resource type, trims only that type's name (a User's displayName is stored as given)", () => {
    expect(parseFilter('displayName eq " Ada "', "User")).toMatchObject({ value: " Ada " });
    expect(parseFilter('userName eq " ada "', "User")).toMatchObject({ value: "ada" });
    expect(parseFilter('displayName eq " Admins "', "Group")).toMatchObject({ value: "Admins" });
  });

  it("coerceLiteral trims a string literal when told the attribute is stored trimmed", () => {
    expect(coerceLiteral(textDef, " ada@example.com ", true)).toBe("ada@example.com");
    expect(coerceLiteral(textDef, " ada@example.com ")).toBe(" ada@example.com ");
    expect(coerceLiteral(textDef, null, true)).toBeNull();
    expect(coerceLiteral(undefined, " x ", true)).toBe(" x ");
  });
});
