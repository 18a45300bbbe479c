import type { DirectoryStore, GroupRecord, UserRecord } from "../directory/directory-types.js";
import {
  BadRequestError,
  ConflictError,
  isAppError,
  NotFoundError,
  PreconditionFailedError,
  ServiceUnavailableError,
} from "../errors.js";
import type { Logger } from "../observability/logger.js";
import { cleanName, toCanonicalGroup } from "../scim/canonical-resource.js";
import { SCHEMA_GROUP, type ScimGroup } from "../scim/scim-types.js";
import { absorbGroupWrites, linkedGroups } from "./group-side-effects.js";
import {
  ASPECT_DEACTIVATED,
  ASPECT_GROUP_DELETED,
  ASPECT_GROUP_NAME,
  ASPECT_LIFECYCLE,
  advanceMarks,
  blockedByDeletion,
  entityClock,
  groupDeletionIsStale,
  type HookMarks,
  isStale,
  lastChangeTime,
  membershipAspect,
  membershipValue,
} from "./event-ordering.js";
import type { HookMetrics, HookOutcome } from "./hook-metrics.js";
import type { HookStateStore } from "./hook-state-store.js";
import type { OktaAction, OktaGroupTarget, OktaUserTarget } from "./okta-event.js";
import {
  aspectsOf,
  aspectsRead,
  createsUser,
  decidingAspect,
  mayBeOktaEntity,
  newUserActive,
  newUserFromTarget,
  nextUserResource,
  userAspectValues,
} from "./okta-user-change.js";

export interface OktaDeliverySummary {
  received: number;
  outcomes: Partial<Record<HookOutcome, number>>;
}

export interface OktaHookServiceDeps {
  directory: DirectoryStore;
  state: HookStateStore;
  metrics: HookMetrics;
  logger: Logger;
}

/** A directory write raced with another writer: read again and decide again. */
const ATTEMPTS = 5;

type MembershipAction = Extract<OktaAction, { kind: "membership" }>;
type UserAction = Extract<OktaAction, { kind: "user" }>;
type GroupAction = Extract<OktaAction, { kind: "group" }>;

/**
 * The event names, by login (or group name), a stored user (group) of another externalId: a
 * different person, whom the event must not change. Permanent: the event is rejected, not retried.
 * The message names neither the login nor the ids (it is logged).
 */
class HeldByAnotherError extends ConflictError {
  constructor(kind: "user" | "group") {
    super(
      kind === "user"
        ? "the event's login is held by a user of another externalId"
        : "the event's group name is held by a group of another externalId",
    );
  }
}

/**
 * Another writer won: a changed version (If-Match) or a concurrent create of the same unique key.
 * A conflict that outlasts every attempt is a real one (a login held by another user): rethrown.
 */
function isRace(err: unknown): boolean {
  if (err instanceof HeldByAnotherError) return false;
  return err instanceof PreconditionFailedError || err instanceof ConflictError;
}

/**
 * Whether a directory group is the Okta group `oktaId` for a deletion: its externalId is that id,
 * or it has none and the hooks' marks of that Okta group follow it (membership events found it by
 * name and wrote to it). A group that only shares the name is another group.
 */
function isLinkedGroup(group: GroupRecord, oktaId: string, marks: HookMarks): boolean {
  const externalId = group.resource.externalId;
  if (externalId === oktaId) return true;
  return (
    (externalId === undefined || externalId === "") &&
    marks.seenVersion?.startsWith(`${group.resource.id}:`) === true
  );
}

/** A user or group read a moment ago was deleted before the write (another process): decide again. */
function isGone(err: unknown, read: unknown): boolean {
  return read !== null && err instanceof NotFoundError;
}

function exhausted(lastError: unknown, what: string): Error {
  if (lastError instanceof ConflictError) return lastError;
  return new ServiceUnavailableError(`the ${what} kept changing while an Okta event was applied`);
}

function withoutId<T extends { id?: unknown }>(resource: T): Omit<T, "id"> {
  const { id: _id, ...rest } = resource;
  return rest;
}

