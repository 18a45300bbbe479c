/**
 * The admin side (reconciliation, resyncs, the admin service) over a jobs harness, as the admin
 * integration tests start it: the harness's stores and platform, no schedule. Plus the waits for a
 * run or resync to be done.
 */
import { type AdminJobs, startAdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { Config } from "../../../src/config/config-schema.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { ReconcileRun, ResyncOperation } from "../../../src/reconcile/reconcile-run.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import type { JobsHarness } from "../jobs/jobs-harness.js";

/** The admin jobs over `h`, with `reconcile` over the harness's reconcile settings. */
export function startAdminJobsOver(
  h: JobsHarness,
  reconcile: Partial<Config["reconcile"]> = {},
): Promise<AdminJobs> {
  return startAdminJobs({
    config: { ...h.config, reconcile: { ...h.config.reconcile, ...reconcile } },
    connection: h.queueRedis,
    redis: h.storeRedis,
    directory: h.directory,
    syncState: h.state,
    queueStatus: h.status,
    logger: createLogger("silent"),
    platform: h.platform,
    schedule: false,
  });
}

/** The states a run or resync ends in (held included: it waits for an admin, not for the jobs). */
const DONE = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/** The operation once it is done. */
function settled<T extends { state: string }>(get: () => Promise<T | null>, what: string): Promise<T> {
  return waitFor(
    async () => {
      const op = await get();
      return op && DONE.includes(op.state) ? op : null;
    },
    { what },
  );
}

/** The run once it is done. */
export function runSettled(jobs: AdminJobs, runId: string): Promise<ReconcileRun> {
  return settled(() => jobs.runs.get(runId), "the run to settle");
}

/** The resync once it is done. */
export function resyncSettled(jobs: AdminJobs, id: string): Promise<ResyncOperation> {
  return settled(() => jobs.resyncs.get(id), "the resync to settle");
}
