import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { ResyncOperation, ResyncScope } from "../reconcile/reconcile-run.js";
import { type GuardResult, type RunState, UNFINISHED_RUN_STATES } from "../reconcile/reconcile-types.js";
import { type OperationHolder, OperationStore } from "./operation-store.js";
import type { TrackedResync } from "./repair-outcome.js";

/**
 * Keys owned by a resync: the users whose deprovisioning it planned (held for a confirmation);
 * the entities it enqueued that have not settled yet (`tracked`, with a TTL), the synced and failed
 * counts (`settle`), the first failures (`failures`). While an embed-tenant source's resync counts
 * what it would deprovision: the embed users in the groups it resyncs (`embed:members`), those it
 * leaves in one of them (`embed:kept`) and those it takes out of one (`embed:removed`).
 */
export const RESYNC_KEYS = {
  held: "held",
  tracked: "tracked",
  settleCounts: "settle",
  failures: "failures",
  classes: "classes",
  embedMembers: "embed:members",
  embedKept: "embed:kept",
  embedRemoved: "embed:removed",
} as const;

/** How long a resync's tracked entities are kept at most (a worker lost for good leaves nothing forever). */
const TRACKED_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Resync operations (fan-outs with progress), the last `keep` finished ones per source; unfinished
 * ones, held ones above all, are never trimmed.
 */
export class ResyncStore extends OperationStore<RunState, TrackedResync> {
  constructor(redis: Redis, prefix: string, keep = 50) {
    super(redis, prefix, "resync", keep, Object.values(RESYNC_KEYS), UNFINISHED_RUN_STATES);
  }

  async createOperation(input: {
    source: string;
    scope: ResyncScope;
    requestedBy?: string;
    /** A resync created held (what a confirmed one withheld): its guard, its held users, its origin. */
    held?: { guard: GuardResult; users: string[]; from: string };
  }): Promise<ResyncOperation> {
    const op: ResyncOperation = {
      id: randomUUID(),
      source: input.source,
      state: input.held ? "awaiting-confirmation" : "queued",
      scope: input.scope,
      requestedBy: input.requestedBy,
      total: "all" in input.scope ? 0 : input.scope.users.length + input.scope.groups.length,
      enqueued: 0,
      unknown: [],
      createdAt: new Date().toISOString(),
      ...(input.held ? { guard: input.held.guard, heldFrom: input.held.from } : {}),
    };
    // The held set before the document: a confirmation never finds the operation without it.
    if (input.held) await this.addHeld(op.id, input.held.users);
    await this.create(op);
    return op;
  }

  /**
   * Records users whose deprovisioning the resync planned (what a confirmation may apply). With
   * `holder` (the resync's job), only while its job is still the holder's (OperationNotHeld).
   */
  async addHeld(id: string, users: readonly string[], holder?: OperationHolder): Promise<void> {
    await this.addToOwnedSets(id, [{ suffix: RESYNC_KEYS.held, members: users }], holder);
  }

  /** For each user, whether its deprovisioning was planned (and so shown to the admin). */
  async heldAmong(id: string, users: readonly string[]): Promise<boolean[]> {
    if (users.length === 0) return [];
    const found = await this.redis.smismember(this.key(id, RESYNC_KEYS.held), ...users);
    return found.map((member) => member === 1);
  }

  /**
   * Records, for the guard, what resyncing one embed group does to its members (tenant/externalId
   * each). With `holder`, only while the resync's job is still the holder's (OperationNotHeld).
   */
  async addEmbedMembership(
    id: string,
    sets: { members: readonly string[]; kept: readonly string[]; removed: readonly string[] },
    holder?: OperationHolder,
  ): Promise<void> {
    await this.addToOwnedSets(
      id,
      [
        { suffix: RESYNC_KEYS.embedMembers, members: sets.members },
        { suffix: RESYNC_KEYS.embedKept, members: sets.kept },
        { suffix: RESYNC_KEYS.embedRemoved, members: sets.removed },
      ],
      holder,
    );
  }

  /**
   * The embed users the resync would take out of every group it resyncs (removed and not kept),
   * and the embed users in those groups now; the working sets are dropped. With `holder`, only
   * while the resync's job is still the holder's (OperationNotHeld).
   */
  countEmbedDeprovisions(
    id: string,
    holder?: OperationHolder,
  ): Promise<{ planned: number; onPlatform: number }> {
    return this.countEmbedRemovals(
      id,
      { removed: RESYNC_KEYS.embedRemoved, kept: RESYNC_KEYS.embedKept, members: RESYNC_KEYS.embedMembers },
      holder,
    );
  }

  /**
   * Records entities the resync enqueued: tracked until their syncs settle. With `holder`, only
   * while the resync's job is still the holder's (OperationNotHeld).
   */
  async track(id: string, refKeys: readonly string[], holder?: OperationHolder): Promise<void> {
    await this.addToOwnedSets(
      id,
      [{ suffix: RESYNC_KEYS.tracked, members: refKeys }],
      holder,
      TRACKED_TTL_SECONDS,
    );
  }

  /** Forgets the held set once the fan-out is done (the tracked entities stay). */
  async dropHeld(id: string): Promise<void> {
    await this.redis.del(this.key(id, RESYNC_KEYS.held));
  }

  /** Where the resync's tracking lives (see repair-settlement.ts). */
  settleKeys(id: string) {
    return {
      tracked: this.key(id, RESYNC_KEYS.tracked),
      classes: this.key(id, RESYNC_KEYS.classes),
      counts: this.key(id, RESYNC_KEYS.settleCounts),
      failures: this.key(id, RESYNC_KEYS.failures),
    };
  }
}
