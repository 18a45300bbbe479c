/**
 * Review m1: a deleted embed-tenant group's dead letter discarded while a sync of that tombstone
 * is already running (an admin's resync of it, held while it reads the platform's embed group).
 * The admin gave the embed group up (AdminService.releaseTombstone): as for a workspace group
 * (faults-m), the running sync must not delete it afterwards, and nothing of the group is left.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let proxy: FaultProxy;
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
const TENANT = "rm1";

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  h = await startTestBridge("review-m1-discard-embed", {
    sources: { acme: { tokens: ["acme-token"], target: { embedTenant: TENANT } } },
    config: {
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
      },
    },
    start: false,
  });
  proxy.upstream = h.platformUrl;
  await h.start();
  await redis.connect();
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await redis.quit();
});

type Letter = { ref: { source: string; kind: string; id: string }; code: string };
const hasLetter = async (id: string) =>
  ((await h.admin().get("/dead-letters")).body.items as Letter[]).some((l) => l.ref.id === id);

type Tenant = { name: string; groups: Array<{ id: string; name: string }> };
const embedGroup = (name: string) =>
  (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants
    .find((t) => t.name === TENANT)
    ?.groups.find((g) => g.name === name);

describe("review-m1: a deleted embed group's letter discarded while its sync runs", () => {
  it("the running sync does not delete the released embed group, and nothing of it is left", async () => {
    const acme = h.scim("acme");
    const name = "Discard Running Embed M1";
    // No members: a resync that would take embed users out of it waits for a confirmation.
    const group = await acme.createGroup(name, []);
    await h.waitForIdle();
    const gid = embedGroup(name)?.id as string;
    expect(gid).toBeDefined();
    // Its deletion refused for good: its letter.
    h.emulator.addFault({ type: "error", status: 403, count: 1, match: { operation: "deleteEmbedGroup" } });
    expect((await acme.deleteGroup(group.id)).status).toBe(204);
    await waitFor(() => hasLetter(group.id), { what: "the deleted embed group's letter" });
    await h.waitForIdle();

    // An admin's resync of it: its sync reads the platform's embed group, held there.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached = false;
    proxy.rule = (call) => {
      if (call.method !== "GET" || !call.path.endsWith(`/groups/${gid}`) || reached) return undefined;
      reached = true;
      return { kind: "hold", until: held };
    };
    expect((await h.admin().post("/sources/acme/resync", { groups: [group.id] })).status).toBe(202);
    await waitFor(async () => reached, { what: "the sync's read of the embed group" }).catch((e) => {
      console.log(JSON.stringify(proxy.calls.slice(-15).map((c) => [c.method, c.path])), gid);
      throw e;
    });
    expect((await h.admin().delete(`/dead-letters/acme/group/${group.id}`)).body).toEqual({
      discarded: true,
      released: true,
    });
    release();
    proxy.rule = undefined;
    await h.waitForIdle();

    // Left as it was: the admin let it go before the running sync could delete it.
    expect(embedGroup(name)?.id).toBe(gid);
    expect(await hasLetter(group.id)).toBe(false);
    expect((await h.admin().get(`/sources/acme/groups/${group.id}`)).status).toBe(404);
    const traces = await redisTraces(redis, h.prefix, [group.id]);
    const admins = [`${h.prefix}:admin:audit`, `${h.prefix}:resync:op:`];
    expect(traces.filter((trace) => !admins.some((p) => trace.startsWith(p)))).toEqual([]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });
  }, 60_000);
});
