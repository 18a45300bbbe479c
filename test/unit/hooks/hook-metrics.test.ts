import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HookMetrics } from "../../../src/hooks/hook-metrics.js";

describe("hook metrics", () => {
  it("counts on an injected registry, shared by several routers of one process", async () => {
    const registry = new Registry();
    new HookMetrics(registry).count("okta", "okta", "user.session.start", "unknown_type");
    new HookMetrics(registry).count("okta", "okta", "user.session.start", "unknown_type");
    const text = await registry.metrics();
    expect(text).toContain(
      'scim_bridge_hook_events_total{source="okta",hook="okta",event_type="user.session.start",outcome="unknown_type"} 2',
    );
  });
});

describe("hook metrics: the event_type label stays bounded", () => {
  it("counts the event types a hook knows as themselves, and any other as other", async () => {
    const registry = new Registry();
    const metrics = new HookMetrics(registry);
    metrics.count("okta", "okta", "user.lifecycle.deactivate", "applied");
    metrics.count("okta", "okta", "group.user_membership.add", "applied");
    metrics.count("okta", "events", "user.upserted", "applied");
    metrics.count("okta", "events", "(delivery)", "duplicate");
    // Chosen by an authenticated sender: each would otherwise be a new series.
    for (let i = 0; i < 50; i++) metrics.count("okta", "okta", `made.up.type.${i}`, "unknown_type");
    metrics.count("okta", "okta", "x".repeat(200), "unknown_type");
    metrics.count("okta", "events", "user.lifecycle.deactivate", "malformed");
    metrics.count("okta", "okta", "", "malformed");
    const text = await registry.metrics();
    const series = text.split("\n").filter((l) => l.startsWith("scim_bridge_hook_events_total{"));
    expect(series.sort()).toEqual(
      [
        'scim_bridge_hook_events_total{source="okta",hook="okta",event_type="user.lifecycle.deactivate",outcome="applied"} 1',
        'scim_bridge_hook_events_total{source="okta",hook="okta",event_type="group.user_membership.add",outcome="applied"} 1',
        'scim_bridge_hook_events_total{source="okta",hook="events",event_type="user.upserted",outcome="applied"} 1',
        'scim_bridge_hook_events_total{source="okta",hook="events",event_type="(delivery)",outcome="duplicate"} 1',
        'scim_bridge_hook_events_total{source="okta",hook="okta",event_type="other",outcome="unknown_type"} 51',
        'scim_bridge_hook_events_total{source="okta",hook="events",event_type="other",outcome="malformed"} 1',
        'scim_bridge_hook_events_total{source="okta",hook="okta",event_type="(none)",outcome="malformed"} 1',
      ].sort(),
    );
  });
});
