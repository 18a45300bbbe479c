import { Router } from "express";

/** The part of an ioredis client (Redis or Cluster) that the readiness check uses. */
export interface PingableRedis {
  ping(): Promise<string>;
}

export interface HealthRouterOptions {
  redis: PingableRedis;
  /** False once shutdown has begun: /readyz answers 503 so that traffic drains first. */
  isReady: () => boolean;
  /** Given when this process runs workers: false while they are not running. */
  workersRunning?: () => boolean;
  /** How long /readyz waits for Redis to answer PING (default 500 ms). */
  readyTimeoutMs?: number;
}

export type CheckResult = { ok: true } | { ok: false; reason: string };

export interface ReadinessReport {
  status: "ok" | "unavailable";
  checks: Record<string, CheckResult>;
}

/** Resolves to the PING answer, or rejects after `timeoutMs` (the pending command is abandoned). */
export async function pingWithin(redis: PingableRedis, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the readiness checks; pure apart from the PING. */
export async function checkReadiness(options: HealthRouterOptions): Promise<ReadinessReport> {
  const checks: Record<string, CheckResult> = {};
  checks.shutdown = options.isReady() ? { ok: true } : { ok: false, reason: "shutting down" };
  if (options.workersRunning)
    checks.workers = options.workersRunning() ? { ok: true } : { ok: false, reason: "workers not running" };
  try {
    await pingWithin(options.redis, options.readyTimeoutMs ?? 500);
    checks.redis = { ok: true };
  } catch (err) {
    checks.redis = { ok: false, reason: (err as Error).message };
  }
  const ok = Object.values(checks).every((c) => c.ok);
  return { status: ok ? "ok" : "unavailable", checks };
}

/**
 * `GET /healthz`: the process is alive (no dependency checks, so a Redis outage never restarts
 * pods). `GET /readyz`: Redis answers PING within the timeout, workers run (when this process runs
 * them), and shutdown has not begun; otherwise 503 with the failing checks named.
 */
export function createHealthRouter(options: HealthRouterOptions): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.status(200).json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const report = await checkReadiness(options);
    const failing = Object.entries(report.checks)
      .filter(([, c]) => !c.ok)
      .map(([name]) => name);
    res.setHeader("Cache-Control", "no-store");
    res.status(failing.length === 0 ? 200 : 503).json(failing.length === 0 ? report : { ...report, failing });
  });
  return router;
}
