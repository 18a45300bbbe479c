import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/throwaway-redis.js";
import { type BridgeProcess, spawnBridge } from "./bridge-process.js";

/**
 * A bridge that cannot reach Redis at start exits 1 at once (the orchestrator restarts it) instead
 * of hanging with a client that retries for ever, and names the host without the password.
 */
describe("start without Redis", () => {
  let bridge: BridgeProcess | undefined;

  afterAll(async () => {
    await bridge?.dispose();
  });

  it("exits 1 quickly, naming the Redis host but not its password", async () => {
    const redisPort = await freePort();
    bridge = spawnBridge(
      {
        platform: { baseUrl: "http://127.0.0.1:9", token: "platform-token", allowInsecureHttp: true },
        server: { port: await freePort(), host: "127.0.0.1" },
        sources: { okta: { tokens: ["okta-token"] } },
      },
      [],
      { REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${redisPort}` },
    );
    const started = Date.now();
    const exit = await bridge.exited;
    expect(exit, bridge.output()).toEqual({ code: 1, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(bridge.output()).toContain(`Redis at 127.0.0.1:${redisPort} is not reachable at start`);
    expect(bridge.output()).not.toContain("hunter2-secret");
  }, 15_000);
});
