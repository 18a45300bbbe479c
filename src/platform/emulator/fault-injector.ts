/**
 * Fault injection: rules that match requests (all, one operation, or a method + path glob) and
 * fire with a probability and/or for the next N matches. Draws use the seeded generator, so a
 * seed repeats the same faults for the same request sequence.
 */
import type { SeededRandom } from "./seeded-random.js";

export type FaultKind =
  | { type: "error"; status: 429 | 500 | 503; retryAfterSeconds?: number }
  | { type: "drop" }
  | { type: "slow"; delayMs: number }
  | { type: "ghost" }
  | { type: "rateLimit"; perSecond: number; retryAfterSeconds?: number };

export interface FaultMatch {
  /** A PlatformClient method name, e.g. "createUser". */
  operation?: string;
  /** HTTP method, e.g. "POST". */
  method?: string;
  /** Path glob: `*` matches within one segment, `**` across segments. */
  path?: string;
}

export type FaultRule = FaultKind & {
  id?: string;
  match?: FaultMatch;
  /** Chance that a matching request is hit, 0..1 (default 1). */
  probability?: number;
  /** Hit only the next N matching requests (default: no limit). */
  count?: number;
};

export interface FaultDecision {
  delayMs: number;
  /** The fault that ends the request, if any (error, drop, ghost, or a tripped rate limit). */
  terminal?: FaultKind;
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
  pathPattern?: RegExp;
  window: { second: number; used: number };
}

function globToRegExp(glob: string): RegExp {
  const source = glob
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*"),
    )
    .join(".*");
  return new RegExp(`^${source}$`);
}

export class FaultInjector {
  private rules: ActiveRule[] = [];

  constructor(
    private readonly random: () => SeededRandom,
    initial: FaultRule[] = [],
  ) {
    for (const rule of initial) this.add(rule);
  }

  add(rule: FaultRule): void {
    if (rule.type === "rateLimit" && !(rule.perSecond > 0)) throw new Error("rateLimit needs perSecond > 0");
    this.rules.push({
      rule,
      remaining: rule.count ?? Number.POSITIVE_INFINITY,
      pathPattern: rule.match?.path ? globToRegExp(rule.match.path) : undefined,
      window: { second: 0, used: 0 },
    });
  }

  set(rules: FaultRule[]): void {
    this.clear();
    for (const rule of rules) this.add(rule);
  }

  clear(): void {
    this.rules = [];
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({
      ...r.rule,
      ...(Number.isFinite(r.remaining) ? { count: r.remaining } : {}),
    }));
  }

  /** Decides the faults for one request; count-limited rules are used up as they fire. */
  decide(
    request: { operation: string | null; method: string; path: string },
    nowMs = Date.now(),
  ): FaultDecision {
    const decision: FaultDecision = { delayMs: 0 };
    for (const active of this.rules) {
      if (decision.terminal) break;
      const { rule } = active;
      if (active.remaining <= 0 || !this.matches(active, request)) continue;
      if (rule.type === "rateLimit") {
        const second = Math.floor(nowMs / 1000);
        if (active.window.second !== second) active.window = { second, used: 0 };
        active.window.used++;
        if (active.window.used > rule.perSecond) {
          decision.terminal = {
            type: "rateLimit",
            perSecond: rule.perSecond,
            retryAfterSeconds: rule.retryAfterSeconds ?? 1,
          };
        }
        continue;
      }
      const probability = rule.probability ?? 1;
      if (probability < 1 && this.random().next() >= probability) continue;
      active.remaining--;
      if (rule.type === "slow") decision.delayMs += rule.delayMs;
      else decision.terminal = rule;
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return decision;
  }

  private matches(
    active: ActiveRule,
    request: { operation: string | null; method: string; path: string },
  ): boolean {
    const match = active.rule.match;
    if (!match) return true;
    if (match.operation !== undefined && match.operation !== request.operation) return false;
    if (match.method !== undefined && match.method.toUpperCase() !== request.method) return false;
    if (active.pathPattern && !active.pathPattern.test(request.path)) return false;
    return true;
  }
}
