/**
 * `scim-bridge start --processes 2`: one command, a cluster primary and two bridge processes
 * sharing one (random) port, run as real processes with a configuration file of their own. SCIM
 * creates served by both processes are all stored; GET /metrics, whichever process answers it,
 * reports the cluster's totals; a process killed with SIGKILL is replaced; SIGTERM stops them all
 * (exit 0, no process left); a process that cannot start stops the primary (exit 1).
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { USER_SCHEMA } from "../../helpers/bridge-harness.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { freePort } from "../../helpers/throwaway-redis.js";
import {
  type BridgeProcess,
  alive,
  call,
  childPids,
  disposeCluster,
  logLines,
  spawnBridge,
  waitUntilReady,
} from "./bridge-process.js";

const SHUTDOWN_TIMEOUT_MS = 2_000;
/** shutdownLimitMs(config): drain (0) + shutdownTimeoutMs + 5 s. */
const SHUTDOWN_LIMIT_MS = SHUTDOWN_TIMEOUT_MS + 5_000;
const USERS = 40;
const CLIENTS = 8;
const SCIM_HEADERS = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };

function clusterConfig(platformUrl: string, prefix: string, redisUrl = TEST_REDIS_URL): ConfigInput {
  return {
    platform: { baseUrl: platformUrl, token: "platform-token", allowInsecureHttp: true },
    redis: { url: redisUrl, prefix },
    // Port 0: the cluster shares one random port among its processes; the primary logs it.
    server: { port: 0, host: "127.0.0.1", shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS },
    logLevel: "info",
    sources: { okta: { tokens: ["okta-token"] } },
  };
}

