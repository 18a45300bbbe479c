import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { DirectoryStore } from "../directory/directory-types.js";
import { ConflictError, NotFoundError, ServiceUnavailableError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { ScimUser } from "../scim/scim-types.js";
import { DeliveryView } from "./delivery-view.js";
import type { HookMetrics } from "./hook-metrics.js";
import type { HookStateStore } from "./hook-state-store.js";
import { externalIdText, maySameEntity } from "./external-id.js";
import { sameJson } from "./same-json.js";
import {
  type Canonicalisers,
  type ItemError,
  InvalidDeliveryError,
  type MemberRef,
  type ParsedItems,
  parseSignedItems,
  type SignedEvent,
} from "./signed-event.js";

export interface SignedEventsServiceDeps {
  directory: DirectoryStore;
  state: HookStateStore;
  metrics: HookMetrics;
  logger: Logger;
  canon: Canonicalisers;
  /** Tests: the webhook-id claim's lease and a retry's wait for it (CLAIM_LEASE_MS, CLAIM_WAIT_MS). */
  claimLeaseMs?: number;
  claimWaitMs?: number;
}

/** How often one event is decided again after losing a race with another writer. */
const APPLY_ATTEMPTS = 3;
/** How long an attempt holds a delivery's webhook-id (the lease outlives any delivery's apply). */
const CLAIM_LEASE_MS = 60_000;
/** How long a retry waits for an earlier attempt at the same delivery before answering 503. */
const CLAIM_WAIT_MS = 20_000;
const CLAIM_POLL_MS = 25;

export interface SignedDeliveryResult {
  /** "duplicate": this webhook-id was applied before; nothing was applied again. */
  status: "applied" | "duplicate";
  events: number;
  changed: number;
}

function typeOf(event: SignedEvent): string {
  return event.type;
}

/**
 * Applies signed change events (Standard Webhooks) to a source's directory before answering.
 * Everything is validated first, including that group members name known users (or users
 * upserted earlier in the delivery) and that an upsert does not take another entity's unique
 * name, so a rejected delivery stores nothing; then the events are applied in order.
 */
export class SignedEventsService {
  constructor(private readonly deps: SignedEventsServiceDeps) {}

  /**
   * One attempt at a delivery. It first claims the `webhook-id` (HookStateStore.claimWebhookId): a
   * retry that arrives while another attempt applies the same delivery waits for it, then answers
   * `duplicate` without applying anything again. Applying it again after the first attempt was
   * answered could undo a newer delivery the sender sent in between (a deletion undone by a late
   * copy of the upsert before it). Should the first attempt fail, or its process die (the claim is
   * a lease), the waiting one applies the delivery itself.
   */
  async handleDelivery(source: string, webhookId: string, body: unknown): Promise<SignedDeliveryResult> {
    const { state, metrics } = this.deps;
    const token = randomUUID();
    const deadline = Date.now() + (this.deps.claimWaitMs ?? CLAIM_WAIT_MS);
    for (;;) {
      const claim = await state.claimWebhookId(
        source,
        webhookId,
        token,
        this.deps.claimLeaseMs ?? CLAIM_LEASE_MS,
      );
      if (claim === "done") {
        metrics.count(source, "events", "(delivery)", "duplicate");
        return { status: "duplicate", events: 0, changed: 0 };
      }
      if (claim === "claimed") break;
      if (Date.now() >= deadline) {
        throw new ServiceUnavailableError(
          "This delivery is still being applied by an earlier attempt; retry",
        );
      }
      await sleep(CLAIM_POLL_MS);
    }
    let applied = false;
    try {
      const result = await this.applyDelivery(source, body);
      applied = true;
      return result;
    } finally {
      await state.settleWebhookId(source, webhookId, token, applied);
    }
  }

  private async applyDelivery(source: string, body: unknown): Promise<SignedDeliveryResult> {
    const { metrics, logger } = this.deps;
    const { items, parsed, errors } = parseSignedItems(body, this.deps.canon);
    const malformed = new Set(errors.map((e) => e.index));
    errors.push(...(await this.validateAgainstDirectory(source, parsed)));
    if (errors.length > 0) {
      this.countRefused(source, items, errors, malformed);
      throw new InvalidDeliveryError(errors.sort((a, b) => a.index - b.index));
    }
    const events = parsed.map((p) => p.event);
    let changed = 0;
    for (const event of events) {
      const didChange = await this.apply(source, event);
      if (didChange) changed++;
      metrics.count(source, "events", typeOf(event), didChange ? "applied" : "unchanged");
    }
    logger.info({ source, hook: "events", events: events.length, changed }, "signed event delivery applied");
    return { status: "applied", events: events.length, changed };
  }

  /**
   * A refused delivery is seen by the operator too, not only by its sender: each bad event is
   * counted (`malformed`: not a valid event; `rejected`: refused by the directory, e.g. a name
   * another entity holds) and one warn line names the bad events by index and outcome. The
   * messages stay out of the line: they may quote what the sender wrote; the sender has them.
   */
  private countRefused(
    source: string,
    items: readonly unknown[],
    errors: ItemError[],
    malformed: Set<number>,
  ): void {
    const outcomes = new Map<number, "malformed" | "rejected">();
    for (const { index } of errors) {
      if (outcomes.has(index)) continue;
      const outcome = malformed.has(index) ? "malformed" : "rejected";
      outcomes.set(index, outcome);
      const type = (items[index] as { type?: unknown } | undefined)?.type;
      this.deps.metrics.count(source, "events", typeof type === "string" ? type : "", outcome);
    }
    this.deps.logger.warn(
      {
        source,
        hook: "events",
        events: items.length,
        refused: [...outcomes].sort(([a], [b]) => a - b).map(([index, outcome]) => ({ index, outcome })),
      },
      "signed event delivery refused (400); nothing of it was applied",
    );
  }

  /**
   * What only the directory can tell: unknown members, unique names held by another entity. Each
   * event is judged on the directory as the earlier events of the delivery leave it (DeliveryView),
   * so that a delivery that passes cannot fail half-way through being applied.
   */
  private async validateAgainstDirectory(source: string, items: ParsedItems["parsed"]): Promise<ItemError[]> {
    const view = new DeliveryView(this.deps.directory, source);
    const errors: ItemError[] = [];
    for (const { index, event } of items) {
      switch (event.type) {
        case "user.upserted": {
          const { externalId, userName } = userKeys(event.user);
          if ((await view.users.upsert(externalId, userName)) === "taken") {
            errors.push({ index, message: "userName is already taken by another user" });
          }
          break;
        }
        case "user.deleted":
          await view.users.delete(event.key.externalId, event.key.userName);
          break;
        case "group.upserted": {
          const { externalId, displayName } = groupKeys(event.group);
          if ((await view.groups.upsert(externalId, displayName)) === "taken") {
            errors.push({ index, message: "displayName is already taken by another group" });
          }
          for (const [i, ref] of event.members.entries()) {
            if (!(await memberExists(view, ref))) {
              errors.push({ index, message: `members[${i}] names no known user` });
            }
          }
          break;
        }
        case "group.deleted":
          await view.groups.delete(event.key.externalId, event.key.displayName);
          break;
        default:
          break;
      }
    }
    return errors;
  }

  private async memberId(source: string, ref: MemberRef): Promise<string | null> {
    const { directory } = this.deps;
    if ("value" in ref) return (await directory.getUser(source, ref.value)) ? ref.value : null;
    return directory.findUserId(source, ref);
  }

  /**
   * Applies one event; true when the directory changed. Another writer (a retry of this delivery
   * still running, another delivery) may create or delete the entity between the lookup and the
   * write: the event is then decided again on what it left, as an upsert or delete would have been
   * had it come second. A conflict that outlasts the attempts is a real one and is rethrown.
   */
  private async apply(source: string, event: SignedEvent): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.applyOnce(source, event);
      } catch (err) {
        const raced = err instanceof ConflictError || err instanceof NotFoundError;
        if (!raced || attempt >= APPLY_ATTEMPTS) throw err;
      }
    }
  }

  private async applyOnce(source: string, event: SignedEvent): Promise<boolean> {
    const { directory } = this.deps;
    switch (event.type) {
      case "ping":
        return false;
      case "user.upserted": {
        const id = await directory.findUserId(source, userKeys(event.user));
        if (!id) {
          await directory.createUser(source, event.user);
          return true;
        }
        const current = await directory.getUser(source, id);
        if (current) heldByAnother("user", event.user, current.resource);
        if (current && sameJson(withoutId(current.resource), upsertedUser(event, current.resource))) {
          return false;
        }
        // Decided on the record the write replaces (the store re-runs it if the user moved on).
        await directory.updateUser(source, id, (record) => upsertedUser(event, record.resource));
        return true;
      }
      case "user.deleted": {
        const id = await directory.findUserId(source, event.key);
        if (!id) return false;
        // Found by userName, it may be someone else (maySameEntity); named by userName alone, not.
        if (event.key.externalId !== undefined) {
          const current = await directory.getUser(source, id);
          if (current && !maySameEntity(event.key.externalId, current.resource.externalId)) return false;
        }
        await directory.deleteUser(source, id);
        return true;
      }
      case "group.upserted": {
        const members: string[] = [];
        for (const ref of event.members) {
          const memberId = await this.memberId(source, ref);
          if (memberId && !members.includes(memberId)) members.push(memberId);
        }
        const id = await directory.findGroupId(source, groupKeys(event.group));
        if (!id) {
          await directory.createGroup(source, event.group, members);
          return true;
        }
        if (event.membersOmitted) {
          // The members stay as they are, whoever changes them meanwhile: only the group is written.
          const current = await directory.getGroup(source, id);
          if (current) heldByAnother("group", event.group, current.resource);
          const written = await directory.updateGroup(source, id, () => ({ resource: event.group }));
          return current === null || written.meta.version !== current.meta.version;
        }
        const current = await directory.getGroup(source, id, { withMembers: true });
        if (current) heldByAnother("group", event.group, current.resource);
        const currentMembers = (current?.members ?? []).map((m) => m.value);
        if (
          current &&
          sameJson(withoutId(current.resource), event.group) &&
          sameJson([...currentMembers].sort(), [...members].sort())
        ) {
          return false;
        }
        await directory.replaceGroup(source, id, event.group, members);
        return true;
      }
      case "group.deleted": {
        const id = await directory.findGroupId(source, event.key);
        if (!id) return false;
        if (event.key.externalId !== undefined) {
          const current = await directory.getGroup(source, id);
          if (current && !maySameEntity(event.key.externalId, current.resource.externalId)) return false;
        }
        await directory.deleteGroup(source, id);
        return true;
      }
    }
  }
}

