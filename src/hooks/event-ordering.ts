/**
 * Ordering decisions for at-least-once, out-of-order event deliveries (pure).
 *
 * "An event older than the entity's last change does not undo it." The entity's last change from
 * another intake path (SCIM, signed events) is its `meta.lastModified`. A change applied from an
 * Okta event is dated by the event's `published` time instead: the store stamps `lastModified`
 * with the time of the write, which is later than every event still in flight, so comparing with
 * it would drop the rest of a batch. The hooks therefore keep small marks per entity:
 *
 * - `seenVersion`: the entity version whose `lastModified` is already accounted for (the version
 *   the hooks last wrote or looked at). A different current version means another path wrote.
 * - `floor`: the latest `lastModified` of such foreign writes, kept once the hooks write again.
 * - `aspects`: per independent part of the entity (a user's lifecycle, its profile, one group
 *   membership), the latest `published` time applied. Independent parts do not order each other:
 *   a profile update does not make an older deactivation stale.
 */

export interface EntityClock {
  /** `meta.version` of the current record. */
  version: string;
  /** `meta.lastModified` of the current record (ISO 8601). */
  lastModified: string;
}

/** The version is qualified by the entity id: a re-created entity starts its versions again. */
export function entityClock(id: string, meta: { version: string; lastModified: string }): EntityClock {
  return { version: `${id}:${meta.version}`, lastModified: meta.lastModified };
}

export interface HookMarks {
  /**
   * The revision the marks were read at (Redis: field `n`, bumped by every write of them). A write
   * decided from these marks applies only if they are still at this revision (hook-state-store.ts).
   */
  revision?: string;
  seenVersion?: string;
  floor?: number;
  aspects: Record<string, number>;
}

export const EMPTY_MARKS: HookMarks = Object.freeze({ aspects: Object.freeze({}) }) as HookMarks;

/** The time of the last foreign write not yet folded into the marks (0 when there is none). */
function foreignTime(clock: EntityClock | null, marks: HookMarks): number {
  if (!clock || clock.version === marks.seenVersion) return 0;
  const t = Date.parse(clock.lastModified);
  return Number.isNaN(t) ? 0 : t;
}

/** The time of the last change that an event on `aspect` must not undo. */
export function lastChangeTime(clock: EntityClock | null, marks: HookMarks, aspect: string): number {
  return Math.max(foreignTime(clock, marks), marks.floor ?? 0, marks.aspects[aspect] ?? 0);
}

/** True when an event published at `published` is older than the last change it would undo. */
export function isStale(
  published: number,
  clock: EntityClock | null,
  marks: HookMarks,
  aspect: string,
): boolean {
  return published < lastChangeTime(clock, marks, aspect);
}

/**
 * The marks after an event on `aspects` was applied (or found to change nothing).
 * `before` is the record the decision was made on; `afterVersion` the version once written
 * (the same version when nothing was written; undefined when the entity does not exist).
 */
export function advanceMarks(
  marks: HookMarks,
  before: EntityClock | null,
  afterVersion: string | undefined,
  aspects: string[],
  published: number,
): HookMarks {
  const next: Record<string, number> = { ...marks.aspects };
  for (const aspect of aspects) next[aspect] = Math.max(next[aspect] ?? 0, published);
  const floor = Math.max(marks.floor ?? 0, foreignTime(before, marks));
  return {
    seenVersion: afterVersion ?? marks.seenVersion,
    ...(floor > 0 ? { floor } : {}),
    aspects: next,
  };
}

/** Aspect names. */
export const ASPECT_LIFECYCLE = "lifecycle";
export const ASPECT_PROFILE = "profile";
/**
 * Not a part of the user but a memory kept with its marks: the `published` time of the latest
 * deactivation received while the bridge held no such user. Nothing is created for it; a user created
 * afterwards from an older create, or from a membership add, is created inactive
 * (okta-user-change.ts, newUserActive).
 */
export const ASPECT_DEACTIVATED = "deactivated";
export function membershipAspect(oktaUserId: string): string {
  return `member:${oktaUserId}`;
}

/** A deleted user is not brought back by an event published before (or at) its deletion. */
export function blockedByDeletion(published: number, deletedAt: number | null): boolean {
  return deletedAt !== null && published <= deletedAt;
}
