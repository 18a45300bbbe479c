import { describe, expect, it } from "vitest";
import { planUser } from "../../../src/mapping/plan-user.js";
import type { AppliedUser } from "../../../src/mapping/plan-types.js";
import { type ManagerLookup, toPlatformUserBody, toUserProfile } from "../../../src/mapping/user-profile.js";
import { classifyPlatformUser } from "../../../src/reconcile/classify-user.js";
import type { JsonObject, ScimUser } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const source = {
  onDelete: "deactivate" as const,
  attributes: {
    mgr: { from: `${ENT}:manager`, type: "string" as const },
    mgrValue: { from: `${ENT}:manager.value`, type: "string" as const },
    mgrName: { from: `${ENT}:manager.displayName`, type: "string" as const },
  },
};

/** Entra sends the manager as the bridge id of another user of the same source. */
const BOSS_BRIDGE_ID = "7d0f3a52-0000-4000-8000-00000000b055";
const BOSS_PLATFORM_ID = "plat-boss";

function emp(manager: JsonObject | null = { value: BOSS_BRIDGE_ID, displayName: "Boss" }): ScimUser {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
    id: "u-emp",
    userName: "emp@contoso.com",
    active: true,
    [ENT]: manager ? { department: "R&D", manager } : { department: "R&D" },
  };
}

const landed: ManagerLookup = { value: BOSS_BRIDGE_ID, sourceUser: true, platformId: BOSS_PLATFORM_ID };
const notYet: ManagerLookup = { value: BOSS_BRIDGE_ID, sourceUser: true, platformId: null };

/** What the platform holds once the bridge converged, read back (resync: toUserProfile of it). */
function platformUser(managerValue: string | undefined): JsonObject & { id: string; active: boolean } {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
    id: "plat-emp",
    userName: "emp@contoso.com",
    active: true,
    [ENT]: managerValue ? { department: "R&D", manager: { value: managerValue } } : { department: "R&D" },
  };
}

function readBack(managerValue: string | undefined, attributes: AppliedUser["attributes"]): AppliedUser {
  return {
    platformId: "plat-emp",
    profile: toUserProfile(platformUser(managerValue)),
    lifecycle: "active",
    attributes,
  };
}

