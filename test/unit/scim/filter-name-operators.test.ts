import { describe, expect, it } from "vitest";
import { indexedLookup as directoryLookup } from "../../../src/directory/indexed-lookup.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

/**
 * userName and a Group's displayName are stored trimmed. Only eq/ne compare the whole name, so
 * only their literal is trimmed (a lookup before create with " ada@x "); co, sw, ew and the
 * ordering operators compare the literal as sent with the stored name.
 */
const users: JsonObject[] = [
  { userName: "ada@example.com" },
  { userName: "Ada Lovelace" },
  { userName: "bob@example.com" },
];
const groups: JsonObject[] = [{ displayName: "Ops Team" }, { displayName: "Admins" }];

const userNames = (filter: string) =>
  users.filter((u) => matchesFilter(parseFilter(filter, "User"), u)).map((u) => u.userName);
const groupNames = (filter: string) =>
  groups.filter((g) => matchesFilter(parseFilter(filter, "Group"), g)).map((g) => g.displayName);

describe("operators on a name stored trimmed: only eq/ne trim the literal", () => {
  it('co " " matches the names with an inner space, not every name', () => {
    expect(userNames('userName co " "')).toEqual(["Ada Lovelace"]);
    expect(groupNames('displayName co " "')).toEqual(["Ops Team"]);
    expect(userNames('userName co "a L"')).toEqual(["Ada Lovelace"]);
    expect(userNames('userName co " ada@example.com "')).toEqual([]);
    // Without the resource type (displayName could be either), the same.
    expect(matchesFilter(parseFilter('displayName co " "'), { displayName: "Admins" })).toBe(false);
  });

  it('sw " x" and ew "x " match no stored name; an inner space in the literal still can', () => {
    expect(userNames('userName sw " ada"')).toEqual([]);
    expect(userNames('userName sw "\\tada"')).toEqual([]);
    expect(userNames('userName ew "example.com "')).toEqual([]);
    expect(userNames('userName ew "com\\u00a0"')).toEqual([]);
    expect(groupNames('displayName sw " Ops"')).toEqual([]);
    expect(groupNames('displayName ew "Team "')).toEqual([]);
    expect(userNames('userName sw "ada "')).toEqual(["Ada Lovelace"]);
    expect(userNames('userName ew " lovelace"')).toEqual(["Ada Lovelace"]);
    expect(userNames('userName sw "ada"')).toEqual(["ada@example.com", "Ada Lovelace"]);
  });

  it('eq " x " and ne " x " keep comparing the trimmed name', () => {
    expect(userNames('userName eq " ada@example.com "')).toEqual(["ada@example.com"]);
    expect(userNames('userName eq "\\u00a0ADA LOVELACE\\t"')).toEqual(["Ada Lovelace"]);
    expect(userNames('userName ne " ada@example.com "')).toEqual(["Ada Lovelace", "bob@example.com"]);
    expect(groupNames('displayName eq " ops team "')).toEqual(["Ops Team"]);
    expect(groupNames('not (displayName ne "Admins ")')).toEqual(["Admins"]);
  });

  it("the ordering operators compare the literal as sent (a bound, not a name)", () => {
    // " b" sorts before every name that starts with a letter; trimmed it would be "b".
    expect(userNames('userName gt " b"')).toEqual(users.map((u) => u.userName));
    expect(userNames('userName lt " b"')).toEqual([]);
    expect(userNames('userName ge "bob@example.com "')).toEqual([]);
    expect(userNames('userName le "bob@example.com "')).toEqual(users.map((u) => u.userName));
    expect(userNames('userName ge "bob@example.com"')).toEqual(["bob@example.com"]);
    // gt and le stay each other's negation, whatever the literal.
    for (const literal of [" b", "bob@example.com ", "ada", " "]) {
      for (const u of users) {
        const gt = matchesFilter(parseFilter(`userName gt ${JSON.stringify(literal)}`, "User"), u);
        const le = matchesFilter(parseFilter(`userName le ${JSON.stringify(literal)}`, "User"), u);
        expect(gt).toBe(!le);
      }
    }
  });

  it("a name stored before the trimming rule is found by co/sw/ew with its spaces", () => {
    const legacy = { userName: " legacy@example.com " };
    expect(matchesFilter(parseFilter('userName sw " legacy"', "User"), legacy)).toBe(true);
    expect(matchesFilter(parseFilter('userName ew ".com "', "User"), legacy)).toBe(true);
    expect(matchesFilter(parseFilter('userName co "legacy"', "User"), legacy)).toBe(true);
  });
});

describe("the directory's index answers only eq, with the same trimmed literal as the evaluator", () => {
  it.each([
    ['userName eq " ada@example.com "', "user", "ada@example.com"],
    ['displayName eq " Admins\\t"', "group", "Admins"],
  ] as const)("%s", (filter, kind, value) => {
    expect(directoryLookup(kind, parseFilter(filter, kind === "user" ? "User" : "Group"))).toEqual({
      attribute: "name",
      value,
    });
  });

  it.each(["co", "sw", "ew", "gt", "ge", "lt", "le", "ne"])("%s is never an index lookup (scanned)", (op) => {
    expect(directoryLookup("user", parseFilter(`userName ${op} " ada "`, "User"))).toBeNull();
    expect(directoryLookup("group", parseFilter(`displayName ${op} " Ops "`, "Group"))).toBeNull();
  });
});
