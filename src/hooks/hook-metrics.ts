import { Counter, Registry } from "prom-client";
import { OKTA_GROUP_EVENTS, OKTA_MEMBERSHIP_EVENTS, OKTA_USER_EVENTS } from "./okta-event.js";
import { SIGNED_EVENT_TYPES } from "./signed-event.js";

export type HookName = "okta" | "events";

/**
 * What happened to each received event:
 * applied | unchanged | duplicate | stale | deleted (a late event for a deleted user or group) |
 * unknown_user (an Okta event that creates no user, about a user the directory does not hold) |
 * unknown_group (an Okta group deletion or rename of a group the directory does not hold as that Okta
 * group) |
 * unknown_type | no_target | not_success | malformed | rejected (a permanent error, logged).
 */
export type HookOutcome =
  | "applied"
  | "unchanged"
  | "duplicate"
  | "stale"
  | "deleted"
  | "unknown_user"
  | "unknown_group"
  | "unknown_type"
  | "no_target"
  | "not_success"
  | "malformed"
  | "rejected";

const NAME = "scim_bridge_hook_events_total";

/**
 * Okta System Log event types that an Event Hook is often subscribed to but the bridge does not
 * act on (`unknown_type`): counted by name, so that an operator sees what the hook was set up to
 * send. Any other type is counted as `other`.
 */
const OKTA_WELL_KNOWN_EVENTS = [
  "user.session.start",
  "user.session.end",
  "user.authentication.sso",
  "user.account.lock",
  "user.account.unlock",
  "user.account.update_password",
  "user.account.reset_password",
  "group.lifecycle.create",
  "application.user_membership.add",
  "application.user_membership.remove",
] as const;

/** The `event_type` values a hook's events are counted under, besides "other". */
export const KNOWN_EVENT_TYPES: Readonly<Record<HookName, ReadonlySet<string>>> = {
  okta: new Set([
    ...Object.keys(OKTA_USER_EVENTS),
    ...Object.keys(OKTA_MEMBERSHIP_EVENTS),
    ...Object.keys(OKTA_GROUP_EVENTS),
    ...OKTA_WELL_KNOWN_EVENTS,
    "(none)",
  ]),
  events: new Set([...SIGNED_EVENT_TYPES, "(delivery)", "(none)"]),
};

/**
 * The `event_type` label of an event: a type the hook knows as itself, anything else `other`. The
 * type is chosen by an authenticated sender, but any string of its would be a new series: the
 * label set stays bounded.
 */
export function eventTypeLabel(hook: HookName, eventType: string): string {
  const type = eventType || "(none)";
  return KNOWN_EVENT_TYPES[hook].has(type) ? type : "other";
}

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
    this.events.inc({ source, hook, event_type: eventTypeLabel(hook, eventType), outcome }, n);
  }
}
