/**
 * Faults-n: one user's lifecycle flapping (deactivate, activate, deactivate) while its bulk calls
 * are held on the way to the platform, answered late, or refused with a 503, and a user deleted
 * and created again under the same userName while the bulk call that deprovisions the old one
 * fails. Invariant 2: once the platform answers again and the queues drain, the platform holds
 * the last desired state, and nobody is wrongly left active or inactive.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LifecycleEntry } from "../../src/sync/lifecycle-entry.js";
import { RedisSyncStateStore } from "../../src/sync/redis-sync-state-store.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

const BULK_PATH = "/api/v1/users/bulk";

let h: TestBridge;
let proxy: FaultProxy;
let redis: Redis;
let state: RedisSyncStateStore;

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  h = await startTestBridge("faults-n-user-flapping", {
    sources: {
      okta: { tokens: ["okta-token"] },
      gone: { tokens: ["gone-token"], onDelete: "delete" },
    },
    config: {
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
        // Long enough that a call the proxy holds stays on the wire while a test queues what it
        // queues behind it (129 deactivations took more than 4 s on a loaded machine: the held
        // call timed out, was sent again and settled, and the batch never held all 130).
        timeoutMs: 30_000,
        maxRetries: 4,
      },
    },
    start: false,
  });
  proxy.upstream = h.platformUrl;
  await h.start();
  redis = new Redis(TEST_REDIS_URL);
  state = new RedisSyncStateStore(redis, h.prefix);
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await redis?.quit();
});

type PlatformUser = { id: string; userName: string; active: boolean };
const named = (userName: string) =>
  (h.emulator.state() as unknown as { users: PlatformUser[] }).users.filter(
    (u) => u.userName.toLowerCase() === userName.toLowerCase(),
  );
const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
const setActive = async (source: string, id: string, active: boolean) =>
  expect(
    (await h.scim(source).patchUser(id, [{ op: "replace", path: "active", value: active }])).status,
  ).toBe(200);
/** Waits until the user's queued lifecycle change is `action` (its sync has queued it). */
const queued = (platformId: string, action: LifecycleEntry["action"]) =>
  waitFor(async () => (await state.getLifecycle(platformId))?.entry.action === action, {
    what: `a queued ${action}`,
  });
const isBulk = (c: { method: string; path: string }) => c.method === "POST" && c.path === BULK_PATH;
const bulkAction = (body: unknown) => (body as { action?: string } | undefined)?.action;

