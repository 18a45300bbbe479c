import { isAppError, ServiceUnavailableError } from "../errors.js";

/** Redis error replies that mean "the server cannot serve right now", not "the command is wrong". */
const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|READONLY|OOM|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|MOVED|ASK|NOREPLICAS)\b/;

/**
 * Maps a failure while talking to Redis: AppErrors pass through; connection failures, timeouts,
 * "offline queue disabled" rejections and transient error replies become ServiceUnavailableError
 * (503, Retry-After 1); any other error reply (a bug in a command or script) is rethrown as is.
 */
export function toStoreError(err: unknown): Error {
  if (isAppError(err)) return err;
  if (err instanceof Error) {
    if (err.name === "ReplyError" && !TRANSIENT_REPLIES.test(err.message)) return err;
    return new ServiceUnavailableError("The directory store is unavailable", err);
  }
  return new ServiceUnavailableError("The directory store is unavailable", err);
}

/** Runs a Redis operation and maps its failure (see toStoreError). */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw toStoreError(err);
  }
}
