/**
 * Faults-m: a deleted user's dead letter discarded while a sync of that tombstone is already
 * running (an admin's resync of it, paused while it reads the platform user). The admin gave the
 * platform user up: the sync that read the tombstone before the discard must not deprovision it
 * afterwards, and when everything has settled nothing of the deleted user is left in Redis (no
 * record, no claim, no status, no dirty marker: invariant 6), and no letter comes back. A
 * deprovisioning already on the wire when the admin discards cannot be called back: that one
 * lands (documented on AdminService.releaseTombstone); one not yet sent is never sent.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let proxy: FaultProxy;
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  h = await startTestBridge("faults-m-discard-during-sync", {
    sources: { okta: { tokens: ["okta-token"] } },
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
const letters = async () => (await h.admin().get("/dead-letters")).body.items as Letter[];
const hasLetter = async (id: string) => (await letters()).some((l) => l.ref.id === id);

/**
 * A deleted user whose deprovisioning failed for good (its letter), the platform now willing, and
 * an admin's confirmed resync of it handed to a sync that is held while it reads the platform user.
 */
async function tombstoneSyncHeld(userName: string) {
  const okta = h.scim("okta");
  const old = await okta.createUser(userName, { displayName: "Old" });
  await h.waitForIdle();
  const pid = h.platformUsers().get(userName)?.id as string;
  h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
  expect((await okta.deleteUser(old.id)).status).toBe(204);
  await waitFor(() => hasLetter(old.id), { what: "the deleted user's letter" });
  await h.waitForIdle();
  h.emulator.data.bulkFailures.delete(pid);

  // The resync deprovisions every user the source has: it waits for a confirmation.
  const before = proxy.calls.length;
  const op = await h.admin().post("/sources/okta/resync", { users: [old.id] });
  expect(op.status).toBe(202);
  const opId = op.body.id as string;
  await waitFor(
    async () => (await h.admin().get(`/resyncs/${opId}`)).body.state === "awaiting-confirmation",
    {
      what: "the resync to wait for its confirmation",
    },
  );
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  // Confirmed, the resync reads the user once more before it hands it over: the sync's read is the next.
  let reads = 0;
  let reached = false;
  proxy.rule = (call) => {
    if (call.method !== "GET" || !call.path.endsWith(`/Users/${pid}`) || reached) return undefined;
    if (++reads < 2) return undefined;
    reached = true;
    return { kind: "hold", until: held };
  };
  expect((await h.admin().post(`/resyncs/${opId}/confirm`)).status).toBeLessThan(300);
  await waitFor(async () => reached, { what: "the sync's read of the platform user" });
  return {
    old,
    pid,
    release: () => {
      release();
      proxy.rule = undefined;
    },
    bulkCalls: () =>
      proxy.calls.slice(before).filter((c) => c.method === "POST" && c.path.endsWith("/users/bulk")),
  };
}

/** Nothing of the deleted user is left: no letter, no status, no key but the admin's own records. */
async function forgotten(id: string): Promise<void> {
  expect(await hasLetter(id)).toBe(false);
  expect((await h.admin().get(`/sources/okta/users/${id}`)).status).toBe(404);
  const traces = await redisTraces(redis, h.prefix, [id]);
  // Only the admin's records still name it: the audit log, and the resync it confirmed.
  const admins = [`${h.prefix}:admin:audit`, `${h.prefix}:resync:op:`];
  expect(traces.filter((trace) => !admins.some((p) => trace.startsWith(p)))).toEqual([]);
  expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });
}

