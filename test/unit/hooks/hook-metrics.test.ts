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
