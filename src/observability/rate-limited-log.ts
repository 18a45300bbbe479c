import type { Logger } from "./logger.js";

export interface RateLimitedLogOptions {
  /** At most one line per key this often, in ms. Default 30 000. */
  intervalMs?: number;
  /** The clock (tests). Default Date.now. */
  now?: () => number;
}

interface KeyState {
  /** When the last line of this key was written. */
  lastLineAt: number;
  /** When this key last had an event (written or not). */
  lastEventAt: number;
  /** Events since the last line that were not written. */
  suppressed: number;
}

/**
 * Warn lines for events that come in floods while something is down (a Redis outage makes each
 * BullMQ worker and queue emit `error` about ten times a second): the first event of a key is
 * written at once; later ones at most once per `intervalMs`, carrying `suppressed`, the number of
 * events left out since the line before. An event after a quiet `intervalMs` (no event at all: the
 * outage ended) starts afresh and is written at once, with the count of the previous outage's
 * last unwritten events, if any. Keys are separate (a queue name, a client name).
 */
export class RateLimitedLog {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly logger: Logger,
    options: RateLimitedLogOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** Writes `msg` at warn for `key` now, or counts it for the next line. True when written. */
  warn(key: string, fields: Record<string, unknown>, msg: string): boolean {
    const at = this.now();
    const state = this.keys.get(key);
    if (state && at - state.lastLineAt < this.intervalMs && at - state.lastEventAt < this.intervalMs) {
      state.suppressed += 1;
      state.lastEventAt = at;
      return false;
    }
    const suppressed = state?.suppressed ?? 0;
    this.keys.set(key, { lastLineAt: at, lastEventAt: at, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, msg);
    return true;
  }

  /** Forgets a key (its next event is written at once), e.g. when what was down is back. */
  reset(key?: string): void {
    if (key === undefined) this.keys.clear();
    else this.keys.delete(key);
  }
}
