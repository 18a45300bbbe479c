import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../../src/bridge.js";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { USER_SCHEMA } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis, freePort } from "../../helpers/throwaway-redis.js";
import { type BridgeProcess, call, spawnBridge, waitUntilReady } from "./bridge-process.js";

const SHUTDOWN_TIMEOUT_MS = 3_000;

/**
 * `scim-bridge start --role worker` (the Helm chart's worker Deployment): health, readiness and
 * metrics on PORT, no intake, the jobs of an api process done, readiness following Redis, and a
 * SIGTERM while Redis is down still ends in exit 0 within the timeout.
 */
describe("worker role", () => {
  let redis: ThrowawayRedis;
  let emulator: PlatformEmulator;
  let worker: BridgeProcess;
  let api: RunningBridge | undefined;
  let port: number;
  let config: ConfigInput;

  beforeAll(async () => {
    redis = await ThrowawayRedis.start({ aof: true });
    emulator = createPlatformEmulator({ token: "platform-token" });
    const platformUrl = await emulator.start({ port: 0 });
    port = await freePort();
    config = {
      platform: {
        baseUrl: platformUrl,
        token: "platform-token",
        allowInsecureHttp: true,
        requestsPerSecond: 2_000,
      },
      // PORT and REDIS_URL from the environment win over these (the chart sets them).
      redis: { url: "redis://127.0.0.1:1", prefix: "{worker-role}" },
      server: { port: 1, host: "127.0.0.1", shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS },
      sync: {
        concurrency: 4,
        attempts: 8,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 300,
        sweepAfterMs: 500,
      },
      logLevel: "info",
      sources: { okta: { tokens: ["okta-token"] } },
    };
    worker = spawnBridge(config, ["--role", "worker"], { PORT: String(port), REDIS_URL: redis.url });
    await waitUntilReady(port, worker);
  }, 20_000);

  afterAll(async () => {
    await api?.close();
    await worker?.dispose();
    await emulator?.close();
    await redis?.dispose();
  });

  it("serves /healthz, /readyz (workers running) and /metrics on PORT, and no intake", async () => {
    expect(await call(port, { path: "/healthz" })).toMatchObject({ kind: "answer", status: 200 });
    const ready = await call(port, { path: "/readyz" });
    expect(ready).toMatchObject({ kind: "answer", status: 200 });
    expect(ready.kind === "answer" && JSON.parse(ready.body).checks).toMatchObject({
      workers: { ok: true },
      redis: { ok: true },
    });
    const metrics = await call(port, { path: "/metrics" });
    expect(metrics).toMatchObject({ kind: "answer", status: 200 });
    expect(metrics.kind === "answer" && metrics.body).toMatch(/^# HELP /m);
    const scim = await call(port, {
      path: "/scim/v2/okta/Users",
      headers: { Authorization: "Bearer okta-token" },
    });
    expect(scim).toMatchObject({ kind: "answer", status: 404 });
  });

  it("does the jobs an api process enqueues", async () => {
    const apiConfig = buildConfig({ ...config, redis: { url: redis.url, prefix: "{worker-role}" } });
    api = await startBridge(
      { ...apiConfig, server: { ...apiConfig.server, port: 0 } },
      { role: "api", logger: createLogger("silent") },
    );
    const res = await fetch(`${api.url}/scim/v2/okta/Users`, {
      method: "POST",
      headers: { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" },
      body: JSON.stringify({ schemas: [USER_SCHEMA], userName: "worker.role@example.com", active: true }),
    });
    expect(res.status).toBe(201);
    const users = () => (emulator.state() as unknown as { users: Array<{ userName: string }> }).users;
    await waitFor(() => users().some((u) => u.userName === "worker.role@example.com"), {
      timeoutMs: 10_000,
      what: "the worker process to create the user on the platform",
    });
  });

  it("is unready while Redis is down (alive all along), and a SIGTERM then still exits 0 in time", async () => {
    await api?.close();
    api = undefined;
    await redis.stop();
    await waitFor(
      async () => {
        const res = await call(port, { path: "/readyz" });
        return res.kind === "answer" && res.status === 503 && JSON.parse(res.body).failing.includes("redis");
      },
      { timeoutMs: 3_000, what: "/readyz to answer 503 naming redis" },
    );
    expect(await call(port, { path: "/healthz" })).toMatchObject({ kind: "answer", status: 200 });

    const sigterm = Date.now();
    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    expect(exit, worker.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - sigterm).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
  }, 15_000);
});
