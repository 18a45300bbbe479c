/**
 * What the emulator saw: a bounded request log (ring buffer), exact counters per operation,
 * the number of write calls, and the contract violations.
 */
export interface RequestLogEntry {
  seq: number;
  time: string;
  method: string;
  path: string;
  /** The PlatformClient method name, or null for a path outside the contract. */
  operation: string | null;
  /** 0 when no answer was sent (dropped connection or ghost write). */
  status: number;
  durationMs: number;
  /** The injected fault, if any: "error", "drop", "slow", "ghost", "cutOff", "rateLimit". */
  fault?: string;
  /** The answer's Retry-After header, when it sent one (seconds or an HTTP-date). */
  retryAfter?: string;
}

export interface ContractViolation {
  time: string;
  method: string;
  path: string;
  operation: string | null;
  reason: string;
}

export interface OperationCounter {
  calls: number;
  byStatus: Record<string, number>;
}

export interface RequestStats {
  total: number;
  writes: number;
  byOperation: Record<string, OperationCounter>;
}

export class RequestRecorder {
  private ring: RequestLogEntry[] = [];
  private next = 0;
  private seq = 0;
  private stats: RequestStats = { total: 0, writes: 0, byOperation: {} };
  private violationList: ContractViolation[] = [];

  constructor(
    private readonly capacity = 10_000,
    private readonly violationCapacity = 10_000,
  ) {}

  record(entry: Omit<RequestLogEntry, "seq">): void {
    const full: RequestLogEntry = { ...entry, seq: ++this.seq };
    if (this.ring.length < this.capacity) this.ring.push(full);
    else this.ring[this.next] = full;
    this.next = (this.next + 1) % this.capacity;
    this.stats.total++;
    if (entry.method !== "GET") this.stats.writes++;
    const key = entry.operation ?? "unknown";
    const counter = this.stats.byOperation[key] ?? { calls: 0, byStatus: {} };
    this.stats.byOperation[key] = counter;
    counter.calls++;
    const status = String(entry.status);
    counter.byStatus[status] = (counter.byStatus[status] ?? 0) + 1;
  }

  violation(v: Omit<ContractViolation, "time">): void {
    if (this.violationList.length >= this.violationCapacity) this.violationList.shift();
    this.violationList.push({ time: new Date().toISOString(), ...v });
  }

  /** The retained log entries, oldest first. */
  requests(): RequestLogEntry[] {
    if (this.ring.length < this.capacity) return [...this.ring];
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  counters(): RequestStats {
    return structuredClone(this.stats);
  }

  /** Calls of one operation (0 when never called). */
  count(operation: string): number {
    return this.stats.byOperation[operation]?.calls ?? 0;
  }

  violations(): ContractViolation[] {
    return [...this.violationList];
  }

  clear(): void {
    this.ring = [];
    this.next = 0;
    this.stats = { total: 0, writes: 0, byOperation: {} };
    this.violationList = [];
  }
}