/** The value of one sample in a Prometheus text answer (undefined when absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("scim-bridge start --processes 2 (node:cluster)", () => {
  const prefix = testPrefix("cluster");
  let emulator: PlatformEmulator;
  let redis: Redis;
  let bridge: BridgeProcess;
  let port: number;
  let primary: number;

  beforeAll(async () => {
    emulator = createPlatformEmulator({ token: "platform-token" });
    const platformUrl = await emulator.start({ port: 0 });
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    await redis.connect();
    bridge = spawnBridge(clusterConfig(platformUrl, prefix), ["--processes", "2", "--role", "api"]);
    primary = bridge.child.pid!;
    // One line from the primary once every process listens, with the port they share.
    const started = await waitFor(
      () => {
        if (bridge.child.exitCode !== null) throw new Error(`exited early:\n${bridge.output()}`);
        return logLines(bridge, "scim-bridge started")[0];
      },
      { timeoutMs: 25_000, intervalMs: 100, what: `"scim-bridge started" from the primary` },
    );
    expect(started).toMatchObject({ processes: 2, role: "api" });
    port = Number(new URL(String(started.url)).port);
    expect(port).toBeGreaterThan(0);
    await waitUntilReady(port, bridge);
  }, 30_000);

  afterAll(async () => {
    await disposeCluster(bridge);
    await emulator?.close();
    if (redis) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  it("stores every create served by both processes; /metrics reports the cluster's totals on every scrape", async () => {
    // Two bridge processes, children of the one started.
    expect(childPids(primary)).toHaveLength(2);

    // A fresh connection per request (Connection: close): the primary hands them out in turn.
    const userNames = Array.from({ length: USERS }, (_, i) => `cluster.user${i}@example.com`);
    const queue = [...userNames];
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let userName = queue.shift(); userName; userName = queue.shift()) {
          const res = await call(port, {
            method: "POST",
            path: "/scim/v2/okta/Users",
            headers: SCIM_HEADERS,
            body: { schemas: [USER_SCHEMA], userName, active: true },
          });
          statuses.push(res.kind === "answer" ? res.status : -1);
        }
      }),
    );
    expect(statuses).toEqual(Array(USERS).fill(201));

    const filter = encodeURIComponent('userName sw "cluster.user"');
    const list = await call(port, {
      path: `/scim/v2/okta/Users?filter=${filter}&count=100`,
      headers: SCIM_HEADERS,
    });
    expect(list.kind === "answer" && list.status).toBe(200);
    const page = JSON.parse(list.kind === "answer" ? list.body : "{}") as {
      totalResults: number;
      Resources: Array<{ userName: string }>;
    };
    expect(page.totalResults).toBe(USERS);
    expect(page.Resources.map((u) => u.userName).sort()).toEqual([...userNames].sort());

    // No worker runs in role api: the sync jobs wait, and every process reads the same depth.
    const sync = new Queue("sync", { connection: redis, prefix });
    const waiting = await sync.getWaitingCount();
    await sync.close();
    expect(waiting).toBeGreaterThan(0);

    for (let scrape = 0; scrape < 6; scrape++) {
      const res = await call(port, { path: "/metrics" });
      expect(res.kind === "answer" && res.status).toBe(200);
      const text = res.kind === "answer" ? res.body : "";
      // Counted by two processes, summed by the primary: the exact total on every scrape.
      expect(
        sample(text, 'http_requests_total{method="POST",route="/scim/v2/:source/Users",status="201"}'),
      ).toBe(USERS);
      expect(
        sample(text, 'scim_operations_total{source="okta",resource="Users",operation="create",status="201"}'),
      ).toBe(USERS);
      // Read from Redis by each process: one value, not their sum.
      expect(sample(text, 'queue_jobs{queue="sync",state="waiting"}')).toBe(waiting);
    }
  });

  it("replaces a process killed with SIGKILL; the primary stays up", async () => {
    const before = childPids(primary);
    expect(before).toHaveLength(2);
    const [victim, survivor] = before as [number, number];
    process.kill(victim, "SIGKILL");
    const after = await waitFor(
      () => {
        const now = childPids(primary);
        return now.length === 2 && !now.includes(victim) ? now : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "a new second bridge process" },
    );
    expect(after).toContain(survivor);
    expect(alive(primary)).toBe(true);
    // The replacement starts its bridge (the primary logs it ready), and the port answers.
    await waitFor(
      () => logLines(bridge, "bridge process ready").some((l) => !before.includes(Number(l.pid))),
      {
        timeoutMs: 15_000,
        intervalMs: 100,
        what: "the replacement to report ready",
      },
    );
    await waitUntilReady(port, bridge);
    const exited = logLines(bridge, "bridge process exited unexpectedly");
    expect(exited).toEqual([expect.objectContaining({ pid: victim, signal: "SIGKILL" })]);
    // Both processes answer the metrics requests of the primary again.
    const res = await call(port, { path: "/metrics" });
    expect(res.kind === "answer" && res.status).toBe(200);
  });

  it("answers every /metrics scrape while a killed process is being replaced, from the processes alive", async () => {
    const before = childPids(primary);
    expect(before).toHaveLength(2);
    const [victim] = before as [number, number];
    const readyBefore = logLines(bridge, "bridge process ready").length;
    process.kill(victim, "SIGKILL");
    // A connection the primary hands to the process at the moment it dies is lost with it (node's
    // round-robin cluster): this test starts once the primary has seen the exit.
    await waitFor(
      () => logLines(bridge, "bridge process exited unexpectedly").some((l) => Number(l.pid) === victim),
      { timeoutMs: 5_000, intervalMs: 20, what: "the primary to see the process exit" },
    );
    // Scrape all through the replacement: while the dead process is gone, while the new one loads
    // its code (connected to the primary but not answering it yet), and once it is ready. A scrape
    // that waited for a process that will never answer took 5 s and answered 503.
    const scrapes: Array<{ status: number | string; ms: number }> = [];
    let readyAt: number | undefined;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (readyAt === undefined || Date.now() < readyAt + 1_000)) {
      const started = Date.now();
      const res = await Promise.race([
        call(port, { path: "/metrics" }),
        new Promise<{ kind: "no answer in 4 s" }>((resolve) =>
          setTimeout(() => resolve({ kind: "no answer in 4 s" }), 4_000),
        ),
      ]);
      scrapes.push({ status: res.kind === "answer" ? res.status : res.kind, ms: Date.now() - started });
      if (readyAt === undefined && logLines(bridge, "bridge process ready").length > readyBefore) {
        readyAt = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(readyAt, "the replacement reported ready").toBeDefined();
    expect(scrapes.length).toBeGreaterThan(10);
    expect(
      scrapes.filter((s) => s.status !== 200),
      JSON.stringify(scrapes),
    ).toEqual([]);
    expect(Math.max(...scrapes.map((s) => s.ms))).toBeLessThan(2_500);
    // Once the replacement is ready, a scrape counts both processes again.
    const res = await call(port, { path: "/metrics" });
    expect(res.kind === "answer" && res.status).toBe(200);
  }, 30_000);

  it("SIGTERM stops every process and the primary exits 0 within the shutdown limit", async () => {
    const children = childPids(primary);
    expect(children).toHaveLength(2);
    const at = Date.now();
    bridge.child.kill("SIGTERM");
    const exit = await Promise.race([
      bridge.exited,
      new Promise<"late">((resolve) => setTimeout(() => resolve("late"), SHUTDOWN_LIMIT_MS + 3_000)),
    ]);
    expect(exit, bridge.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - at).toBeLessThan(SHUTDOWN_LIMIT_MS);
    for (const child of children) expect(alive(child)).toBe(false);
    expect(logLines(bridge, "bridge process exited")).toHaveLength(2);
  });
});

describe("scim-bridge start --processes 2 when a process cannot start", () => {
  it("stops the others and exits 1, leaving no process behind", async () => {
    const prefix = testPrefix("cluster-nostart");
    // Nothing listens on this port: every bridge process fails at its start.
    const deadRedis = `redis://127.0.0.1:${await freePort()}`;
    const bridge = spawnBridge(clusterConfig("http://127.0.0.1:9", prefix, deadRedis), ["--processes", "2"]);
    try {
      const pid = bridge.child.pid!;
      const seen = new Set<number>();
      let exit: Awaited<BridgeProcess["exited"]> | undefined;
      void bridge.exited.then((e) => {
        exit = e;
      });
      const deadline = Date.now() + 20_000;
      while (exit === undefined && Date.now() < deadline) {
        for (const child of childPids(pid)) seen.add(child);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(exit, bridge.output()).toEqual({ code: 1, signal: null });
      expect(bridge.output()).toContain("a bridge process could not start");
      for (const child of seen) expect(alive(child)).toBe(false);
    } finally {
      await disposeCluster(bridge);
    }
  }, 25_000);

  it("refuses --processes that is not a whole number of at least 1, or auto (exit 2)", async () => {
    await Promise.all(
      ["0", "x"].map(async (value) => {
        const bridge = spawnBridge(clusterConfig("http://127.0.0.1:9", testPrefix("cluster-flag")), [
          `--processes=${value}`,
        ]);
        try {
          expect(await bridge.exited).toEqual({ code: 2, signal: null });
          expect(bridge.output()).toContain("--processes must be a whole number, 1 or more, or auto");
        } finally {
          await bridge.dispose();
        }
      }),
    );
  }, 25_000);
});
