/**
 * A Redis outage of ~10 s under `scim-bridge start` as real processes: a cluster (`--processes 2`)
 * and a single process, on a throwaway Redis of this file's own. No bridge process exits or is
 * replaced meanwhile (the same pids before, during and after); while Redis is down `/readyz` and
 * the SCIM intake answer 503 and `/healthz` 200; once Redis is back every process is ready again
 * by itself, takes SCIM writes, and its workers deliver them to the platform.
 *
 * The outage starts only once the primary has logged "scim-bridge started" (every process
 * listens): one process answering `/readyz` does not mean the others have started, and a process
 * that cannot reach Redis while it starts stops the whole cluster (docs/operations.md, "Several
 * processes in one container").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";
import { USER_SCHEMA } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { ThrowawayRedis, freePort } from "../../helpers/throwaway-redis.js";
import {
  type BridgeProcess,
  type Outcome,
  call,
  childPids,
  disposeCluster,
  logLines,
  spawnBridge,
  waitUntilReady,
} from "./bridge-process.js";

const OUTAGE_MS = 10_000;
const SCIM_HEADERS = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };

/** Lines that would mean a process stopped, crashed or was replaced (not the 503s' request lines). */
function exitLines(bridge: BridgeProcess): string[] {
  return bridge
    .output()
    .split("\n")
    .filter((line) => !line.includes(`"msg":"request errored"`))
    .filter((line) =>
      /"level":(50|60)|exited|shutting down|could not start|replacing|nhandled|ncaught|did not finish in time/.test(
        line,
      ),
    );
}

function config(platformUrl: string, redisUrl: string, prefix: string, port: number): ConfigInput {
  return {
    platform: { baseUrl: platformUrl, token: "platform-token", allowInsecureHttp: true },
    redis: { url: redisUrl, prefix },
    server: { port, host: "127.0.0.1", shutdownTimeoutMs: 1_000 },
    logLevel: "info",
    sources: { okta: { tokens: ["okta-token"] } },
  };
}

const status = (res: Outcome) => (res.kind === "answer" ? res.status : res.kind);

describe("a Redis outage under scim-bridge start (cluster and single process)", () => {
  let redis: ThrowawayRedis;
  let emulator: PlatformEmulator;
  const bridges: Array<{ name: string; bridge: BridgeProcess; port: number; pids: number[] }> = [];

  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
    emulator = createPlatformEmulator({ token: "platform-token" });
    const platformUrl = await emulator.start({ port: 0 });
    const [clusterPort, singlePort] = [await freePort(), await freePort()];
    const cluster = spawnBridge(config(platformUrl, redis.url, "{outage-cluster}", clusterPort), [
      "--processes",
      "2",
    ]);
    const single = spawnBridge(config(platformUrl, redis.url, "{outage-single}", singlePort));
    const started = await waitFor(
      () => {
        if (cluster.child.exitCode !== null) throw new Error(`exited early:\n${cluster.output()}`);
        return logLines(cluster, "scim-bridge started")[0];
      },
      { timeoutMs: 25_000, intervalMs: 100, what: `"scim-bridge started" from the primary` },
    );
    const clusterPids = (started.pids as number[]).slice().sort((a, b) => a - b);
    expect(clusterPids).toHaveLength(2);
    expect(childPids(cluster.child.pid!)).toEqual(clusterPids);
    await waitUntilReady(clusterPort, cluster, 25_000);
    await waitUntilReady(singlePort, single, 25_000);
    bridges.push(
      { name: "--processes 2", bridge: cluster, port: clusterPort, pids: clusterPids },
      { name: "one process", bridge: single, port: singlePort, pids: [single.child.pid!] },
    );
  }, 40_000);

  afterAll(async () => {
    for (const { bridge } of bridges) await disposeCluster(bridge);
    await emulator?.close();
    await redis?.dispose();
  }, 20_000);

  /** The bridge processes of each bridge now (the primary's children, or the process itself). */
  const pidsNow = (b: (typeof bridges)[number]) =>
    b.name === "one process"
      ? b.bridge.child.exitCode === null
        ? [b.bridge.child.pid!]
        : []
      : childPids(b.bridge.child.pid!);

  const createUser = (port: number, userName: string) =>
    call(port, {
      method: "POST",
      path: "/scim/v2/okta/Users",
      headers: SCIM_HEADERS,
      body: { schemas: [USER_SCHEMA], userName },
    });

  it("keeps every process through the outage, answers 503 meanwhile, and recovers by itself", async () => {
    for (const b of bridges)
      expect(status(await createUser(b.port, `before.${b.port}@example.com`))).toBe(201);

    await redis.stop();
    const until = Date.now() + OUTAGE_MS;
    let rounds = 0;
    while (Date.now() < until) {
      for (const b of bridges) {
        // Fresh connections: in the cluster they go to each process in turn.
        for (let i = 0; i < 2; i++) {
          expect(status(await call(b.port, { path: "/healthz" })), b.name).toBe(200);
          expect(status(await call(b.port, { path: "/readyz" })), b.name).toBe(503);
          expect(status(await createUser(b.port, `down.${b.port}.${rounds}@example.com`)), b.name).toBe(503);
        }
        // Answered once its Redis reads give up (1.5 s).
        expect(status(await call(b.port, { path: "/metrics" })), b.name).toBe(200);
        expect(pidsNow(b), b.name).toEqual(b.pids);
      }
      rounds += 1;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(rounds).toBeGreaterThanOrEqual(2);

    await redis.start();
    const back = Date.now();
    for (const b of bridges) {
      // Every process of the bridge: four fresh connections in a row answered 200.
      await waitFor(
        async () => {
          for (let i = 0; i < 4; i++)
            if (status(await call(b.port, { path: "/readyz" })) !== 200) return false;
          return true;
        },
        { timeoutMs: 10_000, intervalMs: 100, what: `${b.name} ready again` },
      );
    }
    expect(Date.now() - back).toBeLessThan(5_000);
    const after: string[] = [];
    for (const b of bridges) {
      for (let i = 0; i < 4; i++) {
        const userName = `after.${b.port}.${i}@example.com`;
        expect(status(await createUser(b.port, userName)), b.name).toBe(201);
        after.push(userName);
      }
    }
    // The workers resumed: writes taken after the outage reach the platform.
    await waitFor(
      () => {
        const { users } = emulator.state() as unknown as { users: Array<{ userName: string }> };
        const onPlatform = new Set(users.map((u) => u.userName.toLowerCase()));
        return after.every((u) => onPlatform.has(u));
      },
      { timeoutMs: 15_000, intervalMs: 200, what: "the writes after the outage on the platform" },
    );
    for (const b of bridges) {
      expect(pidsNow(b), b.name).toEqual(b.pids);
      expect(exitLines(b.bridge).join("\n"), b.name).toBe("");
    }
  }, 60_000);
});
