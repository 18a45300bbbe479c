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
  groupDeletionIsStale,
  isStale,
  lastChangeTime,
  membershipAspect,
  membershipValue,
  seenValue,
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

describe("a foreign write orders only the aspects it changed (seen values)", () => {
  const v = (n: number) => `u1:W/"${n}"`;
  const clockAt = (n: number, ms: number): EntityClock => ({
    entity: "u1",
    version: v(n),
    lastModified: iso(ms),
  });
  // The hooks created u1 (version 1): active, profile "p".
  const created = advanceMarks(EMPTY_MARKS, null, v(1), [ASPECT_LIFECYCLE, ASPECT_PROFILE], 1000, {
    after: { [ASPECT_LIFECYCLE]: "true", [ASPECT_PROFILE]: "p" },
  });

  it("keeps the values the hooks wrote as seen", () => {
    expect(seenValue(clockAt(1, 5000), created, ASPECT_LIFECYCLE)).toBe("true");
    expect(seenValue(clockAt(1, 5000), created, ASPECT_PROFILE)).toBe("p");
    // Only for the entity the marks follow (a user created again has another id).
    expect(
      seenValue({ ...clockAt(1, 5000), entity: "u2", version: 'u2:W/"1"' }, created, ASPECT_LIFECYCLE),
    ).toBe(undefined);
  });

  it("a foreign write that left an aspect as seen does not order it; one that changed it does", () => {
    const scim = clockAt(2, 8000); // e.g. a SCIM PATCH of the title at t=8000
    expect(isStale(7000, scim, created, ASPECT_LIFECYCLE, "true")).toBe(false);
    expect(lastChangeTime(scim, created, ASPECT_LIFECYCLE, "true")).toBe(1000);
    expect(isStale(7000, scim, created, ASPECT_LIFECYCLE, "false")).toBe(true);
    expect(isStale(7000, scim, created, ASPECT_PROFILE, "p2")).toBe(true);
    expect(isStale(7000, scim, created, ASPECT_PROFILE, "p")).toBe(false);
    // Unknown current value: every foreign write counts (as before seen values existed).
    expect(isStale(7000, scim, created, ASPECT_LIFECYCLE)).toBe(true);
    // The hooks' own last change of the aspect still orders it.
    expect(isStale(900, scim, created, ASPECT_LIFECYCLE, "true")).toBe(true);
  });

  it("marks without seen values keep the conservative ordering", () => {
    const old: HookMarks = { seenVersion: v(1), aspects: { [ASPECT_LIFECYCLE]: 1000 } };
    expect(isStale(7000, clockAt(2, 8000), old, ASPECT_LIFECYCLE, "true")).toBe(true);
    const withFloor: HookMarks = { seenVersion: v(3), floor: 8000, aspects: {} };
    expect(isStale(7000, clockAt(3, 9000), withFloor, ASPECT_LIFECYCLE, "true")).toBe(true);
  });

  it("the floor applies per aspect: a profile-only foreign write does not block later lifecycle events", () => {
    const scim = clockAt(2, 8000); // title PATCH
    // The hooks write the profile (t=9000): the foreign write is folded into the floor.
    const afterProfile = advanceMarks(created, scim, v(3), [ASPECT_PROFILE], 9000, {
      before: { [ASPECT_PROFILE]: "p" },
      after: { [ASPECT_PROFILE]: "p9" },
    });
    expect(afterProfile.floor).toBe(8000);
    const now = clockAt(3, 9500);
    expect(isStale(7000, now, afterProfile, ASPECT_LIFECYCLE, "true")).toBe(false);
    expect(isStale(7000, now, afterProfile, ASPECT_PROFILE, "p9")).toBe(true);
    // A lifecycle changed by the foreign write meanwhile: the floor counts for it.
    expect(isStale(7000, now, afterProfile, ASPECT_LIFECYCLE, "false")).toBe(true);
  });

  it("does not take a value as seen for an aspect the event is stale on", () => {
    const scim = clockAt(2, 8000); // SCIM deactivated the user at t=8000
    // A create event (lifecycle and profile) published at 7000 refreshes the profile only.
    const next = advanceMarks(created, scim, v(3), [ASPECT_LIFECYCLE, ASPECT_PROFILE], 7000, {
      before: { [ASPECT_LIFECYCLE]: "false", [ASPECT_PROFILE]: "p" },
      after: { [ASPECT_LIFECYCLE]: "false", [ASPECT_PROFILE]: "p7" },
    });
    const now = clockAt(3, 9000);
    expect(seenValue(now, next, ASPECT_LIFECYCLE)).toBe("true");
    expect(seenValue(now, next, ASPECT_PROFILE)).toBe("p7");
    // An activation published at 7500 is still older than the SCIM deactivation.
    expect(isStale(7500, now, next, ASPECT_LIFECYCLE, "false")).toBe(true);
  });

  it("forgets seen values when the marks move to another entity (deleted and created again)", () => {
    const recreated: EntityClock = { entity: "u2", version: 'u2:W/"1"', lastModified: iso(8000) };
    expect(isStale(7000, recreated, created, ASPECT_LIFECYCLE, "true")).toBe(true);
    const next = advanceMarks(created, recreated, 'u2:W/"2"', [ASPECT_PROFILE], 9000, {
      before: { [ASPECT_PROFILE]: "q" },
      after: { [ASPECT_PROFILE]: "q9" },
    });
    const now: EntityClock = { entity: "u2", version: 'u2:W/"2"', lastModified: iso(9500) };
    // The lifecycle seen on u1 does not count for u2: the re-creation (t=8000) orders it.
    expect(seenValue(now, next, ASPECT_LIFECYCLE)).toBe(undefined);
    expect(isStale(7000, now, next, ASPECT_LIFECYCLE, "true")).toBe(true);
    expect(seenValue(now, next, ASPECT_PROFILE)).toBe("q9");
  });

  it("membership aspects: another member's change does not order this one", () => {
    const g = (n: number, ms: number): EntityClock => ({
      entity: "g1",
      version: `g1:W/"${n}"`,
      lastModified: iso(ms),
    });
    const a = membershipAspect("00ua");
    const added = advanceMarks(EMPTY_MARKS, null, 'g1:W/"1"', [a], 1000, {
      after: { [a]: membershipValue("ua", true) },
    });
    const otherAdded = g(2, 8000);
    expect(isStale(7000, otherAdded, added, a, membershipValue("ua", true))).toBe(false);
    expect(isStale(7000, otherAdded, added, a, membershipValue("ua", false))).toBe(true);
    expect(membershipValue(null, true)).toBe("out");
  });
});