describe("faults-n: one user's lifecycle flapping under slow and failing bulk calls", () => {
  for (const last of [false, true]) {
    const flips = last ? [false, true, false, true] : [false, true, false];
    it(`${flips.map((a) => (a ? "activate" : "deactivate")).join(", ")}: the first bulk call held on the wire, the next one 503: ends ${last ? "active" : "inactive"}`, async () => {
      const userName = `flap.held.${flips.length}.n@example.com`;
      const u = await h.scim("okta").createUser(userName);
      await h.waitForIdle();
      const pid = named(userName)[0]?.id as string;
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let reached = false;
      let failed = 0;
      proxy.rule = (c) => {
        if (!isBulk(c)) return undefined;
        if (!reached) {
          reached = true;
          return { kind: "hold", until: held };
        }
        // The first call after the held one is refused: the flush job retries it.
        if (failed++ === 0) return { kind: "answer", status: 503 };
        return undefined;
      };
      try {
        await setActive("okta", u.id, false);
        await waitFor(() => reached, { what: "the DEACTIVATE on the wire" });
        // While it is held, the identity provider changes its mind, and again (each one queued).
        for (const active of flips.slice(1)) {
          await setActive("okta", u.id, active);
          await queued(pid, active ? "ACTIVATE" : "DEACTIVATE");
        }
        release();
        await h.waitForIdle();
      } finally {
        proxy.rule = undefined;
        release();
      }
      expect(failed).toBeGreaterThan(0);
      expect(named(userName).map((x) => x.active)).toEqual([last]);
      expect(await state.getLifecycle(pid)).toBeNull();
      expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
      // A converged user: a resync writes nothing.
      const since = h.emulator.counters().writes;
      expect((await h.admin().post("/sources/okta/resync", { users: [u.id] })).status).toBe(202);
      await h.waitForIdle();
      expect(h.emulator.counters().writes).toBe(since);
    }, 60_000);
  }

  /**
   * A user made `!to`, then set `to` (that bulk call applied, its answer slow), back, and `to`
   * again while it is answered: the user ends `to`, nothing a dead letter.
   */
  async function slowAnswerFlap(userName: string, to: boolean) {
    const action = (active: boolean) => (active ? "ACTIVATE" : "DEACTIVATE");
    const u = await h.scim("okta").createUser(userName, { active: !to });
    await h.waitForIdle();
    const pid = named(userName)[0]?.id as string;
    let first = true;
    // The first bulk call is applied at once and its answer takes 1.5 s (the client waits 30 s).
    proxy.rule = (c) => {
      if (!isBulk(c) || !first) return undefined;
      first = false;
      return { kind: "delayAnswer", ms: 1_500 };
    };
    try {
      await setActive("okta", u.id, to);
      await waitFor(() => !first, { what: `the ${action(to)} on the wire` });
      await setActive("okta", u.id, !to);
      await queued(pid, action(!to));
      await setActive("okta", u.id, to);
      await queued(pid, action(to));
      await h.waitForIdle();
    } finally {
      proxy.rule = undefined;
    }
    expect(named(userName).map((x) => x.active)).toEqual([to]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }

  it("deactivate applied, its answer slow; activate and deactivate meanwhile: ends inactive", async () => {
    await slowAnswerFlap("flap.slow.n@example.com", false);
  }, 60_000);

  it("activate applied, its answer slow; deactivate and activate meanwhile: ends active", async () => {
    await slowAnswerFlap("flap.slow.on.n@example.com", true);
  }, 60_000);
});

describe("faults-n: deleted and created again under the same userName, the deprovisioning failing", () => {
  for (const source of ["gone", "okta"] as const) {
    it(`${source === "gone" ? "onDelete delete" : "onDelete deactivate"}: the bulk call 503 for a while: one active platform user, the new entity's`, async () => {
      const userName = `recreate.${source}.n@example.com`;
      const scim = h.scim(source);
      const old = await scim.createUser(userName, { displayName: "Old" });
      await h.waitForIdle();
      const oldPid = named(userName)[0]?.id as string;
      let refused = 0;
      proxy.rule = (c) => {
        if (!isBulk(c) || refused >= 6) return undefined;
        refused++;
        return { kind: "answer", status: 503 };
      };
      try {
        expect((await scim.deleteUser(old.id)).status).toBe(204);
        const fresh = await scim.createUser(userName, { displayName: "New" });
        await h.waitForIdle(45_000);
        expect(refused).toBe(6);
        const users = named(userName) as Array<PlatformUser & { displayName?: string }>;
        expect(users.map((x) => ({ active: x.active, displayName: x.displayName }))).toEqual([
          { active: true, displayName: "New" },
        ]);
        if (source === "gone") expect(users[0]?.id).not.toBe(oldPid);
        const entity = (await h.admin().get(`/sources/${source}/users/${fresh.id}`)).body as {
          state: string;
          platformId?: string;
        };
        expect(entity).toMatchObject({ state: "synced", platformId: users[0]?.id });
        expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
        // The old user's deprovisioning was sent; nothing named the platform user since it is the new one's but an ACTIVATE.
        const deprovisioned = proxy.calls.filter(
          (c) => isBulk(c) && c.status === 200 && (c.body as { userIds: string[] }).userIds.includes(oldPid),
        );
        expect(deprovisioned.map((c) => bulkAction(c.body))[0]).toBe(
          source === "gone" ? "DELETE" : "DEACTIVATE",
        );
      } finally {
        proxy.rule = undefined;
      }
    }, 60_000);
  }
});

describe("faults-n: a 429 with Retry-After on a bulk call while two chunks wait and some users flip back", () => {
  it("no bulk call inside the pause; every user ends as its source wants it; no dead letter", async () => {
    const USERS = 130;
    const okta = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < USERS; i++) ids.push((await okta.createUser(`ra.chunk${i}.n@example.com`)).id);
    await h.waitForIdle(60_000);
    // The first deactivation's call is held while the others are queued behind it (two chunks).
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = true;
    proxy.rule = (c) => {
      if (!isBulk(c) || !holding) return undefined;
      holding = false;
      return { kind: "hold", until: held };
    };
    const want = new Map<number, boolean>(ids.map((_, i) => [i, false]));
    try {
      await setActive("okta", ids[0] as string, false);
      await waitFor(() => !holding, { what: "the first DEACTIVATE on the wire" });
      for (let i = 1; i < USERS; i++) await setActive("okta", ids[i] as string, false);
      await waitFor(async () => (await state.countLifecycle()) === USERS, {
        what: "every change queued",
        timeoutMs: 45_000,
      });
      const since = h.emulator.requests().at(-1)?.seq ?? 0;
      h.emulator.addFault({
        type: "error",
        status: 429,
        retryAfterSeconds: 2,
        count: 1,
        match: { operation: "bulkUsers" },
      });
      release();
      await waitFor(() => h.emulator.requests().some((r) => r.seq > since && r.status === 429), {
        what: "the 429",
      });
      // During the pause, some users are reactivated at the source.
      for (let i = 1; i <= 10; i++) {
        await setActive("okta", ids[i] as string, true);
        want.set(i, true);
      }
      await h.waitForIdle(60_000);
      const log = h.emulator.requests().filter((r) => r.seq > since && r.operation === "bulkUsers");
      const paused = log.find((r) => r.status === 429);
      expect(paused?.retryAfter).toBe("2");
      const pausedAt = Date.parse(paused?.time ?? "");
      for (const r of log.filter((x) => x.seq > (paused?.seq ?? 0))) {
        // Never inside the pause (timer and clock slack of 15 ms).
        expect(Date.parse(r.time) - r.durationMs - pausedAt).toBeGreaterThanOrEqual(2_000 - 15);
      }
    } finally {
      proxy.rule = undefined;
      release();
    }
    const users = h.platformUsers();
    const wrong = [...want]
      .filter(([i, active]) => users.get(`ra.chunk${i}.n@example.com`)?.active !== active)
      .map(([i, active]) => `${i}: want ${active}`);
    expect(wrong).toEqual([]);
    expect(await state.countLifecycle()).toBe(0);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);
});
