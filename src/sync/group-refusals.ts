import { narrowRefusal, narrowingCalls } from "../mapping/narrow-refusal.js";
import { refusedAddFate, usersOfPlatformIds } from "../mapping/plan-group.js";
import { chunk } from "../mapping/plan-types.js";
import { type EntityRef, parseRefKey } from "../scim/scim-types.js";
import type { SyncContext, SyncOutcome } from "./sync-context.js";
import {
  NAMED_MEMBERS,
  SyncError,
  classifyFailure,
  isPlatformFailure,
  refusedMembersError,
} from "./sync-error.js";

/**
 * What a group's sync does when the platform refuses members for good: a refused chunk narrowed to
 * its culprits and the refusals said at the end (the group's dead letter, naming members by the
 * bridge's ids) or with another failure that ends the sync, for a workspace group (sync-group.ts)
 * and an embed-tenant group (sync-embed-group.ts) alike; and, for a workspace group, members
 * deleted on the platform left out and their users created again.
 */

/** Platform users looked up at a time when a refused add is checked member by member. */
const LOOKUP_CONCURRENCY = 10;

/**
 * How a piece of a member chunk is written to the platform (`send`: throws the platform's failure,
 * a refusal included), and the group's record once it landed (`landed`).
 */
export interface MemberWrites<A> {
  send(ids: string[]): Promise<void>;
  landed(applied: A, ids: string[]): A;
}

/**
 * Whether a refused chunk of adds, and of removals, is narrowed to its culprits (narrowChunk). Once
 * a narrowing landed nothing, the refusal is the group's (a member limit, say), not a member's:
 * later chunks of that kind are refused whole, without spending calls on halves. Each kind for
 * itself: removals the platform refuses every one of say nothing of its adds, nor adds of removals.
 */
export type Narrowing = Record<"add" | "remove", boolean>;

export interface NarrowedChunk<A> {
  /** The group's record with the pieces that landed (in doubt while the sync's writes run). */
  applied: A;
  /** The members the platform refused: alone, or a piece left whole once the calls ran out. */
  refused: string[];
  /** The chunk was narrowed and not one piece of it landed: the refusal is not a member's. */
  landedNothing: boolean;
  /**
   * A failure other than a refusal met while narrowing: what landed before it is recorded, and the
   * culprits found before it are in `refused` (the pieces not sent yet are neither).
   */
  failure?: unknown;
}

/**
 * Narrows a member chunk the platform refused for good (400/422) to its culprits: its halves are
 * sent again (narrowRefusal: at most narrowingCalls(size) calls, all in the round of the refusal,
 * none when `narrow` is false), each piece that lands is recorded, and the members still refused
 * are returned. A failure that is not a refusal ends the narrowing and is returned, to be met as
 * the chunk's own failure would be (a 404: the group created again), with the culprits found before
 * it: a failure that ends the sync for good names them too (withRefusals).
 */
export async function narrowChunk<A extends object>(
  ctx: SyncContext,
  ref: EntityRef,
  applied: A,
  members: readonly string[],
  narrow: boolean,
  writes: MemberWrites<A>,
): Promise<NarrowedChunk<A>> {
  let current = applied;
  /** Members refused alone: culprits for sure, whatever ends the narrowing. */
  const culprits: string[] = [];
  const send = async (piece: string[]): Promise<"landed" | "refused"> => {
    try {
      await writes.send(piece);
    } catch (err) {
      if (!isPlatformFailure(err, "bad_request")) throw err;
      if (piece.length === 1) culprits.push(...piece);
      return "refused";
    }
    current = writes.landed(current, piece);
    await ctx.state.putApplied(ref, current);
    return "landed";
  };
  try {
    const narrowed = await narrowRefusal(members, send, narrow ? narrowingCalls(members.length) : 0);
    if (narrowed.calls > 0) {
      ctx.logger.warn(
        { ref, members: members.length, refused: narrowed.refused.length, calls: narrowed.calls },
        "group members refused for good: the refused chunk was sent again in halves, the others landed",
      );
    }
    return {
      applied: current,
      refused: narrowed.refused,
      landedNothing: narrowed.calls > 0 && narrowed.landed.length === 0,
    };
  } catch (failure) {
    return { applied: current, refused: culprits, landedNothing: false, failure };
  }
}

