/**
 * Probes-i (mapping): RFC 7644 §3.10 lets an attribute path name a core attribute with its schema
 * URN (`urn:ietf:params:scim:schemas:core:2.0:User:name.familyName`). An attribute rule written that
 * way reads the same value as the short path; it read nothing (the value looked for under a key of
 * that URN), so the platform never got a value, silently.
 */
import { describe, expect, it } from "vitest";
import { readScimPath } from "../../../src/mapping/scim-path.js";

const CORE = "urn:ietf:params:scim:schemas:core:2.0:User";
const user = {
  schemas: [CORE],
  userName: "u@example.com",
  title: "Engineer",
  name: { familyName: "Łukasiewicz" },
  emails: [
    { value: "w@example.com", type: "work" },
    { value: "h@example.com", type: "home" },
  ],
};

describe("core attributes named with their schema URN", () => {
  it.each([
    ["title", "Engineer"],
    ["name.familyName", "Łukasiewicz"],
    ['emails[type eq "home"].value', ["h@example.com"]],
    ["emails.value", ["w@example.com", "h@example.com"]],
  ])("%s", (path, expected) => {
    expect(readScimPath(user, path)).toEqual(expected);
    expect(readScimPath(user, `${CORE}:${path}`)).toEqual(expected);
    expect(readScimPath(user, `${CORE.toLowerCase()}:${path}`)).toEqual(expected);
  });
  it("an extension's URN still reads under its own key", () => {
    const ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
    expect(readScimPath({ ...user, [ent]: { department: "R&D" } }, `${ent}:department`)).toBe("R&D");
    expect(readScimPath(user, `${ent}:title`)).toBeUndefined();
  });
});