describe("planUser: the enterprise manager names the platform's user (RFC 7643 §4.3)", () => {
  it("creates the user with the manager's platform id, in the profile and the attribute values", () => {
    const plan = planUser({ desired: emp(), applied: null, source, manager: landed });
    const step = plan.steps[0];
    if (step?.type !== "createUser") throw new Error(`expected a create, got ${step?.type}`);
    expect(step.body[ENT]).toEqual({ department: "R&D", manager: { value: BOSS_PLATFORM_ID } });
    expect(plan.profile?.manager).toBe(BOSS_PLATFORM_ID);
    expect(plan.waitingForManager).toBeUndefined();
  });

  it("patches the manager and its attribute values to the platform id", () => {
    const applied = readBack(undefined, {});
    const plan = planUser({ desired: emp(), applied, source, manager: landed });
    expect(plan.steps).toEqual([
      {
        type: "patchUser",
        operations: [{ op: "replace", path: `${ENT}:manager`, value: { value: BOSS_PLATFORM_ID } }],
      },
      { type: "setAttribute", name: "mgr", attributeType: "string", value: BOSS_PLATFORM_ID },
      { type: "setAttribute", name: "mgrValue", attributeType: "string", value: BOSS_PLATFORM_ID },
      { type: "setAttribute", name: "mgrName", attributeType: "string", value: "Boss" },
    ]);
    expect(plan.profile).toEqual({ ...toUserProfile(emp()), manager: BOSS_PLATFORM_ID });
  });

  it("sees no difference when the platform user is read back (resync): no endless PATCH", () => {
    const applied = readBack(BOSS_PLATFORM_ID, {
      mgr: BOSS_PLATFORM_ID,
      mgrValue: BOSS_PLATFORM_ID,
      mgrName: "Boss",
    });
    const plan = planUser({ desired: emp(), applied, source, manager: landed });
    expect(plan.steps).toEqual([]);
    expect(plan.waitingForManager).toBeUndefined();
    // The profile the executor records after a patch is the one a read-back gives.
    expect(plan.profile).toEqual(applied.profile);
  });

  it("leaves out a manager of this source that has no platform id yet, and says so", () => {
    const create = planUser({ desired: emp(), applied: null, source, manager: notYet });
    const step = create.steps[0];
    if (step?.type !== "createUser") throw new Error(`expected a create, got ${step?.type}`);
    expect(step.body[ENT]).toEqual({ department: "R&D" });
    expect(create.waitingForManager).toBe(BOSS_BRIDGE_ID);

    // Created: nothing is written for the manager, the bridge id never reaches the platform.
    const update = planUser({
      desired: emp(),
      applied: readBack(undefined, { mgrName: "Boss" }),
      source,
      manager: notYet,
    });
    expect(update.steps).toEqual([]);
    expect(update.waitingForManager).toBe(BOSS_BRIDGE_ID);
    expect(update.profile?.manager).toBeUndefined();
  });

  it("takes a previous manager away while the new one has no platform id yet", () => {
    const applied = readBack("plat-old-boss", {
      mgr: "plat-old-boss",
      mgrValue: "plat-old-boss",
      mgrName: "Boss",
    });
    const plan = planUser({ desired: emp(), applied, source, manager: notYet });
    expect(plan.steps).toEqual([
      { type: "patchUser", operations: [{ op: "remove", path: `${ENT}:manager` }] },
      { type: "setAttribute", name: "mgr", attributeType: "string", value: null },
      { type: "setAttribute", name: "mgrValue", attributeType: "string", value: null },
    ]);
    expect(plan.waitingForManager).toBe(BOSS_BRIDGE_ID);
  });

  it("forwards a value that is not a user of this source (an employee number) as it is", () => {
    const desired = emp({ value: "E-1042" });
    const plan = planUser({
      desired,
      applied: null,
      source,
      manager: { value: "E-1042", sourceUser: false },
    });
    const step = plan.steps[0];
    if (step?.type !== "createUser") throw new Error(`expected a create, got ${step?.type}`);
    expect(step.body[ENT]).toEqual({ department: "R&D", manager: { value: "E-1042" } });
    expect(plan.waitingForManager).toBeUndefined();
    const converged = readBack("E-1042", { mgr: "E-1042", mgrValue: "E-1042" });
    expect(
      planUser({ desired, applied: converged, source, manager: { value: "E-1042", sourceUser: false } })
        .steps,
    ).toEqual([]);
  });

  it("ignores a lookup made for another value than the desired one", () => {
    const plan = planUser({
      desired: emp({ value: "someone-else" }),
      applied: null,
      source,
      manager: landed,
    });
    const step = plan.steps[0];
    if (step?.type !== "createUser") throw new Error(`expected a create, got ${step?.type}`);
    expect(step.body[ENT]).toEqual({ department: "R&D", manager: { value: "someone-else" } });
  });

  it("a user without a manager plans as before", () => {
    const plan = planUser({ desired: emp(null), applied: null, source });
    expect(plan.waitingForManager).toBeUndefined();
    expect(plan.profile?.manager).toBeUndefined();
  });

  it("reconcile does not report a converged user with a translated manager as changed", () => {
    const platform = toPlatformUserBody(
      { ...toUserProfile(emp()), manager: BOSS_PLATFORM_ID },
      true,
    ) as JsonObject & { id: string };
    platform.id = "plat-emp";
    const result = classifyPlatformUser({
      platform,
      owner: "this",
      desired: { state: "present", resource: emp() as ScimUser & JsonObject },
      onDelete: "deactivate",
      orphans: "report",
    });
    expect(result.findings).toEqual([]);
  });
});
