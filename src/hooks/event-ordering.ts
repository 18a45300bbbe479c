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
 * - `floor`: the latest `lastModified` of such foreign writes, kept once the hooks write again;
 *   like a pending foreign write, it orders an aspect only as `seen` below allows.
 * - `aspects`: per independent part of the entity (a user's lifecycle, its profile, one group
 *   membership), the latest `published` time applied. Independent parts do not order each other:
 *   a profile update does not make an older deactivation stale.
 * - `seen`: per aspect, the value the hooks last saw it have (after their own write, or found
 *   unchanged), tagged with the marks' `generation` (bumped whenever the marks move to another
 *   entity, e.g. a user deleted and created again). A foreign write (and `floor`) orders an aspect
 *   only if the aspect's current value differs from the seen one, or no seen value is known (marks
 *   written before seen values existed, an entity the hooks never wrote): a SCIM PATCH of a user's
 *   title does not make an older Okta deactivation stale, one that reactivated the user does.
 *   A foreign change that was changed back before the hooks looked again is not seen (A -> B -> A).
 */

export interface EntityClock {
  /** The entity's id (seen values count only for the entity the marks' seenVersion names). */
  entity?: string;
  /** `meta.version` of the current record. */
  version: string;
  /** `meta.lastModified` of the current record (ISO 8601). */
  lastModified: string;
}

/** The version is qualified by the entity id: a re-created entity starts its versions again. */
export function entityClock(id: string, meta: { version: string; lastModified: string }): EntityClock {
  return { entity: id, version: `${id}:${meta.version}`, lastModified: meta.lastModified };
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
  /** Tags the seen values of the entity the marks follow now (Redis: field `g`). */
  generation?: number;
  /** Per aspect, `<generation>|<value>` as stored (Redis: fields `s:<aspect>`). */
  seen?: Record<string, string>;
}

/** Current values of aspects (what an aspect's value is, e.g. `"true"` for a user's lifecycle). */
export type AspectValues = Record<string, string | undefined>;

export const EMPTY_MARKS: HookMarks = Object.freeze({ aspects: Object.freeze({}) }) as HookMarks;

/** The time of the last foreign write not yet folded into the marks (0 when there is none). */
function foreignTime(clock: EntityClock | null, marks: HookMarks): number {
  if (!clock || clock.version === marks.seenVersion) return 0;
  const t = Date.parse(clock.lastModified);
  return Number.isNaN(t) ? 0 : t;
}

/** The value the hooks last saw `aspect` have on the entity `clock` is of, if known. */
export function seenValue(clock: EntityClock | null, marks: HookMarks, aspect: string): string | undefined {
  if (!clock?.entity || !marks.seenVersion?.startsWith(`${clock.entity}:`)) return undefined;
  const raw = marks.seen?.[aspect];
  const tag = `${marks.generation ?? 0}|`;
  return raw?.startsWith(tag) ? raw.slice(tag.length) : undefined;
}

/**
 * Whether writes from other paths may have changed `aspect`, whose current value is `current`
 * (undefined: not known): unless it is the value the hooks saw, they count.
 */
export function foreignMayHaveChanged(
  clock: EntityClock | null,
  marks: HookMarks,
  aspect: string,
  current: string | undefined,
): boolean {
  if (current === undefined) return true;
  const seen = seenValue(clock, marks, aspect);
  return seen === undefined || seen !== current;
}

/**
 * The time of the last change that an event on `aspect` must not undo: the latest event applied
 * to it, and foreign writes (pending, and folded into `floor`) when they may have changed it.
 */
export function lastChangeTime(
  clock: EntityClock | null,
  marks: HookMarks,
  aspect: string,
  current?: string,
): number {
  const own = marks.aspects[aspect] ?? 0;
  if (!foreignMayHaveChanged(clock, marks, aspect, current)) return own;
  return Math.max(foreignTime(clock, marks), marks.floor ?? 0, own);
}

/**
 * True when an event published at `published` is older than the last change it would undo.
 * `current` is the aspect's current value (omitted: unknown, every foreign write counts).
 */
