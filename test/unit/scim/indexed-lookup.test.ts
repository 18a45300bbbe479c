import { describe, expect, it } from "vitest";
import { indexedLookup, narrowingLookup } from "../../../src/directory/indexed-lookup.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import type { EntityKind } from "../../../src/scim/scim-types.js";

const lookup = (kind: EntityKind, filter: string) => indexedLookup(kind, parseFilter(filter));

describe("indexedLookup", () => {
  it.each([
    ["user", 'userName eq "bjensen"', "name"],
    ["user", 'USERNAME EQ "bjensen"', "name"],
    ["user", 'externalId eq "bjensen"', "externalId"],
    ["user", 'emails.value eq "bjensen"', "email"],
    ["user", 'emails eq "bjensen"', "email"],
    ["user", 'emails[value eq "bjensen"]', "email"],
    ["user", 'emails[VALUE eq "bjensen"]', "email"],
    ["user", 'id eq "bjensen"', "id"],
    ["user", 'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bjensen"', "name"],
    ["group", 'displayName eq "bjensen"', "name"],
    ["group", 'externalId eq "bjensen"', "externalId"],
    ["group", 'id eq "bjensen"', "id"],
    ["group", 'urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "bjensen"', "name"],
  ] as const)("a %s's %s goes to the %s index", (kind, filter, attribute) => {
    expect(lookup(kind, filter)).toEqual({ attribute, value: "bjensen" });
  });

  it.each([
    'userName ne "x"',
    'userName co "x"',
    "userName pr",
    'userName eq "x" and active eq true',
    'userName eq "x" or userName eq "y"',
    'not (userName eq "x")',
    "externalId eq 5",
    "userName eq null",
    'title eq "x"',
    'displayName eq "x"',
    'emails[type eq "work"]',
    'emails[value eq "x" and type eq "work"]',
    'urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "x"',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "1"',
  ])("a user filter %s scans", (filter) => {
    expect(lookup("user", filter)).toBeNull();
  });

  it.each(['userName eq "x"', 'emails.value eq "x"', 'emails[value eq "x"]', 'displayName ne "x"'])(
    "a group filter %s scans",
    (filter) => {
      expect(lookup("group", filter)).toBeNull();
    },
  );

  it("no filter scans", () => {
    expect(indexedLookup("user", undefined)).toBeNull();
  });
});

describe("narrowingLookup: candidates that a filter's matches are among", () => {
  const ID = "0b9c4a52-6d1e-4f0a-9a8e-3c2d1b0a9f8e";
  const narrow = (kind: EntityKind, filter: string) => narrowingLookup(kind, parseFilter(filter));

  it.each([
    ["group", `members eq "${ID}"`],
    ["group", `members.value eq "${ID}"`],
    ["group", `members[value eq "${ID}"]`],
    ["group", `urn:ietf:params:scim:schemas:core:2.0:Group:members eq "${ID}"`],
    ["user", `groups eq "${ID}"`],
    ["user", `groups.value eq "${ID}"`],
    ["user", `groups[value eq "${ID}"]`],
  ] as const)("a %s filter %s reads the other side's link set", (kind, filter) => {
    expect(narrow(kind, filter)).toEqual({ attribute: "linked", value: ID });
    expect(lookup(kind, filter)).toBeNull(); // never answered from the set alone
  });

  it.each([
    ["group", `members eq "${ID.toUpperCase()}"`],
    ["group", 'members eq "not-an-id"'],
    ["group", `members ne "${ID}"`],
    ["group", `members[value eq "${ID}" and type eq "User"]`],
    ["group", `members[type eq "${ID}"]`],
    ["group", `groups eq "${ID}"`],
    ["user", `members eq "${ID}"`],
    ["group", `not (members eq "${ID}")`],
    ["group", `members eq "${ID}" or displayName eq "x"`],
  ] as const)("a %s filter %s scans", (kind, filter) => {
    expect(narrow(kind, filter)).toBeNull();
  });

  it("a conjunction prefers an index operand, then a link set", () => {
    expect(narrow("group", `members eq "${ID}" and displayName eq "Ops"`)).toEqual({
      attribute: "name",
      value: "Ops",
    });
    expect(narrow("group", `members eq "${ID}" and displayName sw "O"`)).toEqual({
      attribute: "linked",
      value: ID,
    });
  });
});

