import { describe, expect, it } from "vitest";
import type { ManagerLookup } from "../../../src/mapping/user-profile.js";
import { type PlatformUserInput, classifyPlatformUser } from "../../../src/reconcile/classify-user.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const BOSS_BRIDGE_ID = "7d0f3a52-0000-4000-8000-00000000b055";
const BOSS_PLATFORM_ID = "plat-boss";

const landed: ManagerLookup = { value: BOSS_BRIDGE_ID, sourceUser: true, platformId: BOSS_PLATFORM_ID };
/** A manager of the source without a platform user: waiting for it, or its sync a dead letter. */
const noPlatformUser: ManagerLookup = { value: BOSS_BRIDGE_ID, sourceUser: true, platformId: null };

/** Entra's user: the manager is the bridge id of another user of the source. */
const desired = (manager: string | undefined = BOSS_BRIDGE_ID): JsonObject & { active: boolean } => ({
  schemas: [USER, ENT],
  id: "u-emp",
  userName: "emp@contoso.com",
  active: true,
  [ENT]: manager ? { department: "R&D", manager: { value: manager } } : { department: "R&D" },
});
/** The platform's user as listed. */
const platform = (manager: string | undefined): JsonObject & { id: string } => ({
  schemas: [USER, ENT],
  id: "plat-emp",
  userName: "emp@contoso.com",
  active: true,
  [ENT]: manager ? { department: "R&D", manager: { value: manager } } : { department: "R&D" },
});

function classify(
  platformUser: JsonObject & { id: string },
  manager: PlatformUserInput["manager"],
  resource: JsonObject & { active: boolean } = desired(),
) {
  return classifyPlatformUser({
    platform: platformUser,
    owner: "this",
    desired: { state: "present", resource },
    onDelete: "deactivate",
    orphans: "report",
    manager,
  });
}

describe("reconciliation compares the manager as the sync sends it (RFC 7643 §4.3)", () => {
  it("a platform user with the manager's platform id is no drift", () => {
    expect(classify(platform(BOSS_PLATFORM_ID), { lookup: landed })).toEqual({
      findings: [],
      repair: "none",
      deprovision: false,
    });
  });

  it("a manager changed or removed on the platform behind the bridge's back is changed, repaired by a sync", () => {
    for (const behind of ["plat-someone-else", undefined]) {
      const result = classify(platform(behind), { lookup: landed });
      expect(result.findings).toEqual([{ cls: "changed", detail: `fields: ${ENT}:manager` }]);
      expect(result.repair).toBe("sync");
      expect(result.deprovision).toBe(false);
    }
  });

  it("a manager set on the platform for a user without one at the source is changed", () => {
    const result = classify(platform(BOSS_PLATFORM_ID), { lookup: undefined }, desired(undefined));
    expect(result.findings).toEqual([{ cls: "changed", detail: `fields: ${ENT}:manager` }]);
  });

  it("a manager without a platform user (waiting, or a dead letter) is not asked for: the sync leaves it out", () => {
    // Otherwise every run would ask for a repair the sync cannot make (an endless repair loop).
    expect(classify(platform(undefined), { lookup: noPlatformUser }).findings).toEqual([]);
    // What the sync would remove all the same (it sends no manager then) is drift.
    expect(classify(platform("plat-someone-else"), { lookup: noPlatformUser }).findings).toEqual([
      { cls: "changed", detail: `fields: ${ENT}:manager` },
    ]);
  });

  it("a value that is no user of the source is compared as it is", () => {
    const employeeNumber: ManagerLookup = { value: "E-1042", sourceUser: false };
    expect(classify(platform("E-1042"), { lookup: employeeNumber }, desired("E-1042")).findings).toEqual([]);
    expect(classify(platform("E-9"), { lookup: employeeNumber }, desired("E-1042")).findings).toHaveLength(1);
  });

  it("without a lookup the manager is not compared (as before)", () => {
    expect(classify(platform("plat-someone-else"), undefined).findings).toEqual([]);
  });
});
