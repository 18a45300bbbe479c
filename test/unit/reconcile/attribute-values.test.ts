import { describe, expect, it } from "vitest";
import {
  diffAttributeValues,
  expectedAttributeValue,
  readScimPath,
} from "../../../src/reconcile/attribute-values.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";

const user = {
  userName: "ada",
  addresses: [
    { type: "home", country: "FR" },
    { type: "work", country: "DE" },
  ],
  [SCHEMA_ENTERPRISE_USER]: { department: "R&D", costCenter: "42" },
  "urn:example:custom": { skills: ["a", "b"], flag: "True" },
};

describe("readScimPath", () => {
  it("reads core, extension and value-filter paths", () => {
    expect(readScimPath(user, "userName")).toBe("ada");
    expect(readScimPath(user, `${SCHEMA_ENTERPRISE_USER}:department`)).toBe("R&D");
    expect(readScimPath(user, 'addresses[type eq "work"].country')).toBe("DE");
    expect(readScimPath(user, 'addresses[type eq "other"].country')).toBeUndefined();
    expect(readScimPath(user, "urn:example:custom:skills")).toEqual(["a", "b"]);
  });
});

describe("expectedAttributeValue", () => {
  it("coerces to the platform type", () => {
    expect(
      expectedAttributeValue(user, { from: `${SCHEMA_ENTERPRISE_USER}:costCenter`, type: "number" }),
    ).toBe(42);
    expect(expectedAttributeValue(user, { from: "urn:example:custom:flag", type: "boolean" })).toBe(true);
    expect(expectedAttributeValue(user, { from: "urn:example:custom:skills", type: "string_array" })).toEqual(
      ["a", "b"],
    );
    expect(expectedAttributeValue(user, { from: "nickName", type: "string" })).toBeNull();
  });
});

describe("diffAttributeValues", () => {
  it("names values changed behind the bridge's back", () => {
    const expected = { department: "R&D", country: "DE", skills: ["a", "b"] };
    const actual = [
      { name: "department", value: "Sales" },
      { name: "country", value: "DE" },
      { name: "skills", value: ["b", "a"] },
    ];
    expect(diffAttributeValues(expected, actual)).toEqual(["department"]);
  });

  it("treats a missing value like null, and an empty array like no value", () => {
    expect(diffAttributeValues({ a: null, b: [] }, [])).toEqual([]);
    expect(diffAttributeValues({ a: "x" }, [])).toEqual(["a"]);
  });
});