export interface Refusals {
  /** The members whose add was refused (platform user ids; an embed group's: externalIds). */
  added: Set<string>;
  /** The members whose removal was refused (they are still in the group). */
  removed: Set<string>;
  /** The first refusal: its code is the dead letter's. */
  error?: unknown;
}

/**
 * Who the refused members are: the bridge's user ids (`users`), and the ids of those no user of
 * the source is known by any more that the letter may name (`unknown`: platform user ids, which
 * name no person; an embed member's externalId may be a userName and is only counted), and how many
 * refused members were left without a look-up once enough were named (`more`: counted in the letter).
 */
export type RefusedNames = (
  refused: Refusals,
) => Promise<{ users: string[]; unknown: string[]; more?: number }>;

/**
 * A workspace group's refused members by name: a refused add's user is the group's member whose
 * platform id it is; a refused removal's (they left the group at the source) is the user of the
 * source that owns the platform id, and a platform id no user owns any more is `unknown` (a user
 * deleted at the source is forgotten once deprovisioned, and its platform id released).
 */
export function workspaceRefusedNames(
  ctx: SyncContext,
  ref: EntityRef,
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
): RefusedNames {
  return async (refused) => {
    const added = usersOfPlatformIds(ref.source, memberIds, pids, [...refused.added]).map((u) => u.id);
    const platformIds = [...refused.removed];
    const owners = platformIds.length > 0 ? await ctx.state.ownersOf("user", platformIds) : [];
    const users: string[] = [];
    const unknown: string[] = [];
    owners.forEach((owner, i) => {
      const user = owner === null ? null : parseRefKey(owner);
      if (user === null) unknown.push(platformIds[i] as string);
      else if (user.source === ref.source) users.push(user.id);
    });
    return { users: [...added, ...users], unknown };
  };
}

/**
 * An embed group's refused members by name (their externalIds are never named: one may be a
 * userName): the group's member known by that externalId (`externalIds[i]` is `memberIds[i]`'s),
 * or else (a refused removal: they left the group at the source) the source's user found by it
 * whose recorded embed member is known by it. One the source no longer has is only counted. The
 * letter names at most NAMED_MEMBERS: once that many are found, the rest are not looked up (two
 * Redis calls each) and are counted as `more`.
 */
export function embedRefusedNames(
  ctx: SyncContext,
  ref: EntityRef,
  memberIds: readonly string[],
  externalIds: ReadonlyArray<string | undefined>,
): RefusedNames {
  return async (refused) => {
    const known = new Map<string, string>();
    memberIds.forEach((id, i) => {
      const externalId = externalIds[i];
      if (externalId !== undefined) known.set(externalId, id);
    });
    const all = [...refused.added, ...refused.removed];
    const users: string[] = [];
    let looked = 0;
    for (const externalId of all) {
      if (users.length >= NAMED_MEMBERS) break;
      looked++;
      const id = known.get(externalId) ?? (await embedUserKnownBy(ctx, ref.source, externalId));
      if (id !== null) users.push(id);
    }
    return { users, unknown: [], more: all.length - looked };
  };
}

/** The source's user whose embed member is known by `externalId` (its externalId, or userName). */
async function embedUserKnownBy(
  ctx: SyncContext,
  source: string,
  externalId: string,
): Promise<string | null> {
  const id = await ctx.directory.findUserId(source, { externalId, userName: externalId });
  if (id === null) return null;
  const [member] = await ctx.state.getEmbedMembers(source, [id]);
  return member?.externalId === externalId ? id : null;
}

/**
 * Ends the sync with the refusal (refusedMembersError: a permanent failure, the group's dead letter,
 * counted and logged by the job) when the platform refused some members' add or removal, naming
 * them by the bridge's user ids (`names`). A removal that did not happen leaves someone in a group
 * the source took them out of: said at error level here too (counts only, no personal data), as a
 * human must act.
 */
