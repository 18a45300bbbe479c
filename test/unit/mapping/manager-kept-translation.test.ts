import { describe, expect, it } from "vitest";
import { desiredAttributeValues } from "../../../src/mapping/attribute-values.js";
import type { AppliedUser } from "../../../src/mapping/plan-types.js";
import { planUser, withManagerTranslation } from "../../../src/mapping/plan-user.js";
import {
  type ManagerTranslation,
  managerLookupOf,
  managerTranslationOf,
  resolveManager,
  toUserProfile,
} from "../../../src/mapping/user-profile.js";
import { classifyPlatformUser } from "../../../src/reconcile/classify-user.js";
import type { JsonObject, ScimUser } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const source = {
  onDelete: "deactivate" as const,
  attributes: { mgr: { from: `${ENT}:manager`, type: "string" as const } },
};

/** The bridge id of a manager deleted at the source (its keys purged); the IdP still names it. */
const GONE_BOSS = "7d0f3a52-0000-4000-8000-00000000b055";
const GONE_BOSS_PLATFORM_ID = "plat-boss";
const LAST: ManagerTranslation = { from: GONE_BOSS, to: GONE_BOSS_PLATFORM_ID };

function emp(manager: string | undefined, displayName = "Emp"): ScimUser {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
    id: "u-emp",
    userName: "emp@contoso.com",
    displayName,
    active: true,
    [ENT]: manager ? { department: "R&D", manager: { value: manager } } : { department: "R&D" },
  };
}

function platformUser(manager: string | undefined): JsonObject & { id: string; active: boolean } {
  return { ...emp(manager), id: "plat-emp" } as JsonObject & { id: string; active: boolean };
}

/** Converged on the boss's platform id, with the translation recorded. */
function applied(translation: ManagerTranslation | null = LAST): AppliedUser {
  return {
    platformId: "plat-emp",
    profile: toUserProfile(platformUser(GONE_BOSS_PLATFORM_ID)),
    lifecycle: "active",
    attributes: { mgr: GONE_BOSS_PLATFORM_ID },
    ...(translation ? { managerTranslation: translation } : {}),
  };
}

describe("managerLookupOf: what is known about a desired manager value", () => {
  it("a user of the source: its platform id (or null while it has none), whatever was recorded", () => {
    expect(managerLookupOf("b", { platformId: "p" }, LAST)).toEqual({
      value: "b",
      sourceUser: true,
      platformId: "p",
    });
    expect(managerLookupOf("b", { platformId: null }, undefined)).toEqual({
      value: "b",
      sourceUser: true,
      platformId: null,
    });
  });
  it("no longer a user of the source, and the value of the last translation: that translation is kept", () => {
    expect(managerLookupOf(GONE_BOSS, null, LAST)).toEqual({
      value: GONE_BOSS,
      sourceUser: false,
      kept: GONE_BOSS_PLATFORM_ID,
    });
  });
  it("never translated (an employee number), another value than the last one, or no record: forwarded", () => {
    expect(managerLookupOf("E-1042", null, LAST)).toEqual({ value: "E-1042", sourceUser: false });
    expect(managerLookupOf(GONE_BOSS, null, { from: "other", to: "p2" })).toEqual({
      value: GONE_BOSS,
      sourceUser: false,
    });
    expect(managerLookupOf(GONE_BOSS, null, undefined)).toEqual({ value: GONE_BOSS, sourceUser: false });
  });
});