export function isStale(
  published: number,
  clock: EntityClock | null,
  marks: HookMarks,
  aspect: string,
  current?: string,
): boolean {
  return published < lastChangeTime(clock, marks, aspect, current);
}

/**
 * The marks after an event on `aspects` was applied (or found to change nothing).
 * `before` is the record the decision was made on; `afterVersion` the version once written
 * (the same version when nothing was written; undefined when the entity does not exist).
 * `values.before` / `values.after`: the aspects' values on `before` and once written. An after
 * value is kept as seen for each of `aspects` the event is not stale on (its foreign changes, if
 * any, are older than the event); for an entity the write creates (`before` null), every after
 * value given is kept.
 */
export function advanceMarks(
  marks: HookMarks,
  before: EntityClock | null,
  afterVersion: string | undefined,
  aspects: string[],
  published: number,
  values: { before?: AspectValues; after?: AspectValues } = {},
): HookMarks {
  const next: Record<string, number> = { ...marks.aspects };
  for (const aspect of aspects) next[aspect] = Math.max(next[aspect] ?? 0, published);
  const floor = Math.max(marks.floor ?? 0, foreignTime(before, marks));
  // Another entity than the one the seen values are of: they no longer count.
  const sameEntity = before?.entity !== undefined && marks.seenVersion?.startsWith(`${before.entity}:`);
  const generation = sameEntity ? (marks.generation ?? 0) : (marks.generation ?? 0) + 1;
  const seen: Record<string, string> = sameEntity ? { ...marks.seen } : {};
  const after = values.after ?? {};
  const kept = before === null ? Object.keys(after) : aspects;
  for (const aspect of kept) {
    const value = after[aspect];
    if (value === undefined) continue;
    if (before !== null && published < lastChangeTime(before, marks, aspect, values.before?.[aspect]))
      continue;
    seen[aspect] = `${generation}|${value}`;
  }
  return {
    seenVersion: afterVersion ?? marks.seenVersion,
    ...(floor > 0 ? { floor } : {}),
    aspects: next,
    ...(generation > 0 ? { generation } : {}),
    ...(Object.keys(seen).length > 0 ? { seen } : {}),
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
/**
 * A group's memory of its deletion in Okta: the `published` time of the `group.lifecycle.delete`
 * applied (or received while the bridge held no such group). A membership add published before
 * (or at) it does not bring the group back, nor create its user.
 */
export const ASPECT_GROUP_DELETED = "deleted";
/**
 * Whether an Okta group deletion published at `published` is too old to apply to the group found
 * (null when none is held): the hooks applied a later lifecycle event of it, or a group the hooks
 * have never followed (marks' seenVersion of another entity) was created after it (made again
 * through another path). A group the hooks created or wrote to is that Okta group, whatever its
 * `meta.created` says (the store stamps the time of the write, later than events in flight). A
 * group's lifecycle is its existence: other writes after the deletion (a rename, a member taken out
 * because its user was deleted) are changes of a group Okta no longer has, and Okta never reuses a
 * group id, so they do not keep it (as a SCIM PATCH of a user's title does not make an older
 * deactivation stale).
 */
export function groupDeletionIsStale(
  published: number,
  group: { id: string; created: string } | null,
  marks: HookMarks,
): boolean {
  if (published < (marks.aspects[ASPECT_LIFECYCLE] ?? 0)) return true;
  if (group === null || marks.seenVersion?.startsWith(`${group.id}:`)) return false;
  const createdAt = Date.parse(group.created);
  return !Number.isNaN(createdAt) && published < createdAt;
}

/**
 * A group's name as Okta events set it: the `published` time of the latest `group.profile.update`
 * applied; its seen value is the group's displayName.
 */
export const ASPECT_GROUP_NAME = "name";

export function membershipAspect(oktaUserId: string): string {
  return `member:${oktaUserId}`;
}

/** The value of a membership aspect: in the group (as which directory user), or not. */
export function membershipValue(userId: string | null, isMember: boolean): string {
  return userId !== null && isMember ? `in:${userId}` : "out";
}

/** A deleted user is not brought back by an event published before (or at) its deletion. */
export function blockedByDeletion(published: number, deletedAt: number | null): boolean {
  return deletedAt !== null && published <= deletedAt;
}
