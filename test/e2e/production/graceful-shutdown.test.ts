import { Agent } from "node:http";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { USER_SCHEMA } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { freePort } from "../../helpers/throwaway-redis.js";
import { type BridgeProcess, type Outcome, call, spawnBridge, waitUntilReady } from "./bridge-process.js";

const SHUTDOWN_TIMEOUT_MS = 5_000;
const DRAIN_MS = 400;
const CLIENTS = 16;

/**
 * Issue 7: `scim-bridge start` under load gets SIGTERM. Readiness answers 503 first, every request
 * the server took gets a complete answer (the only failures are connections refused once it no
 * longer listens), every acknowledged write is in the directory, and the process exits 0 in time.
 */
describe("graceful shutdown (SIGTERM under load)", () => {
  const prefix = testPrefix("shutdown");
  let emulator: PlatformEmulator;
  let redis: Redis;
  let bridge: BridgeProcess;
  let port: number;

  beforeAll(async () => {
    emulator = createPlatformEmulator({ token: "platform-token" });
    const platformUrl = await emulator.start({ port: 0 });
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    await redis.connect();
    port = await freePort();
    bridge = spawnBridge({
      platform: {
        baseUrl: platformUrl,
        token: "platform-token",
        allowInsecureHttp: true,
        requestsPerSecond: 2_000,
      },
      redis: { url: TEST_REDIS_URL, prefix },
      server: { port, host: "127.0.0.1", shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS, drainDelayMs: DRAIN_MS },
      logLevel: "info",
      sources: { okta: { tokens: ["okta-token"] } },
    });
    await waitUntilReady(port, bridge);
  }, 20_000);

  afterAll(async () => {
    await bridge?.dispose();
    await emulator?.close();
    if (redis) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  it("answers 503 on /readyz first, finishes every request it took, and exits 0 within the timeout", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const headers = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const outcomes: Array<{ at: number; userName: string; outcome: Outcome }> = [];
    let sent = 0;
    let stopped = false;
    // Like a client behind a load balancer: it sends until the server says it is going away
    // (Connection: close); the balancer would send the next request to another replica.
    const client = async () => {
      while (!stopped) {
        const userName = `shutdown.user${sent++}@example.com`;
        const outcome = await call(port, {
          method: "POST",
          path: "/scim/v2/okta/Users",
          agent,
          headers,
          body: { schemas: [USER_SCHEMA], userName, active: true },
        });
        outcomes.push({ at: Date.now(), userName, outcome });
        if (outcome.kind !== "answer" || outcome.connectionClose) return;
      }
    };
    // Like the kubelet: a fresh connection per probe.
    const readiness: Array<{ sentAt: number; outcome: Outcome }> = [];
    const probe = async () => {
      while (!stopped) {
        const sentAt = Date.now();
        const outcome = await call(port, { path: "/readyz" });
        readiness.push({ sentAt, outcome });
        if (outcome.kind !== "answer") return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all([...Array.from({ length: CLIENTS }, client), probe()]);
    await waitFor(() => outcomes.length >= 200, { timeoutMs: 10_000, what: "200 answers under load" });

    // A slow client whose request is still arriving when the server stops listening.
    const slow = call(port, {
      method: "POST",
      path: "/scim/v2/okta/Users",
      headers,
      body: { schemas: [USER_SCHEMA], userName: "shutdown.slow@example.com", active: true },
      trickleMs: DRAIN_MS + 600,
    });
    const sigterm = Date.now();
    bridge.child.kill("SIGTERM");
    const { code, signal } = await bridge.exited;
    const exitedAfter = Date.now() - sigterm;
    stopped = true;
    await load;
    agent.destroy();

    expect({ code, signal }, bridge.output()).toEqual({ code: 0, signal: null });
    expect(exitedAfter).toBeLessThan(SHUTDOWN_TIMEOUT_MS);

    // Readiness: 200 until the signal lands, then 503 while the server still answers, then no
    // server (refused, or reset when a probe meets the listener closing).
    const kinds = readiness.map(({ outcome: o }) => (o.kind === "answer" ? String(o.status) : "gone"));
    const sequence = kinds.join(",");
    expect(sequence).toMatch(/^(200,)+(503,)+gone$/);
    const unready = readiness.find((r) => r.outcome.kind === "answer" && r.outcome.status === 503)!;
    expect(unready.outcome.kind === "answer" && JSON.parse(unready.outcome.body).failing).toEqual([
      "shutdown",
    ]);
    const lastReady = readiness
      .filter((r) => r.outcome.kind === "answer" && r.outcome.status === 200)
      .at(-1)!;
    expect(lastReady.sentAt).toBeLessThan(sigterm + 1_000);

    // No request was cut off: each load request got a complete 201, and so did the slow one.
    const cut = outcomes.filter((o) => o.outcome.kind !== "answer");
    expect(cut, JSON.stringify(cut.slice(0, 3))).toEqual([]);
    const slowOutcome = await slow;
    expect(slowOutcome).toMatchObject({ kind: "answer", status: 201 });
    const answers = [
      ...outcomes.flatMap((o) => (o.outcome.kind === "answer" ? [{ ...o, ...o.outcome }] : [])),
      {
        at: Date.now(),
        userName: "shutdown.slow@example.com",
        ...(slowOutcome as Outcome & { kind: "answer" }),
      },
    ];
    expect(answers.filter((a) => a.status !== 201)).toEqual([]);
    // Requests in flight at the signal were answered after it, and every load client was told
    // to go (Connection: close) rather than having its connection dropped.
    expect(answers.filter((a) => a.at > sigterm).length).toBeGreaterThanOrEqual(CLIENTS);
    const toldToGo = outcomes.filter((o) => o.outcome.kind === "answer" && o.outcome.connectionClose);
    expect(toldToGo.length).toBe(CLIENTS);

    // Every acknowledged write is in the directory (invariant 1).
    const directory = new RedisDirectoryStore({ redis, prefix, notify: async () => {}, matchesFilter });
    const created = answers.map((a) => JSON.parse(a.body) as { id: string; userName: string });
    expect(await directory.countEntities("okta", "user")).toBe(created.length);
    for (const user of created.slice(-CLIENTS * 2)) {
      expect((await directory.getUser("okta", user.id))?.resource.userName).toBe(user.userName);
    }
  }, 25_000);
});