describe("resolveManager and managerTranslationOf with a kept translation", () => {
  const kept = managerLookupOf(GONE_BOSS, null, LAST);
  it("the kept platform id is what the platform gets, and the translation stays the same", () => {
    expect(resolveManager(emp(GONE_BOSS), kept)).toEqual({ value: GONE_BOSS_PLATFORM_ID });
    expect(managerTranslationOf(emp(GONE_BOSS), kept)).toEqual(LAST);
  });
  it("a forwarded or absent manager has no translation", () => {
    expect(managerTranslationOf(emp("E-1042"), managerLookupOf("E-1042", null, LAST))).toBeUndefined();
    expect(managerTranslationOf(emp(undefined), undefined)).toBeUndefined();
    expect(
      managerTranslationOf(emp("b"), managerLookupOf("b", { platformId: null }, undefined)),
    ).toBeUndefined();
  });
  it("a new manager of the source is translated", () => {
    expect(managerTranslationOf(emp("b2"), managerLookupOf("b2", { platformId: "p2" }, LAST))).toEqual({
      from: "b2",
      to: "p2",
    });
  });
});

describe("planUser: a report of a manager deleted at the source", () => {
  it("an unrelated change patches only that: the manager and its attribute value stay the boss's platform id", () => {
    const manager = managerLookupOf(GONE_BOSS, null, LAST);
    const plan = planUser({ desired: emp(GONE_BOSS, "Emp Two"), applied: applied(), source, manager });
    expect(plan.steps).toEqual([
      { type: "patchUser", operations: [{ op: "replace", path: "displayName", value: "Emp Two" }] },
    ]);
    expect(plan.profile?.manager).toBe(GONE_BOSS_PLATFORM_ID);
    expect(plan.managerTranslation).toEqual(LAST);
  });
  it("a record without a translation (written before it existed) forwards the value, as before", () => {
    const manager = managerLookupOf(GONE_BOSS, null, undefined);
    const plan = planUser({ desired: emp(GONE_BOSS), applied: applied(null), source, manager });
    expect(plan.profile?.manager).toBe(GONE_BOSS);
    expect(plan.managerTranslation).toBeUndefined();
  });
  it("a manager removed at the source is removed, and the translation with it", () => {
    const plan = planUser({ desired: emp(undefined), applied: applied(), source });
    expect(plan.steps).toContainEqual({
      type: "patchUser",
      operations: [{ op: "remove", path: `${ENT}:manager` }],
    });
    expect(plan.steps).toContainEqual({
      type: "setAttribute",
      name: "mgr",
      attributeType: "string",
      value: null,
    });
    expect(plan.managerTranslation).toBeUndefined();
  });
  it("the attribute value reading the manager is the kept platform id", () => {
    const manager = managerLookupOf(GONE_BOSS, null, LAST);
    const resolved = resolveManager(emp(GONE_BOSS), manager);
    const { values } = desiredAttributeValues(emp(GONE_BOSS), source.attributes, {
      manager: { value: resolved?.value },
    });
    expect(values["mgr"]?.value).toBe(GONE_BOSS_PLATFORM_ID);
  });
});

describe("withManagerTranslation", () => {
  it("the same record when nothing changes; replaced or dropped otherwise", () => {
    const record = applied();
    expect(withManagerTranslation(record, { ...LAST })).toBe(record);
    expect(withManagerTranslation(record, { from: "b2", to: "p2" }).managerTranslation).toEqual({
      from: "b2",
      to: "p2",
    });
    expect("managerTranslation" in withManagerTranslation(record, undefined)).toBe(false);
    const none = applied(null);
    expect(withManagerTranslation(none, undefined)).toBe(none);
  });
});

describe("reconciliation agrees with the kept translation", () => {
  it("the boss's platform id on the platform is no drift; the bridge id there would be", () => {
    const lookup = managerLookupOf(GONE_BOSS, null, LAST);
    const classify = (manager: string) =>
      classifyPlatformUser({
        platform: platformUser(manager),
        owner: "this",
        desired: { state: "present", resource: emp(GONE_BOSS) },
        onDelete: "deactivate",
        orphans: "report",
        manager: { lookup },
      });
    expect(classify(GONE_BOSS_PLATFORM_ID)).toEqual({ findings: [], repair: "none", deprovision: false });
    expect(classify(GONE_BOSS).findings).toEqual([{ cls: "changed", detail: `fields: ${ENT}:manager` }]);
  });
});
