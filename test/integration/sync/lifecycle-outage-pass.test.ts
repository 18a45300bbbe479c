/**
 * The lifecycle flusher while the platform is down (review o of lifecycle-n2): a bulk call that
 * fails as a whole holds every other due call back until its users' next try (one failing call per
 * pause, not one per chunk), a shutdown is not held up by the other chunks' failing calls, and only
 * the platform down or slow makes users wait: any other failure (a bug, a Redis error reply) fails
 * the flush as before, no user noted or requeued.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformClient } from "../../../src/platform/platform-types.js";
import type { LifecycleEntry } from "../../../src/sync/lifecycle-entry.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";
import { createLogger } from "../../../src/observability/logger.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

const down = () =>
  new PlatformError("platform answered 503", {
    operation: "bulkUsers",
    failure: "server",
    transient: true,
    httpStatus: 503,
  });

function withBulk(h: JobsHarness, bulkUsers: PlatformClient["bulkUsers"]): SyncContext {
  const platform = new Proxy(h.platform, {
    get(target, key, receiver) {
      if (key === "bulkUsers") return bulkUsers;
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    config: h.config,
    directory: h.directory,
    platform,
    state: h.state,
    attributes: new AttributeDefinitions(platform),
    logger: createLogger("silent"),
    scheduleLifecycle: async () => {},
  };
}

/** `count` DEACTIVATEs due now (users the test made up: the calls never reach the platform). */
async function queue(h: JobsHarness, count: number): Promise<LifecycleEntry[]> {
  const entries: LifecycleEntry[] = [];
  for (let i = 0; i < count; i++) {
    const entry: LifecycleEntry = {
      platformId: randomUUID(),
      ref: { source: "okta", kind: "user", id: randomUUID() },
      action: "DEACTIVATE",
      generation: 1,
      final: false,
      attempts: 0,
      since: Date.now() - 1_000,
    };
    await h.state.putLifecycle(entry);
    entries.push(entry);
  }
  return entries;
}

describe("the lifecycle flusher while the platform is down", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("one failing call holds the other due chunks back until its users' next try; a stop sends nothing more", async () => {
    h = await startJobsHarness("lifecycle-outage-pass", { workers: false });
    await queue(h, 350); // four chunks of at most 100
    let calls = 0;
    let stop = false;
    const ctx = withBulk(h, async () => {
      calls++;
      throw down();
    });
    const flushed = flushNow(ctx, { windowMs: 400, stopping: () => stop });
    // The first call fails: the pass ends, the flush waits (400 ms * 2) before the next call.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls).toBe(1);
    stop = true;
    await flushed;
    expect(calls).toBe(1);
    // The failed chunk's 100 users wait with their failed call counted; the others are untouched.
    const stored = await h.state.peekLifecycle(1_000);
    expect(stored.filter((s) => s.entry.failedCalls === 1)).toHaveLength(100);
    expect(stored.filter((s) => s.entry.failedCalls === undefined)).toHaveLength(250);
    expect(stored.every((s) => s.entry.attempts === 0)).toBe(true);
  });

  it("a stop between chunks: the flush returns after the call in flight", async () => {
    h = await startJobsHarness("lifecycle-outage-stop", { workers: false });
    await queue(h, 350);
    let calls = 0;
    let stop = false;
    const ctx = withBulk(h, async (_action, ids) => {
      calls++;
      stop = true; // a shutdown begins while the first call is out
      return { succeeded: ids, failed: [] };
    });
    await flushNow(ctx, { stopping: () => stop });
    expect(calls).toBe(1);
    expect(await h.state.countLifecycle()).toBe(250);
  });

  it("a failure that is not the platform down (a bug) fails the flush: no user noted or requeued", async () => {
    h = await startJobsHarness("lifecycle-outage-internal", { workers: false });
    const [entry] = await queue(h, 1);
    const ctx = withBulk(h, async () => {
      throw new TypeError("cannot read properties of undefined");
    });
    await expect(flushNow(ctx)).rejects.toThrow(/cannot read properties/);
    const [stored] = await h.state.peekLifecycle(10);
    expect(stored?.entry).toEqual(entry);
    expect(await h.state.getStatus(entry!.ref)).toBeNull();
  });
});
