import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Platform writes sent without an answer (timed out, connection lost): the platform may still
 * apply such a write later, after the bridge has moved on (a retry answered, an opposite change
 * sent, a lookup that found nothing). A caller that must check for such late writes watches the
 * calls it makes; the requester notes each unanswered write in the watch of the calls in flight.
 */
export interface WriteWatch {
  /** Epoch ms when the last unanswered write of the watched calls was sent. */
  unansweredAt?: number;
}

const watches = new AsyncLocalStorage<WriteWatch>();

/** Runs `fn`; unanswered platform writes made inside it (at any depth) are noted on `watch`. */
export function watchWrites<T>(watch: WriteWatch, fn: () => Promise<T>): Promise<T> {
  return watches.run(watch, fn);
}

/** Notes an unanswered write sent at `sentAt` on the current watch, if any. */
export function noteUnansweredWrite(sentAt: number): void {
  const watch = watches.getStore();
  if (watch) watch.unansweredAt = Math.max(watch.unansweredAt ?? 0, sentAt);
}

/** Connection failures that happen before a request can reach the platform. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH"]);

/**
 * Whether a failed exchange may have reached the platform (and so may still apply). `error` is the
 * transport's error, whose cause is node's (with its `code`).
 */
export function mayHaveReachedPlatform(kind: "timeout" | "network" | "too_large", error: unknown): boolean {
  if (kind !== "network") return kind === "timeout";
  const inner = (error as { cause?: { code?: unknown } } | null)?.cause;
  return !(typeof inner?.code === "string" && NOT_SENT.has(inner.code));
}
