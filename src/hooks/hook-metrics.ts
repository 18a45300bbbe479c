import { Counter, Registry } from "prom-client";

export type HookName = "okta" | "events";

/**
 * What happened to each received event:
 * applied | unchanged | duplicate | stale | deleted (a late event for a deleted user) |
 * unknown_user (an Okta event that creates no user, about a user the directory does not hold) |
 * unknown_type | no_target | not_success | malformed | rejected (a permanent error, logged).
 */
export type HookOutcome =
  | "applied"
  | "unchanged"
  | "duplicate"
  | "stale"
  | "deleted"
  | "unknown_user"
  | "unknown_type"
  | "no_target"
  | "not_success"
  | "malformed"
  | "rejected";

const NAME = "scim_bridge_hook_events_total";

/** Counts webhook events by source, hook, event type and outcome. */
export class HookMetrics {
  private readonly events: Counter<"source" | "hook" | "event_type" | "outcome">;

  /** Without a registry the counter lives on a private one (never prom-client's global registry). */
  constructor(registry: Registry = new Registry()) {
    const existing = registry.getSingleMetric(NAME);
    this.events =
      (existing as Counter<"source" | "hook" | "event_type" | "outcome"> | undefined) ??
      new Counter({
        name: NAME,
        help: "Webhook events received, by source, hook, event type and outcome",
        labelNames: ["source", "hook", "event_type", "outcome"],
        registers: [registry],
      });
  }

  count(source: string, hook: HookName, eventType: string, outcome: HookOutcome, n = 1): void {
    // Event types are chosen by authenticated senders; cap their length all the same.
    this.events.inc({ source, hook, event_type: eventType.slice(0, 80) || "(none)", outcome }, n);
  }
}
