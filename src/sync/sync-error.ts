import { isRedisWaitable } from "../directory/redis-failure.js";
import { AppError } from "../errors.js";
import { type PlatformError, isPlatformError } from "../platform/platform-error.js";

/**
 * The code of a sync that failed because Redis (the directory, the request budget, the sync state)
 * could not serve: slow past the store client's command timeout, unreachable, or loading. Nothing
 * is wrong with the entity: the job waits and runs again without spending an attempt, and never
 * ends as a dead letter for it (jobs/sync-processor.ts).
 */
export const REDIS_UNAVAILABLE = "redis_unavailable";

/**
 * A sync that cannot succeed until its input changes (permanent) or that should be retried
 * later (transient). Codes: "ownership_conflict", "attribute_type_clash", "no_embed_tenant",
 * "platform_inconsistent", ...
 */
export class SyncError extends AppError {
  readonly permanent: boolean;
  /** The sync waits for something else to finish: the entity stays dirty, no attempt is burned. */
  readonly blocked: boolean;
  readonly operation?: string;

  constructor(
    message: string,
    options: { code: string; permanent: boolean; blocked?: boolean; operation?: string; cause?: unknown },
  ) {
    super(message, { status: 500, code: options.code, cause: options.cause });
    this.permanent = options.permanent;
    this.blocked = options.blocked ?? false;
    this.operation = options.operation;
  }
}

export interface FailureFate {
  permanent: boolean;
  code: string;
  message: string;
  operation?: string;
  /** Waiting for another entity (see SyncError.blocked). */
  blocked?: boolean;
  /** The platform asked for a pause (429, or 503 with Retry-After, after the client's own retries). */
  rateLimitedForMs?: number;
  /**
   * With rateLimitedForMs: the call was not sent, held back by a pause other calls met
   * (PlatformError.heldBack); the platform said nothing about this entity.
   */
  heldBack?: boolean;
  /** Redis could not serve (REDIS_UNAVAILABLE): transient, and no fault of the entity's. */
  redisUnavailable?: boolean;
}

/**
 * Whether a failure says that Redis cannot serve right now: the directory store's 503
 * (ServiceUnavailableError: a connection failure, a command timeout, a transient error reply, or
 * too many concurrent writes to one entity), or a client library's connection failure or transient
 * reply met outside the store (the request budget, the sync state). An error reply that means a
 * bug (WRONGTYPE, a script error) is not one, nor a MOVED/ASK reply (a Redis Cluster talked to
 * without cluster mode: no wait repairs it); an error `guarded` wrapped as a 503 is judged by its
 * cause (src/directory/redis-failure.ts, isRedisWaitable: it waits unless the cause is a MOVED/ASK
 * or other non-transient reply, a programming error or an AppError).
 */
export function isRedisFailure(err: unknown): boolean {
  // The job layer's own errors carry another failure's message (a dead letter's reason may name
  // a platform connection refused: "ECONNREFUSED"), never a Redis one.
  if (isJobControlError(err)) return false;
  // Only what waiting repairs; the others are `internal` (attempts, then a dead letter).
  return isRedisWaitable(err);
}

/** BullMQ's errors that end or move a job (the processor's own, not failures). */
export function isJobControlError(err: unknown): boolean {
  return err instanceof Error && JOB_CONTROL_ERRORS.has(err.name);
}

const JOB_CONTROL_ERRORS: ReadonlySet<string> = new Set([
  "UnrecoverableError",
  "RateLimitError",
  "DelayedError",
  "WaitingError",
  "WaitingChildrenError",
]);

