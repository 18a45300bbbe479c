import { describe, expect, it } from "vitest";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const user: JsonObject = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
  id: "2819c223-7f76-453a-919d-413861904646",
  externalId: "Ext-ABC",
  userName: "Bjensen@Example.com",
  displayName: "Babs Jensen",
  name: { givenName: "Barbara", familyName: "Jensen" },
  title: "Tour Guide",
  active: true,
  emails: [
    { value: "bjensen@example.com", type: "work", primary: true },
    { value: "babs@jensen.org", type: "home" },
  ],
  addresses: [{ type: "work", country: "US", locality: "Hollywood" }],
  loginCount: 7,
  [ENT]: { department: "Tour Operations", manager: { value: "26118915-6090-4610-87e4-49d8ca9f808d" } },
  meta: {
    resourceType: "User",
    created: "2010-01-23T04:56:22Z",
    lastModified: "2011-05-13T04:42:34.000Z",
    version: 'W/"3"',
  },
};

const matches = (filter: string, resource: JsonObject = user) => matchesFilter(parseFilter(filter), resource);

describe("matchesFilter (RFC 7644 §3.4.2.2)", () => {
  it("compares userName, displayName and emails case-insensitively", () => {
    expect(matches('userName eq "bjensen@example.com"')).toBe(true);
    expect(matches('displayName eq "BABS JENSEN"')).toBe(true);
    expect(matches('emails.value eq "BJENSEN@EXAMPLE.COM"')).toBe(true);
    expect(matches('name.givenName eq "barbara"')).toBe(true);
    expect(matches('title sw "tour"')).toBe(true);
  });

  it("compares id and externalId case-exactly", () => {
    expect(matches('externalId eq "Ext-ABC"')).toBe(true);
    expect(matches('externalId eq "ext-abc"')).toBe(false);
    expect(matches('id eq "2819C223-7F76-453A-919D-413861904646"')).toBe(false);
    expect(matches('id eq "2819c223-7f76-453a-919d-413861904646"')).toBe(true);
  });

  it("matches a multi-valued attribute when any value matches", () => {
    expect(matches('emails.value eq "babs@jensen.org"')).toBe(true);
    expect(matches('emails.type eq "home"')).toBe(true);
    expect(matches('emails.type eq "other"')).toBe(false);
  });

  it("compares a complex multi-valued attribute by its value", () => {
    expect(matches('emails eq "babs@jensen.org"')).toBe(true);
    expect(matches('emails co "jensen"')).toBe(true);
    expect(matches('emails eq "nobody@x.com"')).toBe(false);
  });

  it("evaluates a value path against one element at a time", () => {
    expect(matches('emails[type eq "work" and value co "@example.com"]')).toBe(true);
    // work + jensen.org are on different elements
    expect(matches('emails[type eq "work" and value co "@jensen.org"]')).toBe(false);
    expect(matches('addresses[type eq "work" and country eq "us"]')).toBe(true);
  });

  it("implements co, sw, ew", () => {
    expect(matches('userName co "JENSEN@"')).toBe(true);
    expect(matches('userName sw "bjen"')).toBe(true);
    expect(matches('userName ew ".COM"')).toBe(true);
    expect(matches('userName ew ".org"')).toBe(false);
  });

  it("orders strings lexicographically", () => {
    expect(matches('title gt "A"')).toBe(true);
    expect(matches('title lt "a"')).toBe(false);
    expect(matches('title ge "tour guide"')).toBe(true);
    expect(matches('title le "TOUR GUIDE"')).toBe(true);
  });

  it("orders dateTimes as instants", () => {
    expect(matches('meta.lastModified gt "2011-05-13T04:42:33Z"')).toBe(true);
    expect(matches('meta.lastModified ge "2011-05-13T04:42:34Z"')).toBe(true);
    expect(matches('meta.lastModified gt "2011-05-13T04:42:34Z"')).toBe(false);
    expect(matches('meta.lastModified lt "2011-05-13T06:42:34+02:00"')).toBe(false);
    expect(matches('meta.lastModified eq "2011-05-13T04:42:34Z"')).toBe(true);
    expect(matches('meta.created lt "2011-01-01T00:00:00Z"')).toBe(true);
  });

  it("orders numbers numerically", () => {
    expect(matches("loginCount gt 6")).toBe(true);
    expect(matches("loginCount ge 7")).toBe(true);
    expect(matches("loginCount lt 7")).toBe(false);
    expect(matches("loginCount eq 7")).toBe(true);
  });

  it("compares booleans", () => {
    expect(matches("active eq true")).toBe(true);
    expect(matches("active eq false")).toBe(false);
    expect(matches("emails[primary eq true]")).toBe(true);
    expect(matches("active ne false")).toBe(true);
  });

  it("treats pr as present and non-empty", () => {
    expect(matches("title pr")).toBe(true);
    expect(matches("nickName pr")).toBe(false);
    expect(matches("emails pr")).toBe(true);
    expect(matches("title pr", { ...user, title: "" })).toBe(false);
    expect(matches("emails pr", { ...user, emails: [] })).toBe(false);
    expect(matches("name pr", { ...user, name: {} })).toBe(false);
    expect(matches("title pr", { ...user, title: null })).toBe(false);
  });

  it("evaluates not, and, or", () => {
    expect(matches('not (userName eq "x")')).toBe(true);
    expect(matches('userName eq "x" or title pr')).toBe(true);
    expect(matches('userName eq "x" and title pr')).toBe(false);
    expect(matches('not (emails[type eq "work"])')).toBe(false);
  });

  it("treats ne as not eq, so an absent attribute is ne anything", () => {
    expect(matches('nickName ne "x"')).toBe(true);
    expect(matches('userName ne "BJENSEN@example.com"')).toBe(false);
  });

  it("matches eq null when the attribute is absent", () => {
    expect(matches("nickName eq null")).toBe(true);
    expect(matches("title eq null")).toBe(false);
  });

  it("reads extension attributes under their URN", () => {
    expect(matches(`${ENT}:department eq "tour operations"`)).toBe(true);
    expect(matches(`${ENT}:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"`)).toBe(true);
    expect(matches(`${ENT}:department pr`, { ...user, [ENT]: {} })).toBe(false);
  });

  it("accepts the URN-prefixed form of core attributes", () => {
    expect(matches('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "BJENSEN@EXAMPLE.COM"')).toBe(
      true,
    );
  });

  it("reads attribute keys case-insensitively from non-canonical documents", () => {
    expect(matches('userName eq "a"', { UserName: "A" })).toBe(true);
  });

  it("never matches across types", () => {
    // loginCount is in no schema: its literal is not coerced, so "7" is not 7.
    expect(matches('loginCount eq "7"')).toBe(false);
    // A string the boolean attribute cannot take (a coercible one, "true", matches: see below).
    expect(matches('active eq "maybe"')).toBe(false);
    expect(matches("title gt 5")).toBe(false);
  });

  it("compares a boolean attribute with a boolean string as a boolean (Entra)", () => {
    for (const literal of ['"true"', '"True"', '"TRUE"', '" true "', "true"]) {
      expect(matches(`active eq ${literal}`)).toBe(true);
      expect(matches(`active eq ${literal}`, { ...user, active: false })).toBe(false);
    }
    expect(matches('active ne "false"')).toBe(true);
    expect(matches('active ne "False"', { ...user, active: false })).toBe(false);
    expect(matches('active eq "False"', { ...user, active: false })).toBe(true);
    expect(matches('emails[primary eq "True"]')).toBe(true);
    expect(matches('emails[type eq "home" and primary eq "true"]')).toBe(false);
    expect(matches('emails.primary eq "true"')).toBe(true);
    expect(matches('emails[type eq "work"].primary eq "True"')).toBe(true);
  });

  it("an uncoercible literal matches nothing with eq and everything with ne", () => {
    expect(matches('active eq "maybe"')).toBe(false);
    expect(matches('active eq "maybe"', { ...user, active: false })).toBe(false);
    expect(matches('active ne "maybe"')).toBe(true);
    expect(matches("active eq 1")).toBe(false);
  });

  it("evaluates meta.resourceType and group displayName", () => {
    const group: JsonObject = { id: "g1", displayName: "Admins", meta: { resourceType: "Group" } };
    expect(matches('displayName eq "admins"', group)).toBe(true);
    expect(matches('meta.resourceType eq "Group"', group)).toBe(true);
  });
});
