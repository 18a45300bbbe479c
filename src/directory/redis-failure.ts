import { isAppError, ServiceUnavailableError } from "../errors.js";

/** Redis error replies that mean "the server cannot serve right now", not "the command is wrong". */
const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|READONLY|OOM|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|MOVED|ASK|NOREPLICAS)\b/;

/**
 * Maps a failure while talking to Redis: AppErrors pass through; connection failures, timeouts,
 * "offline queue disabled" rejections and transient error replies become ServiceUnavailableError
 * (503, Retry-After 1); any other error reply (a bug in a command or script) and a programming
 * error (TypeError and the like, from our code or a client library's) are rethrown as they are
 * (500): taken for an outage, a bug would be retried by every client and hidden as a Redis problem.
 */
export function toStoreError(err: unknown): Error {
  if (isAppError(err)) return err;
  if (err instanceof Error) {
    if (err.name === "ReplyError" && !TRANSIENT_REPLIES.test(err.message)) return err;
    if (isProgrammingError(err)) return err;
    return new ServiceUnavailableError("The directory store (Redis) is unavailable", err);
  }
  return new ServiceUnavailableError("The directory store (Redis) is unavailable", err);
}

/**
 * ioredis's and Node's own words for "no connection to Redis now": refused, reset or timed-out
 * connections, a host that does not resolve (ENOTFOUND, EAI_AGAIN: a failover's DNS switch) or
 * cannot be reached, a connection closed under a command (a pipeline or MULTI partly sent when it
 * closed: AbortError "Command aborted due to connection close"), a socket timeout, a client without
 * an offline queue, a command that ran out of reconnection attempts. Matched against the error's
 * name, code and message.
 */
const CONNECTION_FAILURE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|Connection is closed|connection close|Socket timeout|Stream isn't writeable|enableOfflineQueue|Command timed out|max retries per request|MaxRetriesPerRequest/i;

/**
 * Whether `err`, a client library's error (an AppError carries its own status), says that Redis
 * cannot serve right now: a connection failure (CONNECTION_FAILURE) or a transient error reply
 * (TRANSIENT_REPLIES). Code that talks to Redis outside `guarded` (the SCIM routes' error handler,
 * the admin API's reads of queues and dead letters) answers 503 for these, not 500.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (isAppError(err) || !(err instanceof Error) || isProgrammingError(err)) return false;
  if (err.name === "ReplyError") return TRANSIENT_REPLIES.test(err.message);
  const code = (err as { code?: unknown }).code;
  return CONNECTION_FAILURE.test(`${err.name} ${typeof code === "string" ? code : ""} ${err.message}`);
}

/**
 * Error replies that name another node of a cluster (MOVED, ASK): the bridge talks to a Redis
 * Cluster without cluster mode, a configuration that no wait repairs. Still a 503 for a client of
 * the API (toStoreError), but no reason for a sync to wait for Redis (src/sync/sync-error.ts).
 */
const MISROUTED_REPLIES = /^(MOVED|ASK)\b/;

/**
 * Whether a failure while talking to Redis is one that waiting repairs: a connection failure or
 * command timeout (CONNECTION_FAILURE), or a transient error reply other than MOVED/ASK. A
 * ServiceUnavailableError from `guarded` is judged by its cause (isWrappedWaitable): what `guarded`
 * wraps is a failure to talk to Redis, a wait unless it is a MOVED/ASK reply (or an error that
 * should not have been wrapped: a programming error, an error reply that means a bug); one with no
 * cause (the store's own 503, too many concurrent writes to one entity) is a wait.
 */
export function isRedisWaitable(err: unknown): boolean {
  if (err instanceof ServiceUnavailableError) {
    return err.cause === undefined || isWrappedWaitable(err.cause);
  }
  if (!isRedisUnavailable(err)) return false;
  return !isMisrouted(err as Error);
}

/**
 * Whether an error `guarded` wrapped as a 503 is one that waiting repairs. Inverted rule: the
 * client's words for a failure vary (ioredis's AbortError for a pipeline cut by a failover, a
 * resolver's or socket's code, …) and no list keeps up with them, so every wrapped failure waits
 * (for REDIS_WAIT_LIMIT_MS at most, then attempts and a dead letter) except those no wait repairs:
 * MOVED/ASK replies, other error replies that are not transient (a bug in a command), programming
 * errors (TypeError and the like), and an AppError.
 */
function isWrappedWaitable(cause: unknown): boolean {
  if (cause instanceof ServiceUnavailableError) return isRedisWaitable(cause);
  if (isAppError(cause)) return false;
  if (!(cause instanceof Error)) return true;
  if (isProgrammingError(cause)) return false;
  if (cause.name === "ReplyError") return TRANSIENT_REPLIES.test(cause.message) && !isMisrouted(cause);
  return true;
}

function isMisrouted(err: Error): boolean {
  return err.name === "ReplyError" && MISROUTED_REPLIES.test(err.message);
}

function isProgrammingError(err: Error): boolean {
  return (
    err instanceof TypeError ||
    err instanceof RangeError ||
    err instanceof ReferenceError ||
    err instanceof SyntaxError
  );
}

/** Runs a Redis operation and maps its failure (see toStoreError). */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw toStoreError(err);
  }
}
