/**
 * A due late-write check of a user whose lifecycle change is still queued waits for that change to
 * settle (late-writes.ts, dueCheckFate): read before, during an outage, its resync only spends its
 * job's attempts and dead-letters a user whose deprovisioning is waiting for the platform.
 */
import { describe, expect, it } from "vitest";
import { dueCheckFate } from "../../../src/sync/late-writes.js";

const user = { source: "okta", kind: "user" as const, id: "u1" };
const group = { source: "okta", kind: "group" as const, id: "g1" };

describe("dueCheckFate", () => {
  it("postpones a user's check while a lifecycle change of it is queued", () => {
    expect(dueCheckFate(user, true)).toBe("postpone");
  });
  it("hands on a user's check once nothing is queued for it", () => {
    expect(dueCheckFate(user, false)).toBe("handOn");
  });
  it("hands on a group's check (groups have no lifecycle changes)", () => {
    expect(dueCheckFate(group, true)).toBe("handOn");
    expect(dueCheckFate(group, false)).toBe("handOn");
  });
});