describe("faults-m: a tombstone's letter discarded while its sync runs", () => {
  it("the running sync does not deprovision the released user, and leaves no keys and no dirty marker", async () => {
    const userName = "discard.running.m@example.com";
    const run = await tombstoneSyncHeld(userName);
    // Meanwhile the admin gives the user up.
    expect((await h.admin().delete(`/dead-letters/okta/user/${run.old.id}`)).status).toBe(200);
    run.release();
    await h.waitForIdle();

    // The platform user is left as it was: never deprovisioned after the admin let it go.
    expect(h.platformUsers().get(userName)).toMatchObject({ id: run.pid, active: true, displayName: "Old" });
    expect(JSON.stringify(run.bulkCalls().map((c) => c.body))).not.toContain(run.pid);
    await forgotten(run.old.id);
  }, 60_000);

  it("the running sync failing for good after the discard: its letter does not come back, nothing is left", async () => {
    const userName = "discard.failing.m@example.com";
    const run = await tombstoneSyncHeld(userName);
    expect((await h.admin().delete(`/dead-letters/okta/user/${run.old.id}`)).status).toBe(200);
    // The held read is refused for good once it reaches the platform.
    h.emulator.addFault({ type: "error", status: 403, count: 1, match: { operation: "getUser" } });
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    run.release();
    await h.waitForIdle();

    expect(
      h.emulator.requests().some((r) => r.seq > since && r.operation === "getUser" && r.fault === "error"),
    ).toBe(true);
    expect(h.platformUsers().get(userName)).toMatchObject({ id: run.pid, active: true, displayName: "Old" });
    await forgotten(run.old.id);
  }, 60_000);

  it("the discard's answer says the platform user was released, as the admin OpenAPI description says", async () => {
    const okta = h.scim("okta");
    const userName = "discard.answer.m@example.com";
    const old = await okta.createUser(userName);
    await h.waitForIdle();
    const pid = h.platformUsers().get(userName)?.id as string;
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    expect((await okta.deleteUser(old.id)).status).toBe(204);
    await waitFor(() => hasLetter(old.id), { what: "the deleted user's letter" });
    await h.waitForIdle();

    const answer = await h.admin().delete(`/dead-letters/okta/user/${old.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ discarded: true, released: true });
    const openapi = (await h.http.get("/admin/v1/openapi.json")).body;
    const schema =
      openapi.paths["/dead-letters/{source}/{kind}/{id}"].delete.responses["200"].content["application/json"]
        .schema;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    expect(ajv.validate(schema, answer.body)).toBe(true);
    expect(schema.properties.released.description).toMatch(/orphan/);
    expect(ajv.validate(schema, { discarded: true })).toBe(true);
    await h.waitForIdle();
  }, 60_000);

  it("a deleted group: the running sync does not delete the released platform group, and nothing is left", async () => {
    const okta = h.scim("okta");
    const displayName = "Discard Running M";
    const group = await okta.createGroup(displayName, []);
    await h.waitForIdle();
    const platformGroup = () =>
      (h.emulator.state() as unknown as { groups: Array<{ id: string; displayName: string }> }).groups.find(
        (g) => g.displayName === displayName,
      );
    const gid = platformGroup()?.id as string;
    expect(gid).toBeDefined();
    // Its deletion refused for good: its letter.
    h.emulator.addFault({ type: "error", status: 403, count: 1, match: { operation: "deleteGroup" } });
    expect((await okta.deleteGroup(group.id)).status).toBe(204);
    await waitFor(() => hasLetter(group.id), { what: "the deleted group's letter" });
    await h.waitForIdle();

    // An admin's resync of it reads the platform group: held there.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached = false;
    proxy.rule = (call) => {
      if (call.method !== "GET" || !call.path.endsWith(`/Groups/${gid}`) || reached) return undefined;
      reached = true;
      return { kind: "hold", until: held };
    };
    expect((await h.admin().post("/sources/okta/resync", { groups: [group.id] })).status).toBe(202);
    await waitFor(async () => reached, { what: "the sync's read of the platform group" });
    expect((await h.admin().delete(`/dead-letters/okta/group/${group.id}`)).body).toEqual({
      discarded: true,
      released: true,
    });
    release();
    proxy.rule = undefined;
    await h.waitForIdle();

    expect(platformGroup()?.id).toBe(gid);
    expect(await hasLetter(group.id)).toBe(false);
    expect((await h.admin().get(`/sources/okta/groups/${group.id}`)).status).toBe(404);
    const traces = await redisTraces(redis, h.prefix, [group.id]);
    const admins = [`${h.prefix}:admin:audit`, `${h.prefix}:resync:op:`];
    expect(traces.filter((trace) => !admins.some((p) => trace.startsWith(p)))).toEqual([]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });
  }, 60_000);
});
