import { describe, expect, it } from "vitest";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import { indexedLookup as directoryLookup } from "../../../src/directory/indexed-lookup.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { indexedLookup } from "../../../src/scim/indexed-lookup.js";

const lookup = (filter: string) => indexedLookup(parseFilter(filter));

describe("indexedLookup", () => {
  it.each([
    ['userName eq "bjensen"', "userName"],
    ['USERNAME EQ "bjensen"', "userName"],
    ['externalId eq "bjensen"', "externalId"],
    ['emails.value eq "bjensen"', "emails.value"],
    ['emails eq "bjensen"', "emails.value"],
    ['emails[value eq "bjensen"]', "emails.value"],
    ['displayName eq "bjensen"', "displayName"],
    ['id eq "bjensen"', "id"],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bjensen"', "userName"],
    ['urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "bjensen"', "displayName"],
  ])("routes %s to the %s index", (filter, attribute) => {
    expect(lookup(filter)).toEqual({ attribute, value: "bjensen" });
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
    'emails[type eq "work"]',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "1"',
  ])("does not route %s", (filter) => {
    expect(lookup(filter)).toBeNull();
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
    expect(directoryLookup("user", node) ?? directoryLookup("group", node)).toEqual(expected);
    expect(matchesFilter(node, { userName: "TRUE", externalId: "12345", displayName: "false" })).toBe(true);
  });

  it("a coerced comparison is never an index lookup: the evaluator answers it", () => {
    for (const filter of ['active eq "true"', 'emails[primary eq "True"]', 'active ne "false"']) {
      expect(directoryLookup("user", parseFilter(filter))).toBeNull();
      expect(lookup(filter)).toBeNull();
    }
  });
});