/** The user a `user.upserted` stores over `current`: without `active`, it keeps current's state. */
function upsertedUser(
  event: Extract<SignedEvent, { type: "user.upserted" }>,
  current: ScimUser,
): Omit<ScimUser, "id"> {
  return event.activeOmitted ? { ...event.user, active: current.active !== false } : event.user;
}

/** True when a member names a user that exists at this point of the delivery. */
async function memberExists(view: DeliveryView, ref: MemberRef): Promise<boolean> {
  if ("value" in ref) return view.users.exists(ref.value);
  if ("externalId" in ref) return (await view.users.byExternalId(ref.externalId)) !== null;
  return (await view.users.byName(ref.userName)) !== null;
}

/**
 * Refuses an upsert matched by name to an entity that has another externalId: another person or
 * group holds the name (validation refuses it too; this covers a writer that got there since).
 */
function heldByAnother(
  kind: "user" | "group",
  upsert: Record<string, unknown>,
  current: Record<string, unknown>,
): void {
  if (!maySameEntity(upsert.externalId, current.externalId)) {
    const name = kind === "user" ? "userName" : "displayName";
    throw new ConflictError(`${name} is already taken by another ${kind}`);
  }
}

/** The unique keys of a canonical user (userName is required by toCanonicalUser). */
function userKeys(user: Record<string, unknown>): { externalId?: string; userName: string } {
  const externalId = externalIdText(user.externalId);
  const userName = String(user.userName);
  return externalId ? { externalId, userName } : { userName };
}

function groupKeys(group: Record<string, unknown>): { externalId?: string; displayName: string } {
  const externalId = externalIdText(group.externalId);
  const displayName = String(group.displayName);
  return externalId ? { externalId, displayName } : { displayName };
}

function withoutId<T extends { id?: unknown }>(resource: T): Omit<T, "id"> {
  const { id: _id, ...rest } = resource;
  return rest;
}