/**
 * Applies Okta Event Hook deliveries to a source's directory before they are acknowledged: every
 * directory write is atomic and marks its entity dirty, so the answer Okta gets means the change
 * is durable (invariant 1). Deliveries are at-least-once and unordered: events are deduplicated on
 * `uuid`, and an event older than the last change of what it touches is ignored (event-ordering.ts).
 */
export class OktaHookService {
  /** Deliveries of one source are applied one after another in this process. */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: OktaHookServiceDeps) {}

  handleDelivery(source: string, actions: OktaAction[]): Promise<OktaDeliverySummary> {
    const previous = this.chains.get(source) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.applyAll(source, actions));
    const tail = run.catch(() => undefined);
    this.chains.set(source, tail);
    void tail.then(() => {
      if (this.chains.get(source) === tail) this.chains.delete(source);
    });
    return run;
  }

  private async applyAll(source: string, actions: OktaAction[]): Promise<OktaDeliverySummary> {
    const { state, metrics } = this.deps;
    const uuids = actions.map((a) => a.uuid).filter((u): u is string => u !== undefined);
    const seen = await state.seenOktaEvents(source, uuids);
    const summary: OktaDeliverySummary = { received: actions.length, outcomes: {} };
    // Okta does not order the events of a batch. Applied in `published` order (a stable sort: ties
    // keep the delivery's order), the directory passes only through states Okta was in: a staged
    // pre-hire's membership add listed before its create does not make it active for a moment (a
    // sync could run in between). Events delivered in separate batches are ordered by the marks.
    const ordered = [...actions].sort((a, b) => a.published - b.published);
    for (const action of ordered) {
      let outcome: HookOutcome;
      if (action.uuid !== undefined && seen.has(action.uuid)) outcome = "duplicate";
      else {
        outcome = await this.applyOne(source, action);
        if (action.uuid !== undefined) {
          await state.markOktaEventSeen(source, action.uuid);
          seen.add(action.uuid);
        }
      }
      metrics.count(source, "okta", action.eventType, outcome);
      summary.outcomes[outcome] = (summary.outcomes[outcome] ?? 0) + 1;
    }
    this.deps.logger.info({ source, hook: "okta", ...summary }, "okta event hook delivery applied");
    return summary;
  }

  private async applyOne(source: string, action: OktaAction): Promise<HookOutcome> {
    try {
      switch (action.kind) {
        case "user":
          return await this.applyUserEvent(source, action);
        case "membership":
          return await this.applyMembershipEvent(source, action);
        case "group":
          return action.op === "rename"
            ? await this.applyGroupRename(source, action)
            : await this.applyGroupDeletion(source, action);
        case "unknown":
          return "unknown_type";
        case "no-target":
          return "no_target";
        case "not-success":
          return "not_success";
        default:
          return "malformed";
      }
    } catch (err) {
      // A permanent problem with one event (e.g. a login another user holds) must not block the
      // rest of the delivery or make Okta retry forever; transient failures are rethrown (5xx).
      if (isAppError(err) && err.status < 500) {
        this.deps.logger.warn(
          { source, eventType: action.eventType, uuid: action.uuid, code: err.code, reason: err.message },
          "okta event rejected",
        );
        return "rejected";
      }
      throw err;
    }
  }

  /**
   * Creates the user of an event unless a recorded deletion forbids it, with the user's marks
   * (`aspects` claimed at `published`, the new user's values as seen) stored in the same script if
   * `read` is still current (else PreconditionFailedError). `read` holds the aspects
   * newUserActive decides from.
   */
  private async createUser(
    source: string,
    target: OktaUserTarget,
    cause: "create" | "activate" | "membership",
    published: number,
    read: HookMarks,
    aspects: string[],
  ): Promise<UserRecord | "deleted" | "no_target"> {
    const { state } = this.deps;
    const deletedAt = await state.deletedAt(source, target);
    const resource = newUserFromTarget(target, newUserActive(cause, published, read, deletedAt));
    if (!resource) return "no_target";
    if (blockedByDeletion(published, deletedAt)) return "deleted";
    const next = advanceMarks(read, null, undefined, aspects, published, {
      after: userAspectValues(resource),
    });
    const guard = state.guard(source, "user", target.oktaId, read, next, true);
    return this.deps.directory.createUser(source, resource, { guard });
  }

  /**
   * The directory user an Okta user target names: by externalId (the Okta id), else by login when
   * the user found has no externalId or this one. A user of another externalId holding the login
   * is a different person: HeldByAnotherError (the event is rejected and changes nothing).
   */
  private async findOktaUser(source: string, target: OktaUserTarget): Promise<UserRecord | null> {
    const { directory } = this.deps;
    const id = await directory.findUserId(source, { externalId: target.oktaId, userName: target.login });
    const record = id ? await directory.getUser(source, id) : null;
    if (record && !mayBeOktaEntity(record.resource.externalId, target.oktaId))
      throw new HeldByAnotherError("user");
    return record;
  }

  /**
   * An event about a user the directory does not hold that creates nothing (a profile update, a
   * deactivation): "unknown_user", or "deleted" when it is published before (or at) the user's
   * recorded deletion. A deactivation is remembered in the user's marks (lifecycle and
   * ASPECT_DEACTIVATED), so that older lifecycle events are stale and a user created later from an
   * older create or a membership add is created inactive. A profile update is not remembered: a
   * create that arrives after it creates the user with the create's profile. Like "stale", the
   * answer is given only if the marks did not move since they were read (else decided again).
   */
  private async unknownUser(
    source: string,
    action: UserAction,
    marks: HookMarks,
  ): Promise<HookOutcome | "again"> {
    const { state } = this.deps;
    const { user: target, op, published } = action;
    if (blockedByDeletion(published, await state.deletedAt(source, target))) {
      return (await state.stillAt(source, "user", target.oktaId, marks)) ? "deleted" : "again";
    }
    if (op === "deactivate") {
      const next = advanceMarks(marks, null, undefined, [ASPECT_LIFECYCLE, ASPECT_DEACTIVATED], published);
      await state.setMarksIf(source, "user", target.oktaId, marks, next);
      return "unknown_user";
    }
    return (await state.stillAt(source, "user", target.oktaId, marks)) ? "unknown_user" : "again";
  }

  private async applyUserEvent(source: string, action: UserAction): Promise<HookOutcome> {
    const { directory, state } = this.deps;
    const { user: target, op, published } = action;
    const aspects = aspectsOf(op);
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const marks = await state.getMarks(source, "user", target.oktaId, aspectsRead(op));
      const record = await this.findOktaUser(source, target);
      try {
        if (!record) {
          if (op === "delete") {
            // Nothing to delete, but the deletion is remembered (a late create must not bring the
            // user in). The marks' revision moves with the record, so a create decided concurrently
            // from the same marks (in another process) does not apply and is decided again.
            const deletion = { user: target, at: published };
            await state.setMarksIf(source, "user", target.oktaId, marks, marks, deletion);
            return "unknown_user";
          }
          if (isStale(published, null, marks, decidingAspect(op))) {
            if (await state.stillAt(source, "user", target.oktaId, marks)) return "stale";
            continue;
          }
          if (!createsUser(op)) {
            const outcome = await this.unknownUser(source, action, marks);
            if (outcome === "again") continue;
            return outcome;
          }
          const created = await this.createUser(source, target, op, published, marks, aspects);
          return typeof created === "string" ? created : "applied";
        }
        const clock = entityClock(record.resource.id, record.meta);
        const current = userAspectValues(record.resource);
        // The parts of the user the event applies to: those it is not stale on. Each event but a
        // create changes one part; a create both the profile and the lifecycle (staged), and a late
        // one must neither undo a newer activation nor a newer profile change.
        const applying = aspects.filter((aspect) => {
          // A create is a user's first lifecycle event in Okta: another one published in the same
          // millisecond (a create and its activation) came after it, and keeps the lifecycle.
          if (op === "create" && aspect === ASPECT_LIFECYCLE)
            return published > lastChangeTime(clock, marks, aspect, current[aspect]);
          return !isStale(published, clock, marks, aspect, current[aspect]);
        });
        if (applying.length === 0) {
          // Marks read before, and the record after, another process's write look like a foreign
          // write: stale only if nothing moved since the marks were read.
          if (await state.stillAt(source, "user", target.oktaId, marks)) return "stale";
          continue;
        }
        if (op === "delete") {
          const groups = await linkedGroups(directory, source, record.groups);
          const next = advanceMarks(marks, clock, undefined, aspects, published);
          // Dated by the event (not by now), so that a re-hire published after it still applies.
          await directory.deleteUser(source, record.resource.id, {
            ifMatch: record.meta.version,
            deletedAt: published,
            guard: state.guard(source, "user", target.oktaId, marks, next, false),
          });
          await absorbGroupWrites(directory, state, source, groups);
          await state.recordDeletion(
            source,
            { oktaId: target.oktaId, login: target.login ?? record.resource.userName },
            published,
          );
          return "applied";
        }
        const next = nextUserResource(record.resource, op, target, applying);
        if (next) {
          const marksAfter = advanceMarks(marks, clock, undefined, applying, published, {
            before: current,
            after: userAspectValues(next),
          });
          const updated = await directory.updateUser(source, record.resource.id, () => next, {
            ifMatch: record.meta.version,
            guard: state.guard(source, "user", target.oktaId, marks, marksAfter, true),
          });
          // A write that changed nothing returns the record as it was, without the guard applied.
          if (updated.meta.version !== record.meta.version) return "applied";
        }
        const unchanged = advanceMarks(marks, clock, clock.version, applying, published, {
          before: current,
          after: current,
        });
        await state.setMarksIf(source, "user", target.oktaId, marks, unchanged);
        return "unchanged";
      } catch (err) {
        if (!isRace(err) && !isGone(err, record)) throw err;
        lastError = err;
      }
    }
    throw exhausted(lastError, "user");
  }

  /**
   * The directory group an Okta group target names: by externalId (the Okta group id), else by
   * name. Whether a group found by name is that Okta group is the caller's to decide.
   */
  private async findOktaGroup(source: string, target: OktaGroupTarget): Promise<GroupRecord | null> {
    const { directory } = this.deps;
    const id = await directory.findGroupId(source, {
      externalId: target.oktaId,
      displayName: target.displayName,
    });
    return id ? directory.getGroup(source, id) : null;
  }

  /**
   * The directory user of a membership event (found as findOktaUser finds it); an add creates it
   * unless it was deleted: active, or inactive after a deactivation received while it was unknown.
   */
  private async memberUser(
    source: string,
    action: MembershipAction,
  ): Promise<{ record: UserRecord } | { outcome: HookOutcome }> {
    const { state } = this.deps;
    const record = await this.findOktaUser(source, action.user);
    if (record) return { record };
    if (action.op === "remove") return { outcome: "unchanged" };
    const marks = await state.getMarks(source, "user", action.user.oktaId, [
      ASPECT_LIFECYCLE,
      ASPECT_DEACTIVATED,
    ]);
    // No aspect is claimed: any lifecycle event of this user, older or newer, still applies.
    const created = await this.createUser(source, action.user, "membership", action.published, marks, []);
    if (typeof created === "string") return { outcome: created };
    return { record: created };
  }

  /**
   * The value of a membership aspect now (event-ordering.ts, membershipValue): whether the event's
   * user is in the group. Undefined when the user cannot be told (its login is held by a user of
   * another externalId: the event is rejected later), so that every foreign write counts.
   */
  private async currentMembership(
    source: string,
    action: MembershipAction,
    groupId: string,
  ): Promise<string | undefined> {
    try {
      const record = await this.findOktaUser(source, action.user);
      if (!record) return membershipValue(null, false);
      return membershipValue(record.resource.id, record.groups.includes(groupId));
    } catch (err) {
      if (err instanceof HeldByAnotherError) return undefined;
      throw err;
    }
  }

  private async applyMembershipEvent(source: string, action: MembershipAction): Promise<HookOutcome> {
    const { directory, state } = this.deps;
    const { group: target, published } = action;
    const aspect = membershipAspect(action.user.oktaId);
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const marks = await state.getMarks(source, "group", target.oktaId, [
        aspect,
        ASPECT_GROUP_DELETED,
        ASPECT_GROUP_NAME,
      ]);
      const group = await this.findOktaGroup(source, target);
      // Found by name, a group of another externalId is a different group (as a user by login).
      if (group && !mayBeOktaEntity(group.resource.externalId, target.oktaId))
        throw new HeldByAnotherError("group");
      // A late event of a group deleted in Okta neither brings it back nor creates its user.
      if (!group && blockedByDeletion(published, marks.aspects[ASPECT_GROUP_DELETED] ?? null)) {
        if (await state.stillAt(source, "group", target.oktaId, marks)) return "deleted";
        continue;
      }
      const clock = group ? entityClock(group.resource.id, group.meta) : null;
      // The membership as it is now (read after the group: see save), when the group exists.
      const current = group ? await this.currentMembership(source, action, group.resource.id) : undefined;
      if (isStale(published, clock, marks, aspect, current)) {
        if (await state.stillAt(source, "group", target.oktaId, marks)) return "stale";
        continue;
      }
      // Marks stored without a group write (the revision must not have moved since `marks`). The
      // membership found unchanged is kept as seen at the group's version read: the group must
      // still be at that version, else the membership read may be of a later one (decide again).
      const save = async (version: string | undefined, after?: string) => {
        if (group && after !== undefined) {
          const now = await directory.getGroup(source, group.resource.id);
          if (now?.meta.version !== group.meta.version)
            throw new PreconditionFailedError("the group changed while an Okta event was applied");
        }
        const values = { before: { [aspect]: current }, after: { [aspect]: after } };
        await state.setMarksIf(
          source,
          "group",
          target.oktaId,
          marks,
          advanceMarks(marks, clock, version, [aspect], published, values),
        );
      };
      // Marks stored by the group write itself (seenVersion stamped by the script).
      const guard = (after: string, created?: string) =>
        state.guard(
          source,
          "group",
          target.oktaId,
          marks,
          advanceMarks(marks, clock, undefined, [aspect], published, {
            before: { [aspect]: current },
            after: { [aspect]: after, ...(created === undefined ? {} : { [ASPECT_GROUP_NAME]: created }) },
          }),
          true,
        );
      let memberId: string | undefined;
      try {
        const user = await this.memberUser(source, action);
        if ("outcome" in user) {
          if (action.op === "add") return user.outcome;
          await save(clock?.version, group ? membershipValue(null, false) : undefined);
          return "unchanged";
        }
        memberId = user.record.resource.id;
        if (!group) {
          if (action.op === "remove") {
            await save(undefined);
            return "unchanged";
          }
          const userId = user.record.resource.id;
          // Named as the event names it, unless a newer rename of the group came first.
          const resource = newGroup({
            ...target,
            displayName: rememberedName(marks, published) ?? target.displayName,
          });
          await directory.createGroup(source, resource, [userId], {
            guard: guard(membershipValue(userId, true), String(resource.displayName)),
          });
          return "applied";
        }
        const userId = user.record.resource.id;
        const isMember = user.record.groups.includes(group.resource.id);
        if (isMember === (action.op === "add")) {
          await save(clock?.version, membershipValue(userId, isMember));
          return "unchanged";
        }
        const change = action.op === "add" ? { add: [userId] } : { remove: [userId] };
        await directory.updateGroup(
          source,
          group.resource.id,
          (current) => ({ resource: withoutId(current.resource), members: change }),
          { ifMatch: group.meta.version, guard: guard(membershipValue(userId, action.op === "add")) },
        );
        return "applied";
      } catch (err) {
        if (!isRace(err) && !isGone(err, group) && !(await this.memberGone(source, err, memberId))) throw err;
        lastError = err;
      }
    }
    throw exhausted(lastError, "group");
  }

  /**
   * A group write refused because its member is unknown (BadRequestError) while the event's user,
   * found a moment ago, is gone: another process deleted it in between. A race (decide again), not
   * a problem of the event.
   */
  private async memberGone(source: string, err: unknown, memberId: string | undefined): Promise<boolean> {
    if (!(err instanceof BadRequestError) || memberId === undefined) return false;
    return (await this.deps.directory.getUser(source, memberId)) === null;
  }

  /**
   * The directory group linked to the Okta group `oktaId` (isLinkedGroup): the one of that
   * externalId, or the group without one that the hooks' marks follow (membership events adopted
   * it by name). Never a group that only has the event's name.
   */
  private async linkedOktaGroup(
    source: string,
    oktaId: string,
    marks: HookMarks,
  ): Promise<GroupRecord | null> {
    const { directory } = this.deps;
    const byId = await directory.findGroupId(source, { externalId: oktaId });
    const followed = marks.seenVersion?.slice(0, marks.seenVersion.indexOf(":"));
    const id = byId ?? (followed ? followed : null);
    const group = id ? await directory.getGroup(source, id) : null;
    return group && isLinkedGroup(group, oktaId, marks) ? group : null;
  }

  /**
   * `group.profile.update`: the group renamed in Okta. Renames the directory group linked to that
   * Okta group (linkedOktaGroup) to the name the event carries; its members stay. The name is
   * ordered on its own (ASPECT_GROUP_NAME): an older rename delivered late is stale, and so is one
   * published before another path last changed the name. A group the bridge does not hold is not
   * created (`unknown_group`: a group is created with its first member, under the name its
   * membership event carries, or this one: the rename is remembered, see rememberedName). A name
   * another group holds is refused (`rejected`).
   */
  private async applyGroupRename(source: string, action: GroupAction): Promise<HookOutcome> {
    const { directory, state } = this.deps;
    const { group: target, published } = action;
    const name = cleanGroupName(target.displayName ?? "");
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const marks = await state.getMarks(source, "group", target.oktaId, [ASPECT_GROUP_NAME]);
      const group = await this.linkedOktaGroup(source, target.oktaId, marks);
      try {
        if (!group) {
          // Nothing to rename, but a newer rename than any before is remembered: the group's first
          // membership add, should it be delivered late with the older name, creates it under this one.
          if (published < (marks.aspects[ASPECT_GROUP_NAME] ?? 0)) {
            if (await state.stillAt(source, "group", target.oktaId, marks)) return "unknown_group";
            continue;
          }
          const remember = advanceMarks(marks, null, undefined, [ASPECT_GROUP_NAME], published, {
            after: { [ASPECT_GROUP_NAME]: name },
          });
          await state.setMarksIf(source, "group", target.oktaId, marks, remember);
          return "unknown_group";
        }
        const clock = entityClock(group.resource.id, group.meta);
        const current = group.resource.displayName;
        if (isStale(published, clock, marks, ASPECT_GROUP_NAME, current)) {
          if (await state.stillAt(source, "group", target.oktaId, marks)) return "stale";
          continue;
        }
        const values = { before: { [ASPECT_GROUP_NAME]: current }, after: { [ASPECT_GROUP_NAME]: name } };
        if (name === current) {
          const same = { before: values.before, after: values.before };
          const next = advanceMarks(marks, clock, clock.version, [ASPECT_GROUP_NAME], published, same);
          await state.setMarksIf(source, "group", target.oktaId, marks, next);
          return "unchanged";
        }
        const holder = await directory.findGroupId(source, { displayName: name });
        if (holder !== null && holder !== group.resource.id) throw new HeldByAnotherError("group");
        const next = advanceMarks(marks, clock, undefined, [ASPECT_GROUP_NAME], published, values);
        await directory.updateGroup(
          source,
          group.resource.id,
          (now) => ({
            resource: toCanonicalGroup({ ...withoutId(now.resource), displayName: name }, now.resource)
              .resource,
          }),
          {
            ifMatch: group.meta.version,
            guard: state.guard(source, "group", target.oktaId, marks, next, true),
          },
        );
        return "applied";
      } catch (err) {
        if (!isRace(err) && !isGone(err, group)) throw err;
        lastError = err;
      }
    }
    throw exhausted(lastError, "group");
  }

  /**
   * `group.lifecycle.delete`: deletes the directory group linked to that Okta group (isLinkedGroup:
   * its externalId is the Okta group id, or membership events adopted it by name), which takes every
   * member out of it and deprovisions its platform group. Okta sends no membership removals for a
   * deleted group, so without this its members would stay in the platform group. The deletion is
   * kept in the group's marks (ASPECT_GROUP_DELETED), also when no such group is held, so that a
   * late membership add published before it does not create the group again. Stale only when the
   * group was created after it or a later lifecycle event applied (groupDeletionIsStale).
   */
  private async applyGroupDeletion(source: string, action: GroupAction): Promise<HookOutcome> {
    const { directory, state } = this.deps;
    const { group: target, published } = action;
    const aspects = [ASPECT_LIFECYCLE, ASPECT_GROUP_DELETED];
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const marks = await state.getMarks(source, "group", target.oktaId, aspects);
      const found = await this.findOktaGroup(source, target);
      const group = found && isLinkedGroup(found, target.oktaId, marks) ? found : null;
      const clock = group ? entityClock(group.resource.id, group.meta) : null;
      try {
        const held = group ? { id: group.resource.id, created: group.meta.created } : null;
        if (groupDeletionIsStale(published, held, marks)) {
          if (await state.stillAt(source, "group", target.oktaId, marks)) return "stale";
          continue;
        }
        const next = advanceMarks(marks, clock, undefined, aspects, published);
        if (!group) {
          await state.setMarksIf(source, "group", target.oktaId, marks, next);
          return "unknown_group";
        }
        await directory.deleteGroup(source, group.resource.id, {
          ifMatch: group.meta.version,
          guard: state.guard(source, "group", target.oktaId, marks, next, false),
        });
        return "applied";
      } catch (err) {
        if (!isRace(err) && !isGone(err, group)) throw err;
        lastError = err;
      }
    }
    throw exhausted(lastError, "group");
  }
}

