import type { EventEmitter } from "node:events";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createReconcileQueue, startReconcileWorker } from "../../../jobs/reconcile/reconcile-queue.js";
import type { ReconcileDeps } from "../../../jobs/reconcile/reconcile-ports.js";
import { createResyncQueue, startResyncWorker } from "../../../jobs/resync/resync-queue.js";
import type { ResyncDeps } from "../../../jobs/resync/resync-runner.js";
import { createLogger } from "../../../src/observability/logger.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

/**
 * A Redis outage makes each BullMQ handle emit `error` about ten times a second: the reconcile and
 * resync queues and workers write the first error at once, then at most one line per interval
 * for each handle, with the number left out, not one line per error.
 */
describe("reconcile and resync error lines during a Redis outage", () => {
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const closers: Array<() => Promise<unknown>> = [];
  const prefix = testPrefix("op-error-flood");
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await deleteKeys(connection, prefix);
    connection.disconnect();
  });

  it("writes the first error of each handle, then one line per interval with the count left out", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger("warn", {}, sink);
    const reconcile = createReconcileQueue({ connection, prefix, logger, errorLogIntervalMs: 200 });
    const resync = createResyncQueue({ connection, prefix, logger, errorLogIntervalMs: 200 });
    const reconcileWorkers = startReconcileWorker({
      connection,
      prefix,
      queue: reconcile,
      deps: { logger } as unknown as ReconcileDeps,
      errorLogIntervalMs: 200,
    });
    const resyncWorker = startResyncWorker({
      connection,
      prefix,
      deps: { logger } as unknown as ResyncDeps,
      errorLogIntervalMs: 200,
    });
    closers.push(
      () => Promise.all(reconcileWorkers.map((w) => w.close())),
      () => resyncWorker.close(),
      () => reconcile.close(),
      () => resync.close(),
    );
    const handles = [
      reconcile.queue,
      reconcile.scheduleQueue,
      resync.queue,
      ...reconcileWorkers,
      resyncWorker,
    ] as unknown as EventEmitter[];
    // 50 errors per handle within well under the interval: one line each.
    for (let i = 0; i < 50; i++)
      for (const handle of handles) handle.emit("error", new Error("ECONNREFUSED"));
    await new Promise((r) => setTimeout(r, 50));
    const errorLines = () => lines.filter((l) => String(l.msg).endsWith("error"));
    expect(errorLines()).toHaveLength(handles.length);
    // The outage goes on past the interval: one more line each, carrying the 49 left out.
    await new Promise((r) => setTimeout(r, 250));
    for (const handle of handles) handle.emit("error", new Error("ECONNREFUSED"));
    await new Promise((r) => setTimeout(r, 50));
    const later = errorLines().slice(handles.length);
    expect(later).toHaveLength(handles.length);
    for (const line of later) expect(line.suppressed).toBe(49);
  });
});
