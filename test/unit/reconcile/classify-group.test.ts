import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyPlatformGroup, diffMembers } from "../../../src/reconcile/classify-group.js";

describe("diffMembers", () => {
  it("names missing and extra members", () => {
    expect(diffMembers(["a", "b", "c"], ["b", "c", "d"])).toEqual({ missing: ["a"], extra: ["d"] });
  });

  it("is empty exactly when the sets are equal (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string()), fc.array(fc.string()), (want, have) => {
        const diff = diffMembers(want, have);
        const equal = new Set(want).size === new Set(have).size && want.every((w) => have.includes(w));
        expect(diff.missing.length === 0 && diff.extra.length === 0).toBe(equal);
        for (const m of diff.missing) expect(have).not.toContain(m);
        for (const e of diff.extra) expect(want).not.toContain(e);
      }),
    );
  });
});

describe("classifyPlatformGroup", () => {
  const present = { state: "present" as const, resource: { displayName: "Eng" } };

  it("finds nothing on a converged group", () => {
    const result = classifyPlatformGroup({
      owner: "this",
      desired: present,
      expectedName: "idp-Eng",
      platformName: "idp-Eng",
      expectedMembers: ["u1", "u2"],
      actualMembers: ["u2", "u1"],
    });
    expect(result).toEqual({ findings: [], repair: "none", deprovision: false });
  });

  it("finds a member removed behind the bridge's back", () => {
    const result = classifyPlatformGroup({
      owner: "this",
      desired: present,
      expectedName: "Eng",
      platformName: "Eng",
      expectedMembers: ["u1", "u2"],
      actualMembers: ["u1"],
    });
    expect(result.findings).toEqual([{ cls: "membership", detail: "members: 1 missing, 0 extra" }]);
    expect(result).toMatchObject({ repair: "sync", deprovision: false });
  });

  it("finds a renamed group", () => {
    const result = classifyPlatformGroup({
      owner: "this",
      desired: present,
      expectedName: "Eng",
      platformName: "Engineering",
    });
    expect(result.findings.map((f) => f.cls)).toEqual(["changed"]);
  });

  it("ignores groups it does not own and never calls a group an orphan", () => {
    for (const owner of ["other", "none"] as const) {
      const result = classifyPlatformGroup({ owner, desired: present, platformName: "X", expectedName: "Y" });
      expect(result.findings).toEqual([]);
    }
  });

  it("repairs a group deleted at the source that is still on the platform, without counting it for the guard", () => {
    const result = classifyPlatformGroup({
      owner: "this",
      desired: { state: "tombstone" },
      platformName: "X",
    });
    expect(result).toMatchObject({ repair: "sync", deprovision: false });
  });
});
