/**
 * Fault injection: rules that match requests (all, one operation, or a method + path glob) and
 * fire with a probability and/or for the next N matches. Draws use the seeded generator, so a
 * seed repeats the same faults for the same request sequence.
 */
import type { SeededRandom } from "./seeded-random.js";

/**
 * Statuses an error fault may answer (429 always carries Retry-After). 400: a refusal for good of
 * a request the emulator would take (a group's member limit, say), to see a dead letter of it.
 * 409: a uniqueness refusal (scimType `uniqueness` on the SCIM routes) of a name no object the
 * emulator holds has, as a platform with names reserved out of sight would answer.
 */
export const FAULT_STATUSES = [400, 401, 403, 409, 429, 500, 502, 503, 504] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

export type FaultKind =
  | { type: "error"; status: FaultStatus; retryAfterSeconds?: number; retryAfterDate?: boolean }
  | { type: "drop" }
  | { type: "slow"; delayMs: number }
  | { type: "ghost" }
  | { type: "late"; delayMs: number }
  | CutOffFault
  | { type: "rateLimit"; perSecond: number; retryAfterSeconds?: number; retryAfterDate?: boolean };

/**
 * The change is applied and its 2xx answer starts (status line, headers, part of the body), then
 * the socket is destroyed. `contentLength` (default true) sends the full body's Content-Length, so
 * a client can tell the body is incomplete; false sends none and no chunking (the body ends with
 * the connection), so a client reads a complete-looking 2xx whose JSON is cut in the middle.
 */
export interface CutOffFault {
  type: "cutOff";
  contentLength?: boolean;
}

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
  /** The fault that ends the request, if any (error, drop, ghost, late, cutOff, or a tripped rate limit). */
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

/** Problems of the Retry-After options an error or rateLimit rule may carry. */
function retryAfterProblem(rule: {
  retryAfterSeconds?: unknown;
  retryAfterDate?: unknown;
}): string | undefined {
  const seconds = rule.retryAfterSeconds;
  if (seconds !== undefined && !(typeof seconds === "number" && seconds >= 0)) {
    return "retryAfterSeconds must be a number >= 0";
  }
  if (rule.retryAfterDate !== undefined && typeof rule.retryAfterDate !== "boolean") {
    return "retryAfterDate must be true or false";
  }
  return undefined;
}

function kindProblem(rule: FaultRule): string | undefined {
  switch (rule.type) {
    case "error":
      return (FAULT_STATUSES as readonly number[]).includes(rule.status)
        ? retryAfterProblem(rule)
        : `error status must be one of ${FAULT_STATUSES.join(", ")}`;
    case "slow":
      return rule.delayMs >= 0 ? undefined : "slow needs delayMs >= 0";
    case "late":
      return rule.delayMs >= 0 ? undefined : "late needs delayMs >= 0";
    case "rateLimit":
      return rule.perSecond > 0 ? retryAfterProblem(rule) : "rateLimit needs perSecond > 0";
    case "cutOff":
      return rule.contentLength === undefined || typeof rule.contentLength === "boolean"
        ? undefined
        : "cutOff contentLength must be true or false";
    case "drop":
    case "ghost":
      return undefined;
    default:
      return `unknown type ${(rule as { type?: unknown }).type}`;
  }
}

/** Why a rule cannot be applied (unknown type, bad status, missing numbers), or undefined. */
function ruleProblem(rule: FaultRule): string | undefined {
  if (!rule || typeof rule !== "object") return "not an object";
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1)) {
    return "probability must be within 0..1";
  }
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 0)) {
    return "count must be a whole number";
  }
  return kindProblem(rule);
}

/** Throws on the first rule that cannot apply (all or nothing for a list). */
export function assertRules(rules: readonly FaultRule[]): void {
  for (const rule of rules) {
    const problem = ruleProblem(rule);
    if (problem) throw new Error(`fault rule: ${problem}`);
  }
}

export class FaultInjector {
  private rules: ActiveRule[] = [];

  constructor(
    private readonly random: () => SeededRandom,
    initial: FaultRule[] = [],
  ) {
    for (const rule of initial) this.add(rule);
  }

  /** Adds a rule; throws on a rule it cannot apply (unknown type, bad status, missing numbers). */
  add(rule: FaultRule): void {
    assertRules([rule]);
    this.rules.push({
      rule,
      remaining: rule.count ?? Number.POSITIVE_INFINITY,
      pathPattern: rule.match?.path ? globToRegExp(rule.match.path) : undefined,
      window: { second: 0, used: 0 },
    });
  }

  /** Replaces every rule; throws, changing nothing, when any of them cannot apply. */
  set(rules: FaultRule[]): void {
    assertRules(rules);
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
            ...(rule.retryAfterDate !== undefined ? { retryAfterDate: rule.retryAfterDate } : {}),
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