/**
 * The name of the latest rename received while the bridge held no such group (applyGroupRename), if
 * it is newer than (or as new as) an event published at `published`: the group created from that
 * event gets it. Seen values are tagged with the marks' generation; an untagged one is of an
 * entity the marks no longer follow.
 */
function rememberedName(marks: HookMarks, published: number): string | undefined {
  if ((marks.aspects[ASPECT_GROUP_NAME] ?? 0) < published) return undefined;
  const raw = marks.seen?.[ASPECT_GROUP_NAME];
  const tag = `${marks.generation ?? 0}|`;
  return raw?.startsWith(tag) ? raw.slice(tag.length) : undefined;
}

/**
 * A group's name as a rename stores it: cleaned as every intake path cleans it (trimmed; control
 * characters and a blank name throw BadRequestError: the event is rejected).
 */
function cleanGroupName(name: string): string {
  const cleaned = cleanName(name, "displayName");
  if (cleaned.trim() === "") throw new BadRequestError("the event's group name is blank", "invalidValue");
  return cleaned;
}

/** Built by the same toCanonicalGroup as a SCIM POST (displayName trimmed, control characters refused). */
function newGroup(target: OktaGroupTarget): Omit<ScimGroup, "id"> {
  return toCanonicalGroup({
    schemas: [SCHEMA_GROUP],
    displayName: target.displayName ?? target.oktaId,
    externalId: target.oktaId,
  }).resource;
}