describe("index lookups and the evaluator see the same literal", () => {
  // Only string attributes are indexed, and the parser coerces only boolean and number ones: a
  // string literal on an indexed attribute reaches the index as given, whatever it looks like.
  it.each([
    ['userName eq "true"', { attribute: "name", value: "true" }],
    ['externalId eq "12345"', { attribute: "externalId", value: "12345" }],
    ['displayName eq "False"', { attribute: "name", value: "False" }],
  ])("%s", (filter, expected) => {
    const node = parseFilter(filter);
    expect(indexedLookup("user", node) ?? indexedLookup("group", node)).toEqual(expected);
    expect(matchesFilter(node, { userName: "TRUE", externalId: "12345", displayName: "false" })).toBe(true);
  });

  it("a coerced comparison is never an index lookup: the evaluator answers it", () => {
    for (const filter of ['active eq "true"', 'emails[primary eq "True"]', 'active ne "false"']) {
      expect(indexedLookup("user", parseFilter(filter))).toBeNull();
    }
  });
});

describe("a spaced userName or group displayName: the index and the evaluator agree", () => {
  // Intake stores these names trimmed; the parser trims the literal, so the index key it looks
  // up (lower-cased, as the name index keeps it) and the evaluator's comparison are the same.
  it.each([
    ['userName eq " ada@example.com "', "user", { userName: "Ada@Example.com" }],
    ['userName eq "\\u00a0ada@example.com\\t"', "user", { userName: "ada@example.com" }],
    ['displayName eq " Admins "', "group", { displayName: "admins" }],
    [
      'urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "Admins  "',
      "group",
      { displayName: "Admins" },
    ],
  ] as const)("%s", (filter, kind, stored) => {
    const node = parseFilter(filter);
    const found = indexedLookup(kind, node);
    expect(found).toMatchObject({ attribute: "name" });
    const name = kind === "user" ? stored.userName : stored.displayName;
    expect(found?.value.toLowerCase()).toBe(name?.toLowerCase());
    expect(
      matchesFilter(node, { ...stored, meta: { resourceType: kind === "user" ? "User" : "Group" } }),
    ).toBe(true);
  });

  it("keeps externalId and emails as sent, in the index and the evaluator alike", () => {
    const ext = parseFilter('externalId eq " E-1 "');
    expect(indexedLookup("user", ext)).toEqual({ attribute: "externalId", value: " E-1 " });
    expect(matchesFilter(ext, { externalId: " E-1 " })).toBe(true);
    expect(matchesFilter(ext, { externalId: "E-1" })).toBe(false);
    const email = parseFilter('emails[value eq " a@x.com "]');
    expect(indexedLookup("user", email)).toEqual({ attribute: "email", value: " a@x.com " });
    expect(matchesFilter(email, { emails: [{ value: "a@x.com" }] })).toBe(false);
  });

  it("trims for ne too; the scanning operators compare the literal as sent", () => {
    const user = { userName: "ada@example.com" };
    for (const filter of [
      'userName ne " bob@example.com "',
      'not (userName ne " ada@example.com ")',
      'userName sw "ada@"',
      'userName ew "example.com"',
      'userName co "a@example.c"',
      'userName ge "ada@example.com"',
      'userName le "ada@example.com"',
      'userName ge " ada@example.com "',
      'userName gt " ada@example.com "',
    ]) {
      expect(indexedLookup("user", parseFilter(filter))).toBeNull();
      expect(matchesFilter(parseFilter(filter), user)).toBe(true);
    }
    for (const filter of [
      'userName ne " ada@example.com "',
      'userName sw " ada@"',
      'userName ew "example.com "',
      'userName co " ada@example.com "',
      'userName le " ada@example.com "',
    ]) {
      expect(indexedLookup("user", parseFilter(filter))).toBeNull();
      expect(matchesFilter(parseFilter(filter), user)).toBe(false);
    }
  });
});
