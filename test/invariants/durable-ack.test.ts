import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { freePort } from "../helpers/throwaway-redis.js";
import { type BridgeProcess, call, spawnBridge, waitUntilReady } from "../e2e/production/bridge-process.js";
import {
  E2E_ADMIN_TOKEN,
  GROUP_SCHEMA,
  PATCH_SCHEMA,
  PLATFORM_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../helpers/redis-test-prefix.js";

const USERS = 8;

/**
 * Invariant 1 (durable acknowledgement): the only bridge process (`--role api`, a real child
 * process) acknowledges creates, a deactivation and a group, and is killed with SIGKILL right after
 * the last 2xx. A fresh bridge on the same Redis delivers every acknowledged change, each platform
 * object exactly once. (Killing a worker mid-job is test/e2e/sync/crash-recovery.test.ts; a killed
 * `--role all` process converges too, but only after BullMQ's 30 s job lock expires.)
 */
describe("a 2xx survives the death of every bridge process", () => {
  let h: TestBridge;
  let child: BridgeProcess | undefined;
  beforeAll(async () => {
    h = await startTestBridge("inv-durable", { start: false });
  });
  afterAll(async () => {
    await child?.dispose();
    await h?.close();
  });

  it("a fresh bridge delivers what the killed one acknowledged", async () => {
    const port = await freePort();
    const config: ConfigInput = {
      platform: {
        baseUrl: h.platformUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
      },
      admin: { tokens: [E2E_ADMIN_TOKEN] },
      redis: { url: TEST_REDIS_URL, prefix: h.prefix },
      server: { port, host: "127.0.0.1" },
      sync: {
        concurrency: 4,
        attempts: 8,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 500,
        sweepAfterMs: 1_000,
      },
      logLevel: "silent",
      sources: { okta: { tokens: ["okta-token"] } },
    };
    // The API process is the only bridge process: no worker runs until it is dead.
    child = spawnBridge(config, ["--role", "api"]);
    await waitUntilReady(port, child, 20_000);

    const headers = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const ids: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const res = await call(port, {
        method: "POST",
        path: "/scim/v2/okta/Users",
        headers,
        body: { schemas: [USER_SCHEMA], userName: `durable${i}@example.com`, active: true },
      });
      expect(res).toMatchObject({ kind: "answer", status: 201 });
      if (res.kind === "answer") ids.push(JSON.parse(res.body).id);
    }
    const off = await call(port, {
      method: "PATCH",
      path: `/scim/v2/okta/Users/${ids[0]}`,
      headers,
      body: { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "active", value: false }] },
    });
    expect(off).toMatchObject({ kind: "answer", status: 200 });
    const group = await call(port, {
      method: "POST",
      path: "/scim/v2/okta/Groups",
      headers,
      body: {
        schemas: [GROUP_SCHEMA],
        displayName: "Durable",
        members: ids.slice(0, 3).map((value) => ({ value })),
      },
    });
    expect(group).toMatchObject({ kind: "answer", status: 201 });
    child.child.kill("SIGKILL");
    await child.exited;
    expect(h.emulator.state().users).toHaveLength(0); // nothing was delivered before the kill

    await h.start();
    await h.waitForIdle(20_000);
    const users = h.emulator.state().users;
    for (let i = 0; i < USERS; i++) {
      const same = users.filter((u) => u.userName === `durable${i}@example.com`);
      expect(same).toHaveLength(1);
      expect(same[0]?.active).toBe(i !== 0);
    }
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Durable");
    expect(groups).toHaveLength(1);
    const pids = ids
      .slice(0, 3)
      .map((_, i) => users.find((u) => u.userName === `durable${i}@example.com`)?.id);
    expect(
      groups[0]?.members.map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort(),
    ).toEqual(pids.sort());
  }, 30_000);
});
