import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ASPECT_LIFECYCLE,
  ASPECT_PROFILE,
  EMPTY_MARKS,
  type EntityClock,
  type HookMarks,
  advanceMarks,
  blockedByDeletion,
  isStale,
  membershipAspect,
} from "../../../src/hooks/event-ordering.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("event ordering", () => {
  it("does not drop the rest of a batch after its first write (the store stamps write time)", () => {
    // create (t=1000) applied at t=5000; the deactivate published at t=1050 must still apply.
    const afterCreate = advanceMarks(EMPTY_MARKS, null, 'u1:W/"1"', [ASPECT_LIFECYCLE, ASPECT_PROFILE], 1000);
    const clock: EntityClock = { version: 'u1:W/"1"', lastModified: iso(5000) };
    expect(isStale(1050, clock, afterCreate, ASPECT_LIFECYCLE)).toBe(false);
    expect(isStale(999, clock, afterCreate, ASPECT_LIFECYCLE)).toBe(true);
  });

  it("treats a write from another path as the entity's last change (meta.lastModified)", () => {
    const marks = advanceMarks(EMPTY_MARKS, null, 'u1:W/"1"', [ASPECT_LIFECYCLE], 1000);
    const scimWrite: EntityClock = { version: 'u1:W/"2"', lastModified: iso(8000) };
    expect(isStale(7000, scimWrite, marks, ASPECT_LIFECYCLE)).toBe(true);
    expect(isStale(7000, scimWrite, marks, ASPECT_PROFILE)).toBe(true);
    expect(isStale(9000, scimWrite, marks, ASPECT_LIFECYCLE)).toBe(false);
  });

  it("keeps a foreign write's time once the hooks write again (floor)", () => {
    const marks = advanceMarks(EMPTY_MARKS, null, 'u1:W/"1"', [ASPECT_LIFECYCLE], 1000);
    const scimWrite: EntityClock = { version: 'u1:W/"2"', lastModified: iso(8000) };
    const afterHook = advanceMarks(marks, scimWrite, 'u1:W/"3"', [ASPECT_PROFILE], 9000);
    const now: EntityClock = { version: 'u1:W/"3"', lastModified: iso(9500) };
    expect(afterHook.floor).toBe(8000);
    expect(isStale(7000, now, afterHook, ASPECT_LIFECYCLE)).toBe(true);
    expect(isStale(8500, now, afterHook, ASPECT_LIFECYCLE)).toBe(false);
  });

  it("orders independent aspects separately", () => {
    const marks = advanceMarks(EMPTY_MARKS, null, 'g:W/"1"', [membershipAspect("a")], 5000);
    const clock: EntityClock = { version: 'g:W/"1"', lastModified: iso(6000) };
    expect(isStale(4000, clock, marks, membershipAspect("a"))).toBe(true);
    expect(isStale(4000, clock, marks, membershipAspect("b"))).toBe(false);
  });

  it("does not let a late event bring a deleted user back", () => {
    expect(blockedByDeletion(1000, 2000)).toBe(true);
    expect(blockedByDeletion(2000, 2000)).toBe(true);
    expect(blockedByDeletion(3000, 2000)).toBe(false);
    expect(blockedByDeletion(1000, null)).toBe(false);
  });

  it("converges to the latest event's state in any delivery order (one user's active flag)", () => {
    // A model of the intake: each event sets active; the store bumps the version and stamps
    // lastModified with the (later) time of the write. The result must be the newest event's value.
    const events = fc.uniqueArray(
      fc.record({ published: fc.integer({ min: 1, max: 1000 }), active: fc.boolean() }),
      {
        minLength: 1,
        maxLength: 8,
        selector: (e) => e.published,
      },
    );
    fc.assert(
      fc.property(events, fc.nat(), (list, seed) => {
        const order = [...list].sort(
          (a, b) => ((a.published * 7919 + seed) % 1009) - ((b.published * 7919 + seed) % 1009),
        );
        let marks: HookMarks = EMPTY_MARKS;
        let clock: EntityClock | null = null;
        let active: boolean | null = null;
        let version = 0;
        let wallClock = 2000;
        for (const event of order) {
          wallClock += 10;
          if (isStale(event.published, clock, marks, ASPECT_LIFECYCLE)) continue;
          const before = clock;
          if (active !== event.active) {
            active = event.active;
            version++;
            clock = { version: `u:${version}`, lastModified: iso(wallClock) };
          }
          marks = advanceMarks(marks, before, clock?.version, [ASPECT_LIFECYCLE], event.published);
        }
        const newest = [...list].sort((a, b) => b.published - a.published)[0]!;
        expect(active).toBe(newest.active);
      }),
    );
  });
});