/** Decides a failure's fate once: permanent (dead letter) or transient (retry). */
export function classifyFailure(err: unknown): FailureFate {
  if (err instanceof SyncError) {
    return {
      permanent: err.permanent,
      blocked: err.blocked,
      code: err.code,
      message: err.message,
      operation: err.operation,
    };
  }
  if (isPlatformError(err)) {
    return {
      permanent: !err.transient,
      code: err.code,
      message: err.message,
      operation: err.operation,
      rateLimitedForMs: askedForPause(err),
      ...(err.heldBack ? { heldBack: true } : {}),
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  if (isRedisFailure(err)) {
    return { permanent: false, code: REDIS_UNAVAILABLE, message, redisUnavailable: true };
  }
  // Other unexpected errors (a bug, a Redis error reply): retry (bounded by the job's attempts).
  return { permanent: false, code: "internal", message };
}

/**
 * Codes of failures that heal by themselves (the platform down or slow, Redis, a platform not yet
 * consistent): a dead letter of one of these was written because the job's attempts ran out, not
 * because the platform refused the entity's desired state. Reconciliation syncs them again, once
 * (src/sync/dead-letter-retry.ts). Refusals (`platform_conflict`, `attribute_type_clash`, …) and
 * contract breaks (`platform_invalid_response`) are not among them: they wait for a fix and an
 * admin's retry. Nor are `internal` (a bug, or a Redis error reply such as WRONGTYPE or a script
 * error: nothing a wait repairs) and `not_converging` (a sync that found the platform differing
 * from its plan round after round, through all its attempts: a value the platform keeps
 * rewriting, not an outage).
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  "platform_server",
  "platform_timeout",
  "platform_network",
  "platform_rate_limited",
  "platform_bulk_internal",
  "platform_bulk_unconfirmed",
  "platform_inconsistent",
  REDIS_UNAVAILABLE,
]);

/** Whether a failure (dead letter) code is one of a failure that heals by itself. */
export function isTransientFailureCode(code: string): boolean {
  return TRANSIENT_CODES.has(code);
}

/**
 * The pause the platform asked for, when the failure is one: a 429 (1 s without a Retry-After), or
 * a 503 with a Retry-After (the platform says when it serves again: maintenance). The queue waits
 * it out without spending an attempt (docs/operations.md, "Platform rate limits").
 */
export function askedForPause(err: PlatformError): number | undefined {
  if (err.failure === "rate_limited") return err.retryAfterMs ?? 1_000;
  if (err.httpStatus === 503 && err.retryAfterMs !== undefined) return err.retryAfterMs;
  return undefined;
}

/**
 * Ends a group's sync in which the platform refused for good (400/422) to add some members (`added`)
 * or to remove some (`removed`: they keep the group's access although they left it at the source),
 * once the group's other changes were sent: a permanent failure with the refusal's code, whose
 * reason says how many members wait and that the rest was applied (invariant 7: a dead letter, not
 * a warning), naming them by the bridge's user ids (`memberIds`). The record holds what landed, so a
 * retry sends only these.
 */
export function refusedMembersError(
  counts: { added: number; removed: number },
  refusal: unknown,
  memberIds: readonly string[] = [],
  unknownPlatformIds: readonly string[] = [],
  /** Refused members past `memberIds` that were not looked up (no more are named): counted only. */
  moreMembers = 0,
): SyncError {
  const code = isPlatformError(refusal) ? refusal.code : "platform_bad_request";
  const reason = refusal instanceof Error ? refusal.message : String(refusal);
  const refused = [
    ...(counts.added > 0 ? [`add ${counts.added} member(s) to the group`] : []),
    ...(counts.removed > 0
      ? [`remove ${counts.removed} member(s) from the group (they are still in it)`]
      : []),
  ].join(" and ");
  const named =
    namedIds("refused members (the bridge's user ids)", memberIds, moreMembers) +
    namedIds("refused members the bridge no longer knows (platform user ids)", unknownPlatformIds);
  return new SyncError(
    `the platform refused to ${refused} (${reason}); the group's other changes were applied${named}`,
    {
      code,
      permanent: true,
      operation: isPlatformError(refusal) ? refusal.operation : undefined,
      cause: refusal,
    },
  );
}

/** At most this many refused members are named in a dead letter's reason. */
export const NAMED_MEMBERS = 20;

/**
 * Refused members named in a letter's reason by `label` and ids (at most NAMED_MEMBERS): the
 * bridge's user ids (never a userName: the reason is shown by the admin API, and ids find each user
 * with `scim-bridge status <source>/user/<id>`), or the platform user ids of members whose users the
 * bridge no longer knows (a user deleted at the source is forgotten once deprovisioned, its platform
 * id released), so the letter still says who keeps the group's access.
 */
function namedIds(label: string, ids: readonly string[], notLookedUp = 0): string {
  if (ids.length === 0) return "";
  const rest = Math.max(ids.length - NAMED_MEMBERS, 0) + notLookedUp;
  const more = rest > 0 ? ` and ${rest} more` : "";
  return `; ${label}: ${ids.slice(0, NAMED_MEMBERS).join(", ")}${more}`;
}

export function isPlatformFailure(err: unknown, failure: string): boolean {
  return isPlatformError(err) && err.failure === failure;
}
