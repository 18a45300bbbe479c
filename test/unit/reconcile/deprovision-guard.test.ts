import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateGuard } from "../../../src/reconcile/deprovision-guard.js";

describe("evaluateGuard", () => {
  it("lets a run at the threshold through and trips just above it", () => {
    expect(evaluateGuard(10, 100, 0.1).tripped).toBe(false);
    expect(evaluateGuard(11, 100, 0.1)).toMatchObject({ tripped: true, share: 0.11, ownedUsers: 100 });
  });

  it("never trips without planned deprovisioning", () => {
    expect(evaluateGuard(0, 0, 0).tripped).toBe(false);
    expect(evaluateGuard(0, 100, 0).tripped).toBe(false);
  });

  it("trips on any deprovisioning when the source owns no users", () => {
    expect(evaluateGuard(1, 0, 0.1)).toMatchObject({ tripped: true, share: 1 });
  });

  it("trips on any deprovisioning with a share of 0, never with a share of 1", () => {
    expect(evaluateGuard(1, 1000, 0).tripped).toBe(true);
    expect(evaluateGuard(5000, 10, 1).tripped).toBe(false);
  });

  it("trips exactly when planned / owned exceeds the share (property)", () => {
    fc.assert(
      fc.property(
        fc.nat(10_000),
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (planned, owned, maxShare) => {
          expect(evaluateGuard(planned, owned, maxShare).tripped).toBe(planned / owned > maxShare);
        },
      ),
    );
  });
});

describe("attribute slices", () => {
  it("checks everything in one run for a small source, and splits a large one", async () => {
    const { attributeSlices, sliceOf } = await import("../../../src/reconcile/attribute-slices.js");
    expect(attributeSlices(10, 2000)).toBe(1);
    expect(attributeSlices(100_000, 2000)).toBe(50);
    const counts = new Array(50).fill(0);
    for (let i = 0; i < 10_000; i++) counts[sliceOf(`user-${i}`, 50)] += 1;
    expect(Math.min(...counts)).toBeGreaterThan(100);
    expect(sliceOf("same", 7)).toBe(sliceOf("same", 7));
  });
});
