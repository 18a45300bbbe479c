import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Platform writes that timed out (no answer in time, or a gateway's 504): the platform may still
 * apply such a write later, after the bridge has moved on (a retry answered, an opposite change
 * sent, a lookup that found nothing). A caller that must check for such late writes watches the
 * calls it makes; the requester notes each unanswered write in the watch of the calls in flight.
 */
export interface WriteWatch {
  /** Epoch ms when the last unanswered write of the watched calls was sent. */
  unansweredAt?: number;
  /**
   * Called before each write of the watched calls is sent (each attempt); what it throws stops
   * the write (a sync whose job was taken over by another run must not write any more).
   */
  beforeWrite?: () => Promise<void>;
  /**
   * Called right before each write of the watched calls is sent (after `beforeWrite`), so that a
   * mark that it may land late is stored before it can: a process that dies with the write on the
   * wire leaves the mark. The function it answers settles that mark once the write is over, with
   * whether it may still land late (it timed out) and when it was sent.
   */
  markWrite?: () => Promise<SettleWrite>;
  /**
   * The watched calls run in a queue job that is put back when the platform asks for a long pause
   * (a sync, the lifecycle flush): a call that finds the shared pause (set by another call's 429 or
   * 503 with Retry-After) longer than the client sits out in a call fails at once as rate limited,
   * with the pause left as its Retry-After, instead of holding the job active until it ends.
   */
  putBackOnLongPause?: boolean;
  /**
   * Epoch ms until which the platform asked the watched calls themselves to pause: one of them was
   * answered 429 (or 503) with a Retry-After that paused every call. A later call of the watch that
   * finds that pause is not held back by another's (PlatformError.heldBack stays false), so the job
   * processor counts the put-back against the entity even when the job swallowed the first answer.
   */
  pausedOwnUntil?: number;
}

/** Settles the mark of one write: answered (or failed for good), or still able to land late. */
export type SettleWrite = (write: { mayLandLate: boolean; sentAt: number }) => Promise<void>;

const watches = new AsyncLocalStorage<WriteWatch>();

/** Runs `fn`; unanswered platform writes made inside it (at any depth) are noted on `watch`. */
export function watchWrites<T>(watch: WriteWatch, fn: () => Promise<T>): Promise<T> {
  return watches.run(watch, fn);
}

/**
 * What a `beforeWrite` throws to stop every further write of the watched calls: whoever catches
 * platform failures lets it through (nothing more of that work is to be done).
 */
export class WritesStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WritesStopped";
  }
}

/** Runs the current watch's `beforeWrite`, if any: before a write is sent. */
export async function beforeWrite(): Promise<void> {
  await watches.getStore()?.beforeWrite?.();
}

/** Runs the current watch's `markWrite`, if any: right before a write is sent. */
export async function markWrite(): Promise<SettleWrite | undefined> {
  return watches.getStore()?.markWrite?.();
}

/** Whether the calls in flight are a queue job's that is put back on a long pause (WriteWatch). */
export function putsBackOnLongPause(): boolean {
  return watches.getStore()?.putBackOnLongPause === true;
}

/** Notes on the current watch, if any, that one of its calls was asked to pause until `until`. */
export function noteOwnPause(until: number): void {
  const watch = watches.getStore();
  if (watch) watch.pausedOwnUntil = Math.max(watch.pausedOwnUntil ?? 0, until);
}

/** Whether the current watch's own calls were asked for a pause that still holds at `now`. */
export function inOwnPause(now: number): boolean {
  const until = watches.getStore()?.pausedOwnUntil;
  return until !== undefined && now < until;
}

/** Notes an unanswered write sent at `sentAt` on the current watch, if any. */
export function noteUnansweredWrite(sentAt: number): void {
  const watch = watches.getStore();
  if (watch) watch.unansweredAt = Math.max(watch.unansweredAt ?? 0, sentAt);
}

/**
 * Whether a failed write may still be applied later: it timed out (the platform, or a gateway in
 * front of it answering 504, was still on it when the client stopped waiting). A connection that
 * broke or was refused is not counted: a platform that closes a connection is done with the
 * request, and a write it applied before closing is found by the next sync's in-doubt read.
 */
export function mayLandLate(
  failed: "timeout" | "network" | "too_large" | undefined,
  status?: number,
): boolean {
  return failed === "timeout" || status === 504;
}
