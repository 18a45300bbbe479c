import { describe, expect, it } from "vitest";
import {
  classifyPlatformUser,
  classifyUnseen,
  type PlatformUserInput,
} from "../../../src/reconcile/classify-user.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";

const desiredUser = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: "ada@example.com",
  active: true,
  displayName: "Ada",
  emails: [{ value: "Ada@Example.com", primary: true }],
  [SCHEMA_ENTERPRISE_USER]: { department: "R&D" },
};

function input(overrides: Partial<PlatformUserInput>): PlatformUserInput {
  return {
    platform: { id: "p1", ...desiredUser, meta: { resourceType: "User" } },
    owner: "this",
    desired: { state: "present", resource: desiredUser },
    onDelete: "deactivate",
    orphans: "report",
    ...overrides,
  };
}

describe("classifyPlatformUser", () => {
  it("finds nothing when the platform matches (server-computed attributes ignored)", () => {
    expect(classifyPlatformUser(input({}))).toEqual({ findings: [], repair: "none", deprovision: false });
  });

  it("ignores users another source owns", () => {
    const result = classifyPlatformUser(input({ owner: "other", platform: { id: "p1", active: true } }));
    expect(result.findings).toEqual([]);
    expect(result.repair).toBe("none");
  });

  it("reports an orphan and leaves it alone under the report policy", () => {
    const result = classifyPlatformUser(input({ owner: "none" }));
    expect(result.findings.map((f) => f.cls)).toEqual(["orphans"]);
    expect(result).toMatchObject({ repair: "none", deprovision: false });
  });

  it("plans to deactivate an active orphan under the deactivate policy, and counts it for the guard", () => {
    const result = classifyPlatformUser(input({ owner: "none", orphans: "deactivate" }));
    expect(result).toMatchObject({ repair: "deactivate-orphan", deprovision: true });
  });

  it("reports an inactive orphan without planning anything", () => {
    const result = classifyPlatformUser(
      input({ owner: "none", orphans: "deactivate", platform: { id: "p9", active: false } }),
    );
    expect(result).toMatchObject({ findings: [{ cls: "orphans" }], repair: "none", deprovision: false });
  });

  it("finds a user reactivated behind the bridge's back: a deprovisioning repair", () => {
    const result = classifyPlatformUser(
      input({
        platform: { id: "p1", ...desiredUser, active: true },
        desired: { state: "present", resource: { ...desiredUser, active: false } },
      }),
    );
    expect(result.findings.map((f) => f.cls)).toEqual(["activeMismatch"]);
    expect(result).toMatchObject({ repair: "sync", deprovision: true });
  });

  it("finds a user deactivated behind the bridge's back: a repair that is not a deprovisioning", () => {
    const result = classifyPlatformUser(input({ platform: { id: "p1", ...desiredUser, active: false } }));
    expect(result.findings.map((f) => f.cls)).toEqual(["activeMismatch"]);
    expect(result).toMatchObject({ repair: "sync", deprovision: false });
  });

  it("takes a platform user without `active` as active", () => {
    const { active: _omit, ...withoutActive } = desiredUser;
    const result = classifyPlatformUser(
      input({
        platform: { id: "p1", ...withoutActive },
        desired: { state: "present", resource: { ...desiredUser, active: false } },
      }),
    );
    expect(result.deprovision).toBe(true);
  });

  it("names the changed attributes, enterprise ones included", () => {
    const result = classifyPlatformUser(
      input({
        platform: {
          id: "p1",
          ...desiredUser,
          displayName: "Eve",
          [SCHEMA_ENTERPRISE_USER]: { department: "Sales" },
        },
      }),
    );
    expect(result.findings).toEqual([
      { cls: "changed", detail: `fields: displayName, ${SCHEMA_ENTERPRISE_USER}:department` },
    ]);
    expect(result).toMatchObject({ repair: "sync", deprovision: false });
  });

  it("reports a kept attribute set on the platform that the desired user lacks, not unkept ones", () => {
    const result = classifyPlatformUser(
      input({
        platform: { id: "p1", ...desiredUser, title: "x", name: { givenName: "A" } },
      }),
    );
    expect(result.findings).toEqual([{ cls: "changed", detail: "fields: name.givenName" }]);
  });

  it("leaves manager out (bridge id on one side, platform id on the other)", () => {
    const result = classifyPlatformUser(
      input({
        platform: {
          id: "p1",
          ...desiredUser,
          [SCHEMA_ENTERPRISE_USER]: { department: "R&D", manager: { value: "p7" } },
        },
        desired: {
          state: "present",
          resource: {
            ...desiredUser,
            [SCHEMA_ENTERPRISE_USER]: { department: "R&D", manager: { value: "b7" } },
          },
        },
      }),
    );
    expect(result.findings).toEqual([]);
  });

  it("reports emails that differ as a set", () => {
    const result = classifyPlatformUser(input({ platform: { id: "p1", ...desiredUser, emails: [] } }));
    expect(result.findings).toEqual([{ cls: "changed", detail: "fields: emails" }]);
  });

  it("plans to deactivate a tombstoned user still active (onDelete deactivate)", () => {
    const result = classifyPlatformUser(input({ desired: { state: "tombstone" } }));
    expect(result).toMatchObject({
      findings: [{ cls: "activeMismatch" }],
      repair: "sync",
      deprovision: true,
    });
  });

  it("finds nothing for a tombstoned user already inactive (onDelete deactivate)", () => {
    const result = classifyPlatformUser(
      input({ desired: { state: "tombstone" }, platform: { id: "p1", active: false } }),
    );
    expect(result).toEqual({ findings: [], repair: "none", deprovision: false });
  });

  it("plans to delete a tombstoned user still on the platform (onDelete delete), active or not", () => {
    for (const active of [true, false]) {
      const result = classifyPlatformUser(
        input({ desired: { state: "tombstone" }, onDelete: "delete", platform: { id: "p1", active } }),
      );
      expect(result).toMatchObject({ repair: "sync", deprovision: true });
    }
  });

  it("reports an owned user unknown to the directory without touching it", () => {
    const result = classifyPlatformUser(input({ desired: { state: "unknown" } }));
    expect(result).toMatchObject({ findings: [{ cls: "changed" }], repair: "none", deprovision: false });
  });
});

describe("classifyUnseen", () => {
  it("calls a never-synced entity missing", () => {
    expect(classifyUnseen({ desired: { state: "present", resource: {} } })).toMatchObject({
      findings: [{ cls: "missing" }],
      repair: "sync",
      deprovision: false,
    });
  });

  it("calls an owned entity gone from the platform deleted behind the bridge's back", () => {
    expect(classifyUnseen({ desired: { state: "present", resource: {} }, platformId: "p1" })).toMatchObject({
      findings: [{ cls: "deletedBehind" }],
      repair: "sync",
    });
  });

  it("finds nothing for tombstones and unknown entities", () => {
    for (const desired of [{ state: "tombstone" as const }, { state: "unknown" as const }]) {
      expect(classifyUnseen({ desired, platformId: "p1" }).findings).toEqual([]);
    }
  });
});
