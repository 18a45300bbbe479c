/** Shared setup of the lifecycle (bulk) path's integration tests. */
import { expect } from "vitest";
import { syncMetrics } from "../../../jobs/sync-metrics.js";
import { createSyncProcessor } from "../../../jobs/sync-processor.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { handJob, type JobsHarness } from "../jobs/jobs-harness.js";

/** The platform client with some methods replaced. */
export function patched(platform: PlatformClient, overrides: Partial<PlatformClient>): PlatformClient {
  return new Proxy(platform, {
    get(target, key, receiver) {
      if (key in overrides) return overrides[key as keyof PlatformClient];
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A user synced, then deactivated at the source: its DEACTIVATE waits in the batch (one more entry). */
export async function queuedDeactivation(harness: JobsHarness, userName: string) {
  const logger = createLogger("silent");
  const ctx: SyncContext = {
    config: harness.config,
    directory: harness.directory,
    platform: harness.platform,
    state: harness.state,
    attributes: new AttributeDefinitions(harness.platform),
    logger,
    scheduleLifecycle: async () => {},
  };
  const process = createSyncProcessor({
    ctx,
    queue: harness.syncQueue.queue,
    budget: new NoopRequestBudget(),
    metrics: syncMetrics(createMetricsRegistry({ defaultMetrics: false }), async () => ({})),
    logger,
  });
  const run = (ref: EntityRef) => process(handJob(ref));
  const u = await harness.directory.createUser("okta", harness.user(userName));
  const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
  expect(await run(ref)).toBe("clean");
  const queued = await harness.state.countLifecycle();
  await harness.directory.updateUser("okta", ref.id, (c) => ({ ...c.resource, active: false }));
  expect(await run(ref)).toBe("lifecycle");
  expect(await harness.state.countLifecycle()).toBe(queued + 1);
  return { ctx, ref };
}
