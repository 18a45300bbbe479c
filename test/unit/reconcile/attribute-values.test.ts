import { describe, expect, it } from "vitest";
import { diffAttributeValues } from "../../../src/reconcile/attribute-values.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";

const user = {
  userName: "ada",
  addresses: [
    { type: "home", country: "FR" },
    { type: "work", country: "DE" },
  ],
  [SCHEMA_ENTERPRISE_USER]: { department: "R&D", costCenter: "42" },
};

const rules = {
  department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" as const },
  country: { from: 'addresses[type eq "work"].country', type: "string" as const },
  nick: { from: "nickName", type: "string" as const },
};

describe("diffAttributeValues", () => {
  it("finds nothing when the platform holds the mapped values", () => {
    const actual = [
      { name: "department", value: "R&D" },
      { name: "country", value: "DE" },
    ];
    expect(diffAttributeValues(user, rules, actual)).toEqual([]);
  });

  it("names a value changed behind the bridge's back, read through value-filter paths too", () => {
    const actual = [
      { name: "department", value: "R&D" },
      { name: "country", value: "FR" },
    ];
    expect(diffAttributeValues(user, rules, actual)).toEqual(["country"]);
  });

  it("reads a platform attribute whose name differs from the rule's only in case (the sync uses that definition)", () => {
    const cased = { Department: rules.department, country: rules.country };
    const actual = [
      { name: "department", value: "R&D" },
      { name: "country", value: "DE" },
    ];
    expect(diffAttributeValues(user, cased, actual)).toEqual([]);
    expect(
      diffAttributeValues(user, cased, [{ name: "department", value: "Ops" }, ...actual.slice(1)]),
    ).toEqual(["Department"]);
  });

  it("names a value removed on the platform, not one the user never had", () => {
    expect(diffAttributeValues(user, rules, [{ name: "country", value: "DE" }])).toEqual(["department"]);
  });

  it("names a value set on the platform that the user does not have", () => {
    const actual = [
      { name: "department", value: "R&D" },
      { name: "country", value: "DE" },
      { name: "nick", value: "x" },
    ];
    expect(diffAttributeValues(user, rules, actual)).toEqual(["nick"]);
  });
});