describe("groupDeletionIsStale", () => {
  const t = Date.parse("2026-11-27T10:00:00Z");
  const later = "2026-11-27T10:00:05.000Z";
  it("a group the hooks follow is deleted whatever its meta.created (stamped at the hooks' own write)", () => {
    const marks = { aspects: { "member:00u1": t - 5_000 }, seenVersion: 'g1:W/"3"' };
    expect(groupDeletionIsStale(t, { id: "g1", created: later }, marks)).toBe(false);
  });
  it("a group the hooks never followed, created after the deletion's time, is not deleted", () => {
    expect(groupDeletionIsStale(t, { id: "g2", created: later }, { aspects: {} })).toBe(true);
    expect(groupDeletionIsStale(t, { id: "g2", created: "2026-11-27T09:00:00Z" }, { aspects: {} })).toBe(
      false,
    );
    // Marks that follow another entity (a group of that Okta id deleted and made again) do not count.
    const other = { aspects: {}, seenVersion: 'g1:W/"3"' };
    expect(groupDeletionIsStale(t, { id: "g2", created: later }, other)).toBe(true);
  });
  it("a later lifecycle event applied by the hooks makes an older deletion stale, held or not", () => {
    const marks = { aspects: { [ASPECT_LIFECYCLE]: t + 1 } };
    expect(groupDeletionIsStale(t, null, marks)).toBe(true);
    expect(groupDeletionIsStale(t + 1, null, marks)).toBe(false);
  });
});