export async function throwRefusals(
  ctx: SyncContext,
  ref: EntityRef,
  refused: Refusals,
  names: RefusedNames,
): Promise<void> {
  // A held removal made moot (the group created again) leaves nothing refused.
  if (refused.error === undefined || refused.added.size + refused.removed.size === 0) return;
  if (refused.removed.size > 0) {
    ctx.logger.error(
      { ref, members: refused.removed.size },
      "group members could not be removed: the platform refused for good, they keep the group's access (dead letter)",
    );
  }
  const named = await names(refused);
  throw refusedMembersError(
    { added: refused.added.size, removed: refused.removed.size },
    refused.error,
    named.users,
    named.unknown,
    named.more,
  );
}

/**
 * A failure that ends the sync for good (a rename's 409, say) after the platform refused some
 * members' add or removal in it: the refusals are said too (the error line of a held removal, and
 * the dead letter's reason), so a member who keeps the group's access is not hidden behind the
 * other failure. The failure's code stays the letter's. A transient failure is left as it is: the
 * retry meets the refusals again.
 */
export async function withRefusals(
  ctx: SyncContext,
  ref: EntityRef,
  failure: unknown,
  refused: Refusals,
  names: RefusedNames,
): Promise<unknown> {
  const fate = classifyFailure(failure);
  if (!fate.permanent) return failure;
  try {
    await throwRefusals(ctx, ref, refused, names);
    return failure;
  } catch (letter) {
    const said = letter instanceof Error ? letter.message : String(letter);
    return new SyncError(`${fate.message}; besides, ${said}`, {
      code: fate.code,
      permanent: true,
      operation: fate.operation,
      cause: failure,
    });
  }
}

/**
 * The members whose removal was held (refused) that the group no longer has: their removal landed
 * after all (a repeat of it refused because they were out), so they are held no more. Pure.
 */
export function heldButOut(held: ReadonlySet<string>, group: { members: readonly string[] }): string[] {
  const members = new Set(group.members);
  return [...held].filter((id) => !members.has(id));
}

/**
 * What the group's status says while members deleted on the platform are left out (their users are
 * being created again; the group adds them once they land): visible in the admin API, not silent.
 */
export function leftOut(vanished: ReadonlySet<string>): SyncOutcome["warnings"] {
  if (vanished.size === 0) return [];
  return [
    {
      code: "members_recreated",
      message: `${vanished.size} member(s) were deleted on the platform behind the bridge's back: left out until their users are created again, then added`,
    },
  ];
}

/**
 * After a create or an add refused with 400: looks each added member up on the platform (a few at
 * a time). Those that are no platform user are returned, to be left out of this sync, and their
 * directory users are synced again in resync mode: the user's sync reads the platform instead of
 * its record, finds the user gone and creates it again; its new platform id then marks its groups
 * dirty (sync-user.ts, afterPlatformId), and this group adds it. None returned: the refusal stands.
 */
export async function leaveOutVanished(
  ctx: SyncContext,
  ref: EntityRef,
  added: readonly string[],
  memberIds: readonly string[],
  pids: ReadonlyArray<string | null>,
): Promise<string[]> {
  const missing = new Set<string>();
  for (const slice of chunk(added, LOOKUP_CONCURRENCY)) {
    const users = await Promise.all(slice.map((id) => ctx.platform.getUser(id)));
    slice.forEach((id, j) => {
      if (users[j] === null) missing.add(id);
    });
  }
  const fate = refusedAddFate(added, (id) => !missing.has(id));
  if (fate.type === "stands") return [];
  const users = usersOfPlatformIds(ref.source, memberIds, pids, fate.platformIds);
  ctx.logger.warn(
    { ref, vanished: users.length },
    "group add refused: members deleted on the platform are synced again; the others are added now",
  );
  // The resync request first: the sync the mark enqueues must see it.
  await ctx.state.requestResync(users);
  for (const user of users) await ctx.directory.markDirty(user);
  return fate.platformIds;
}
