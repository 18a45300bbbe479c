import { describe, expect, it } from "vitest";
import { planUser } from "../../../src/mapping/plan-user.js";
import type { AppliedUser } from "../../../src/mapping/plan-types.js";
import { toUserProfile } from "../../../src/mapping/user-profile.js";
import type { ScimUser } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const source = {
  onDelete: "deactivate" as const,
  attributes: {
    department: { from: `${ENT}:department`, type: "string" as const },
    country: { from: 'addresses[type eq "work"].country', type: "string" as const },
  },
};

function user(overrides: Partial<ScimUser> = {}): ScimUser {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
    id: "u1",
    userName: "ada@example.com",
    externalId: "00u1",
    active: true,
    name: { givenName: "Ada", familyName: "Lovelace" },
    displayName: "Ada Lovelace",
    emails: [{ value: "ada@example.com", type: "work", primary: true }],
    addresses: [{ type: "work", country: "UK" }],
    [ENT]: { department: "R&D", manager: { value: "m1" } },
    ...overrides,
  };
}

function converged(u: ScimUser): AppliedUser {
  return {
    platformId: "p1",
    profile: toUserProfile(u),
    lifecycle: u.active ? "active" : "inactive",
    attributes: { department: "R&D", country: "UK" },
  };
}

describe("planUser", () => {
  it("creates a user that was never applied, with its active flag in the body", () => {
    const plan = planUser({ desired: user({ active: false }), applied: null, source });
    expect(plan.steps).toHaveLength(1);
    const step = plan.steps[0];
    expect(step?.type).toBe("createUser");
    if (step?.type !== "createUser") return;
    expect(step.body).toMatchObject({
      userName: "ada@example.com",
      externalId: "00u1",
      active: false,
      name: { givenName: "Ada", familyName: "Lovelace" },
      [ENT]: { department: "R&D", manager: { value: "m1" } },
    });
  });

  it("plans nothing for a converged user (idempotence)", () => {
    const u = user();
    expect(planUser({ desired: u, applied: converged(u), source }).steps).toEqual([]);
  });

  it("patches only what changed, and removes what is gone", () => {
    const before = user();
    const after = user({ displayName: "Countess", name: { givenName: "Ada" } });
    const plan = planUser({ desired: after, applied: converged(before), source });
    expect(plan.steps).toEqual([
      {
        type: "patchUser",
        operations: [
          { op: "remove", path: "name.familyName" },
          { op: "replace", path: "displayName", value: "Countess" },
        ],
      },
    ]);
  });

  it("patches enterprise attributes by URN path", () => {
    const before = user();
    const after = user({ [ENT]: { department: "R&D", costCenter: "42", manager: { value: "m2" } } });
    const plan = planUser({ desired: after, applied: converged(before), source });
    expect(plan.steps[0]).toEqual({
      type: "patchUser",
      operations: [
        { op: "replace", path: `${ENT}:costCenter`, value: "42" },
        { op: "replace", path: `${ENT}:manager`, value: { value: "m2" } },
      ],
    });
  });

  it("deactivates and reactivates through lifecycle steps, not PATCH", () => {
    const u = user();
    const off = planUser({ desired: user({ active: false }), applied: converged(u), source });
    expect(off.steps).toEqual([{ type: "lifecycle", action: "DEACTIVATE", final: false }]);
    const on = planUser({ desired: u, applied: { ...converged(u), lifecycle: "inactive" }, source });
    expect(on.steps).toEqual([{ type: "lifecycle", action: "ACTIVATE", final: false }]);
  });

  it("plans the lifecycle change after the profile and attribute writes", () => {
    // The executor queues it after them whatever became of them (a refused rename does not keep a
    // deactivated user active), so that the flusher's record of it is not overwritten by theirs.
    const u = user({ active: false, userName: "renamed@example.com" });
    const plan = planUser({ desired: u, applied: converged(user()), source });
    expect(plan.steps.map((s) => s.type)).toEqual(["patchUser", "lifecycle"]);
    expect(plan.steps[1]).toEqual({ type: "lifecycle", action: "DEACTIVATE", final: false });
  });

  it("applies onDelete: deactivate or delete to a tombstone, then forgets it", () => {
    const applied = converged(user());
    expect(planUser({ desired: null, applied, source }).steps).toEqual([
      { type: "lifecycle", action: "DEACTIVATE", final: true },
    ]);
    expect(planUser({ desired: null, applied, source: { ...source, onDelete: "delete" } }).steps).toEqual([
      { type: "lifecycle", action: "DELETE", final: true },
    ]);
    expect(planUser({ desired: null, applied: { ...applied, lifecycle: "inactive" }, source }).steps).toEqual(
      [{ type: "forget" }],
    );
    expect(planUser({ desired: null, applied: null, source }).steps).toEqual([{ type: "forget" }]);
  });

  it("looks a lost create up by userName before forgetting a tombstone", () => {
    const plan = planUser({
      desired: null,
      applied: { pendingUserName: "ada@example.com", attributes: {} },
      source,
    });
    expect(plan.steps).toEqual([{ type: "findLostUser", userName: "ada@example.com" }]);
  });

  it("takes a pending userName in another case or Unicode form for the same name (no lookup of a lost create)", () => {
    const composed = "Jos\u00e9@example.com";
    const decomposed = "JOSE\u0301@example.com";
    const applied = { pendingUserName: composed, attributes: {} };
    expect(planUser({ desired: user({ userName: decomposed }), applied, source }).steps[0]?.type).toBe(
      "createUser",
    );
    expect(planUser({ desired: user({ userName: "ada@example.com" }), applied, source }).steps).toEqual([
      { type: "findLostUser", userName: composed },
    ]);
  });

  it("sets changed attribute values and clears one removed at the source with null", () => {
    const u = user({ addresses: [], [ENT]: { department: "Ops", manager: { value: "m1" } } });
    const plan = planUser({ desired: u, applied: converged(user()), source });
    expect(plan.steps).toEqual([
      { type: "patchUser", operations: [{ op: "replace", path: `${ENT}:department`, value: "Ops" }] },
      { type: "setAttribute", name: "department", attributeType: "string", value: "Ops" },
      { type: "setAttribute", name: "country", attributeType: "string", value: null },
    ]);
  });

  it("does not set a null value that was never set", () => {
    const u = user({ addresses: [] });
    const applied = { ...converged(u), attributes: { department: "R&D" } };
    expect(planUser({ desired: u, applied, source }).steps).toEqual([]);
  });

  it("recreates a user whose platform object was deleted", () => {
    const u = user();
    const plan = planUser({ desired: u, applied: { ...converged(u), lifecycle: "deleted" }, source });
    expect(plan.steps[0]?.type).toBe("createUser");
  });

  it("reports an uncoercible value without blocking the rest", () => {
    const plan = planUser({
      desired: user({ displayName: "X" }),
      applied: converged(user()),
      source: { ...source, attributes: { n: { from: "displayName", type: "number" } } },
    });
    expect(plan.problems).toHaveLength(1);
    expect(plan.steps.map((s) => s.type)).toEqual(["patchUser"]);
  });
});
