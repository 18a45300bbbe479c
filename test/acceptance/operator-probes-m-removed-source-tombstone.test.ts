/**
 * Probes m (the operator's surface): a deleted user whose deprovisioning failed for good (its dead
 * letter), then its source taken out of the configuration, then the letter discarded. The admin
 * gives the platform user up (AdminService.releaseTombstone): nothing is written to the platform,
 * and what the bridge recorded of the deleted user goes. It was a letter that came back: the
 * release asked for a sync of the now absent entity, which a source no longer configured cannot
 * run (`unknown_source`), so the discarded letter was written again (and the deleted user's status,
 * applied record and claim stayed).
 */
import { Redis } from "ioredis";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/bridge.js";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { buildConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/observability/logger.js";
import { E2E_ADMIN_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let bridge: RunningBridge;
let userId: string;
let platformId: string;
const userName = "retired.tombstone.m@example.com";
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });

const admin = () => {
  const http = supertest(bridge.url as string);
  const auth = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
  return {
    get: (path: string) => http.get(`/admin/v1${path}`).set(auth),
    delete: (path: string) => http.delete(`/admin/v1${path}`).set(auth),
  };
};

beforeAll(async () => {
  await redis.connect();
  h = await startTestBridge("probes-m-removed-source-tombstone");
  const entra = h.scim("entra");
  userId = (await entra.createUser(userName)).id;
  await h.waitForIdle();
  platformId = h.platformUsers().get(userName)?.id as string;
  h.emulator.drift({ action: "failBulkFor", userId: platformId, code: "FORBIDDEN" });
  expect((await entra.deleteUser(userId)).status).toBe(204);
  await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 1, {
    what: "the deleted user's dead letter",
  });
  await h.waitForIdle();
  await h.stop();
  // The same Redis and prefix, with entra taken out of the configuration.
  const input = JSON.parse(JSON.stringify(h.config)) as ConfigInput & { sources: Record<string, unknown> };
  delete input.sources.entra;
  bridge = await startBridge(buildConfig(input), {
    role: "all",
    logger: createLogger("silent", {}),
  });
}, 30_000);
afterAll(async () => {
  await bridge?.close();
  await h?.close();
  await redis.quit();
});

describe("probes m: a deleted user's letter of a source taken out of the configuration, discarded", () => {
  it("the letter is gone for good, the platform user untouched, and nothing of the user is left", async () => {
    expect((await admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 1 });
    expect((await admin().delete(`/dead-letters/entra/user/${userId}`)).status).toBe(200);
    await waitFor(async () => (await admin().get("/status")).body.idle === true, {
      what: "idle after the discard",
    });
    // Several sweeps later (500 ms apart): no letter came back.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await admin().get("/status")).body).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });
    expect((await admin().get("/dead-letters")).body.items).toEqual([]);
    expect(h.platformUsers().get(userName)).toMatchObject({ id: platformId, active: true });
    const traces = await redisTraces(redis, h.prefix, [userId]);
    expect(traces.filter((trace) => !trace.startsWith(`${h.prefix}:admin:audit`))).toEqual([]);
  }, 30_000);
});
