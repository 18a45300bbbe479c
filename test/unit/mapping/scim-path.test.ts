import { describe, expect, it } from "vitest";
import { readScimPath } from "../../../src/mapping/scim-path.js";
import { coerceAttributeValue, sameAttributeValue } from "../../../src/mapping/coerce-attribute-value.js";
import { desiredAttributeValues } from "../../../src/mapping/attribute-values.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const user: JsonObject = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
  userName: "ada@example.com",
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [
    { value: "ada@work.example", type: "work", primary: true },
    { value: "ada@home.example", type: "home" },
  ],
  addresses: [
    { type: "home", country: "UK" },
    { type: "work", country: "FR", postalCode: "75001" },
  ],
  [ENT]: { department: "R&D", costCenter: "4711", manager: { value: "m-1" } },
  "urn:example:custom:1.0:User": { level: "7", tags: ["a", "b"], admin: "True" },
};

describe("readScimPath (RFC 7644 §3.10)", () => {
  it("reads core, sub-attribute and enterprise URN paths", () => {
    expect(readScimPath(user, "userName")).toBe("ada@example.com");
    expect(readScimPath(user, "name.givenName")).toBe("Ada");
    expect(readScimPath(user, `${ENT}:department`)).toBe("R&D");
    expect(readScimPath(user, `${ENT}:manager.value`)).toBe("m-1");
    expect(readScimPath(user, "urn:example:custom:1.0:User:level")).toBe("7");
  });
  it("reads value-filter paths, case-insensitively", () => {
    expect(readScimPath(user, 'addresses[type eq "work"].country')).toEqual(["FR"]);
    expect(readScimPath(user, 'addresses[type eq "WORK"].postalCode')).toEqual(["75001"]);
    expect(readScimPath(user, "emails[primary eq true].value")).toEqual(["ada@work.example"]);
    expect(readScimPath(user, 'addresses[type eq "work" and country pr].country')).toEqual(["FR"]);
    expect(readScimPath(user, 'addresses[type eq "other"].country')).toBeUndefined();
  });
  it("reads every element's value of a multi-valued attribute without a filter", () => {
    expect(readScimPath(user, "emails.value")).toEqual(["ada@work.example", "ada@home.example"]);
  });
  it("answers undefined for missing attributes", () => {
    expect(readScimPath(user, "title")).toBeUndefined();
    expect(readScimPath(user, `${ENT}:division`)).toBeUndefined();
    expect(readScimPath(user, "urn:nope:User:x")).toBeUndefined();
  });
  it("rejects unsupported paths", () => {
    expect(() => readScimPath(user, "a b c")).toThrow(/unsupported/);
  });
});

describe("coerceAttributeValue", () => {
  it.each([
    ["string", "x", "x"],
    ["string", 42, "42"],
    ["string", ["FR"], "FR"],
    ["string", true, "true"],
    ["number", "4711", 4711],
    ["number", 3.5, 3.5],
    ["number", ["7"], 7],
    ["boolean", "True", true],
    ["boolean", "false", false],
    ["boolean", 1, true],
    ["string_array", "a", ["a"]],
    ["string_array", ["a", 1], ["a", "1"]],
    ["number_array", ["1", 2], [1, 2]],
    ["number_array", [], []],
    ["string", undefined, null],
    ["number", null, null],
  ] as const)("%s <- %j = %j", (type, input, expected) => {
    const result = coerceAttributeValue(input as never, type);
    expect(result).toEqual({ value: expected });
  });
  it.each([
    ["number", "abc"],
    ["boolean", "maybe"],
    ["number_array", ["1", "x"]],
    ["string", { nested: { deep: 1 } }],
  ] as const)("refuses %s <- %j", (type, input) => {
    expect(coerceAttributeValue(input as never, type)).toHaveProperty("invalid", true);
  });
  it("compares arrays by element", () => {
    expect(sameAttributeValue(["a"], ["a"])).toBe(true);
    expect(sameAttributeValue(["a"], ["b"])).toBe(false);
    expect(sameAttributeValue(null, undefined)).toBe(true);
    expect(sameAttributeValue(1, "1")).toBe(false);
  });
});

describe("desiredAttributeValues", () => {
  it("maps rules with coercion and reports uncoercible values", () => {
    const { values, problems } = desiredAttributeValues(user, {
      department: { from: `${ENT}:department`, type: "string" },
      country: { from: 'addresses[type eq "work"].country', type: "string" },
      level: { from: "urn:example:custom:1.0:User:level", type: "number" },
      admin: { from: "urn:example:custom:1.0:User:admin", type: "boolean" },
      tags: { from: "urn:example:custom:1.0:User:tags", type: "string_array" },
      missing: { from: "title", type: "string" },
      bad: { from: "name.givenName", type: "number" },
    });
    expect(values).toEqual({
      department: { type: "string", value: "R&D" },
      country: { type: "string", value: "FR" },
      level: { type: "number", value: 7 },
      admin: { type: "boolean", value: true },
      tags: { type: "string_array", value: ["a", "b"] },
      missing: { type: "string", value: null },
      // Uncoercible: no value (the platform's is removed, not left stale), and reported.
      bad: { type: "number", value: null },
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.code).toBe("attribute_value_invalid");
  });
});
