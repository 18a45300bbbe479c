import { describe, expect, it } from "vitest";
import { desiredAttributeValues } from "../../../src/mapping/attribute-values.js";
import { planUser } from "../../../src/mapping/plan-user.js";
import type { AppliedUser } from "../../../src/mapping/plan-types.js";
import { toUserProfile } from "../../../src/mapping/user-profile.js";
import type { ScimUser } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const rules = {
  department: { from: `${ENT}:department`, type: "string" as const },
  level: { from: `${ENT}:employeeNumber`, type: "number" as const },
  mails: { from: "emails.value", type: "string_array" as const },
};

function user(ent: Record<string, string>, emails: Array<{ value: string }> = []): ScimUser {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
    id: "u1",
    userName: "pe@ping.example",
    active: true,
    emails,
    [ENT]: ent,
  };
}

/** RFC 7643 §2.5: "" is unassigned, for attribute rules as for the profile (PingFederate's full PUT). */
describe("an empty-string attribute is unassigned", () => {
  it("maps to no value (null), not to the string ''", () => {
    const { values, problems } = desiredAttributeValues(user({ department: "", employeeNumber: "" }), rules);
    expect(problems).toEqual([]);
    expect(values["department"]).toEqual({ type: "string", value: null });
    expect(values["level"]).toEqual({ type: "number", value: null });
  });

  it("drops empty strings from a list", () => {
    const { values } = desiredAttributeValues(user({}, [{ value: "" }, { value: "a@ping.example" }]), rules);
    expect(values["mails"]).toEqual({ type: "string_array", value: ["a@ping.example"] });
  });

  it("a full PUT with department '' clears the profile's department and the attribute alike", () => {
    const before = user({ department: "R&D", employeeNumber: "7" });
    const applied: AppliedUser = {
      platformId: "p1",
      profile: toUserProfile(before),
      lifecycle: "active",
      attributes: { department: "R&D", level: 7 },
    };
    const plan = planUser({
      desired: user({ department: "", employeeNumber: "7" }),
      applied,
      source: { onDelete: "deactivate", attributes: rules },
    });
    expect(plan.steps).toEqual([
      { type: "patchUser", operations: [{ op: "remove", path: `${ENT}:department` }] },
      { type: "setAttribute", name: "department", attributeType: "string", value: null },
    ]);
  });

  it("a user created with department '' gets no value written", () => {
    const u = user({ department: "" });
    const applied: AppliedUser = {
      platformId: "p1",
      profile: toUserProfile(u),
      lifecycle: "active",
      attributes: {},
    };
    const plan = planUser({ desired: u, applied, source: { onDelete: "deactivate", attributes: rules } });
    expect(plan.steps).toEqual([]);
  });
});
