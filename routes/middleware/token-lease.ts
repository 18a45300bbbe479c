/**
 * Tokens of a shared (Redis) bucket that this process took ahead of use, so that a busy process
 * does not pay one Redis round trip per request. A lease lasts `leaseMs`; its unused tokens are
 * dropped when it ends (never returned), so a process never spends more than the shared bucket
 * gave it. Each refill asks for as many tokens as requests arrived in the last window (at least 1,
 * at most `maxLease`): a quiet process asks for one at a time, exactly as without leases, and a
 * busy one takes a window's worth. Pure bookkeeping; the caller does the Redis call.
 */
export class TokenLease {
  private tokens = 0;
  private expiresAt = 0;
  private windowStart = 0;
  private seenThisWindow = 0;
  private seenLastWindow = 0;
  private inFlight = false;

  constructor(
    private readonly leaseMs: number,
    private readonly maxLease: number,
  ) {}

  /** Requests that missed while a refill was in flight; they try the refilled lease first. */
  readonly waiters: Array<(refillFailed: boolean) => void> = [];

  /** Counts a request; true when a leased token pays for it (no Redis call needed). */
  take(now: number): boolean {
    if (now - this.windowStart >= this.leaseMs) {
      this.seenLastWindow = now - this.windowStart >= 2 * this.leaseMs ? 0 : this.seenThisWindow;
      this.seenThisWindow = 0;
      this.windowStart = now;
    }
    this.seenThisWindow += 1;
    return this.takeLeased(now);
  }

  /** A leased token for a request already counted, if one is left. */
  takeLeased(now: number): boolean {
    if (this.tokens >= 1 && now < this.expiresAt) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** True while a refill call is in flight. */
  get refilling(): boolean {
    return this.inFlight;
  }

  /**
   * Starts a call to the bucket: how many tokens to ask for, and whether this call refills the
   * lease. One refill at a time (requests that miss meanwhile wait in `waiters`, and those the
   * refill cannot serve ask for one token each), so concurrent misses never take (and then drop)
   * a lease each.
   */
  begin(): { want: number; refill: boolean } {
    const size = Math.max(1, Math.min(this.maxLease, Math.max(this.seenLastWindow, this.seenThisWindow)));
    if (this.inFlight || size === 1) return { want: 1, refill: false };
    this.inFlight = true;
    return { want: size, refill: true };
  }

  /** The call ended: `granted` tokens (0 when refused or failed); one pays for the current request. */
  end(call: { refill: boolean }, granted: number, now: number): void {
    if (call.refill) this.inFlight = false;
    const kept = Math.max(0, Math.floor(granted) - 1);
    if (kept === 0) return;
    const current = now < this.expiresAt ? this.tokens : 0;
    this.tokens = Math.min(this.maxLease, current + kept);
    this.expiresAt = now + this.leaseMs;
  }
}
