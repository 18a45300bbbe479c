import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { valuesAtPath } from "../../../src/scim/path-values.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const user: JsonObject = {
  userName: "bjensen",
  name: { givenName: "Barbara" },
  emails: [
    { value: "a@x.com", type: "work" },
    { value: "b@x.com", type: "home" },
  ],
  addresses: [
    { type: "home", country: "FR" },
    { type: "work", country: "US" },
  ],
  [ENT]: { department: "Ops", manager: { value: "m1" } },
};

describe("valuesAtPath", () => {
  it.each([
    ["userName", ["bjensen"]],
    ["USERNAME", ["bjensen"]],
    ["name.givenName", ["Barbara"]],
    ["emails.value", ["a@x.com", "b@x.com"]],
    ['addresses[type eq "work"].country', ["US"]],
    ['ADDRESSES[TYPE EQ "WORK"].COUNTRY', ["US"]],
    [`${ENT}:department`, ["Ops"]],
    [`${ENT}:manager.value`, ["m1"]],
    ['emails[type eq "other"].value', []],
    ["title", []],
    [`${ENT}:costCenter`, []],
  ])("%s", (path, expected) => {
    expect(valuesAtPath(user, path)).toEqual(expected);
  });

  it("returns whole elements for a filter without a sub-attribute", () => {
    expect(valuesAtPath(user, 'emails[type eq "home"]')).toEqual([{ value: "b@x.com", type: "home" }]);
  });

  it("rejects a malformed path", () => {
    expect(() => valuesAtPath(user, "emails[type eq")).toThrow(BadRequestError);
  });
});
