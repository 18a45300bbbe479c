/**
 * Faults-i: the platform's answers under faults, end to end (the whole bridge, the strict emulator
 * behind a fault proxy). The client retries once (platform.maxRetries 1) and a job has 3 attempts,
 * so a fault that outlasts the client reaches the job layer.
 * - 429 with a Retry-After (seconds, and an HTTP-date) longer than the job's backoff: no call goes
 *   before it, no attempt is spent, no dead letter.
 * - 5xx answered by a gateway with an HTML page: retried; one that never heals is a dead letter
 *   whose reason names the status, not the page.
 * - connections reset in the middle of an answer to a read (a reconciliation's listing, a
 *   resync's getUser): read again, the run and the resync succeed.
 * - writes the platform applies whose answer comes after the client's timeout (late answers):
 *   one object, the last change wins, no dead letter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogEntry } from "../../src/platform/emulator/request-recorder.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const HTML =
  "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";

describe("faults-i: platform answers under faults", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = new FaultProxy();
    const proxyUrl = await proxy.start();
    h = await startTestBridge("faults-i-answers", {
      start: false,
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        platform: {
          baseUrl: proxyUrl,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 1_000,
          maxRetries: 1,
        },
        sync: {
          concurrency: 8,
          attempts: 3,
          lifecycleBatchWindowMs: 50,
          sweepIntervalMs: 500,
          sweepAfterMs: 1_000,
        },
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
      },
    });
    proxy.upstream = h.platformUrl;
    await h.start();
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
  const arrival = (r: RequestLogEntry) => Date.parse(r.time) - r.durationMs;

  /** Each request answered with a Retry-After, and the first request of `operation` after it. */
  function pauses(operation: string, since: number) {
    const log = h.emulator.requests();
    return log
      .filter((r) => r.seq > since && r.operation === operation && r.retryAfter !== undefined)
      .map((paused) => {
        const wait = /^\d+$/.test(paused.retryAfter ?? "")
          ? Number(paused.retryAfter) * 1000
          : Date.parse(paused.retryAfter ?? "") - Date.parse(paused.time);
        const next = log.find((r) => r.seq > paused.seq && r.operation === operation);
        return { answeredAt: Date.parse(paused.time), wait, next };
      });
  }

  for (const asDate of [false, true]) {
    it(`429 with a Retry-After ${asDate ? "HTTP-date" : "in seconds"} longer than the job's backoff, on a create and on a bulk call`, async () => {
      const tag = asDate ? "date" : "secs";
      const scim = h.scim("okta");
      const off = await scim.createUser(`ra.${tag}.off@example.com`);
      await h.waitForIdle();
      const since = h.emulator.requests().at(-1)?.seq ?? 0;
      h.emulator.setFaults([
        {
          type: "error",
          status: 429,
          retryAfterSeconds: 2,
          retryAfterDate: asDate,
          count: 3,
          match: { operation: "createUser" },
        },
        {
          type: "error",
          status: 429,
          retryAfterSeconds: 2,
          retryAfterDate: asDate,
          count: 3,
          match: { operation: "bulkUsers" },
        },
      ]);
      await scim.createUser(`ra.${tag}.new@example.com`);
      expect((await scim.patchUser(off.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
        200,
      );
      await h.waitForIdle(60_000);
      const users = h.platformUsers();
      expect(users.get(`ra.${tag}.new@example.com`)?.active).toBe(true);
      expect(users.get(`ra.${tag}.off@example.com`)?.active).toBe(false);
      expect(
        h.emulator.state().users.filter((u) => String(u["userName"]).startsWith(`ra.${tag}.new`)),
      ).toHaveLength(1);
      expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
      for (const operation of ["createUser", "bulkUsers"]) {
        const seen = pauses(operation, since);
        expect(seen.length, operation).toBe(3);
        for (const p of seen) {
          expect(p.next, operation).toBeDefined();
          // Never before the platform's pause (timer and clock slack of 15 ms).
          expect(arrival(p.next as RequestLogEntry) - p.answeredAt, operation).toBeGreaterThanOrEqual(
            p.wait - 15,
          );
        }
      }
    }, 90_000);
  }

  it("a gateway's HTML 502 is retried; an HTML 503 that never heals is a dead letter naming the status", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("html.a@example.com");
    const b = await scim.createUser("html.b@example.com");
    await h.waitForIdle();
    const aPid = h.platformUsers().get("html.a@example.com")?.id as string;
    const bPid = h.platformUsers().get("html.b@example.com")?.id as string;
    let aHits = 0;
    proxy.rule = (call) => {
      if (call.method !== "PATCH") return undefined;
      if (call.path.endsWith(aPid) && aHits++ < 3) return { kind: "answerRaw", status: 502, body: HTML };
      if (call.path.endsWith(bPid))
        return {
          kind: "answerRaw",
          status: 503,
          body: HTML.replaceAll("502 Bad Gateway", "503 Service Temporarily Unavailable"),
        };
      return undefined;
    };
    for (const [id, name] of [
      [a.id, "A html"],
      [b.id, "B html"],
    ] as const) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "displayName", value: name }])).status).toBe(
        200,
      );
    }
    await waitFor(async () => (await status()).deadLetters === 1, {
      timeoutMs: 30_000,
      what: "b's dead letter",
    });
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(h.platformUsers().get("html.a@example.com")?.displayName).toBe("A html");
    const letters = (await h.admin().get("/dead-letters")).body.items as Array<{
      ref: { id: string };
      code: string;
      reason: string;
    }>;
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ ref: { id: b.id }, code: "platform_server" });
    expect(letters[0]?.reason).toMatch(/503/);
    expect(letters[0]?.reason).not.toMatch(/<|html|nginx/i);
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBeLessThan(300);
    await h.waitForIdle(30_000);
    expect(h.platformUsers().get("html.b@example.com")?.displayName).toBe("B html");
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);

  /**
   * RFC 9110 §15.5.9: a 408 says the server (or a load balancer in front of it) did not receive
   * the whole request in time and closed the connection; the client may repeat the request. It
   * says nothing about the entity: retried like a timeout, never a dead letter.
   */
  it("a 408 Request Timeout from the platform's load balancer is retried, not a dead letter", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("req.timeout@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("req.timeout@example.com")?.id as string;
    let hits = 0;
    proxy.rule = (call) =>
      call.method === "PATCH" && call.path.endsWith(pid) && hits++ < 3
        ? {
            kind: "answerRaw",
            status: 408,
            body: HTML.replaceAll("502 Bad Gateway", "408 Request Time-out"),
            headers: { Connection: "close" },
          }
        : undefined;
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "After 408" }])).status,
    ).toBe(200);
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(hits).toBeGreaterThanOrEqual(3);
    expect(h.platformUsers().get("req.timeout@example.com")?.displayName).toBe("After 408");
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    expect((await h.admin().get(`/sources/okta/users/${u.id}`)).body.state).toBe("synced");
  }, 60_000);

  it("connections reset in the middle of answers to reads: a reconciliation and a resync succeed", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("reset.u@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("reset.u@example.com")?.id as string;
    // Drift behind the bridge's back, for the run to find and repair.
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    h.emulator.setFaults([
      // One reset per call (the client retries once here: two in a row would fail the run, visibly).
      {
        type: "cutOff",
        contentLength: false,
        count: 1,
        match: { method: "GET", path: "/api/scim/v2/Users" },
      },
      { type: "cutOff", contentLength: true, count: 1, match: { operation: "getUser" } },
    ]);
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = (await h.admin().get(`/reconcile-runs/${started.body.runId}`)).body;
        return ["succeeded", "failed"].includes(got.state) ? got : undefined;
      },
      { timeoutMs: 30_000, what: "the run to end" },
    );
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    expect(run.counts.activeMismatch).toBe(1);
    await h.waitForIdle(30_000);
    expect(h.platformUsers().get("reset.u@example.com")?.active).toBe(true);
    const resync = await h.admin().post("/sources/okta/resync", { users: [u.id] });
    expect(resync.status).toBe(202);
    await h.waitForIdle(30_000);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    expect(h.emulator.violations()).toEqual([]);
    expect(h.emulator.faults()).toEqual([]); // both resets fired
  }, 60_000);

  it("writes applied whose answers come after the client's timeout: one user and group, the last change, no dead letter", async () => {
    const scim = h.scim("okta");
    const late = new Set<string>();
    proxy.rule = (call) => {
      const body = call.body as { userName?: string; Operations?: Array<{ value?: unknown }> } | undefined;
      const key = `${call.method} ${call.path} ${body?.userName ?? ""}`;
      const first = !late.has(key);
      if (
        call.method === "POST" &&
        call.path === "/api/scim/v2/Users" &&
        body?.userName === "late.c@example.com" &&
        first
      ) {
        late.add(key);
        return { kind: "delayAnswer", ms: 1_500 };
      }
      if (call.method === "PATCH" && JSON.stringify(body).includes("Late first") && first) {
        late.add(key);
        return { kind: "delayAnswer", ms: 1_500 };
      }
      if (call.method === "POST" && call.path === "/api/scim/v2/Groups" && first) {
        late.add(key);
        return { kind: "delayAnswer", ms: 1_500 };
      }
      if (call.method === "POST" && call.path === "/api/v1/users/bulk" && first) {
        late.add(key);
        return { kind: "delayAnswer", ms: 1_500 };
      }
      return undefined;
    };
    const c = await scim.createUser("late.c@example.com");
    const d = await scim.createUser("late.d@example.com");
    await waitFor(() => h.platformUsers().get("late.d@example.com")?.id, { what: "d on the platform" });
    expect(
      (await scim.patchUser(d.id, [{ op: "replace", path: "displayName", value: "Late first" }])).status,
    ).toBe(200);
    await waitFor(() => [...late].some((k) => k.startsWith("PATCH")), { what: "the late PATCH" });
    const team = await scim.createGroup("Late Team", [c.id, d.id]);
    expect(
      (await scim.patchUser(d.id, [{ op: "replace", path: "displayName", value: "Late last" }])).status,
    ).toBe(200);
    expect((await scim.patchUser(c.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await waitFor(() => [...late].some((k) => k.includes("/bulk")), {
      what: "the late bulk call",
      timeoutMs: 20_000,
    });
    expect((await scim.patchUser(c.id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await h.waitForIdle(40_000);
    proxy.rule = undefined;
    const named = (n: string) => h.emulator.state().users.filter((u) => u["userName"] === n);
    expect(named("late.c@example.com").map((u) => u["active"])).toEqual([true]);
    expect(named("late.d@example.com").map((u) => u["displayName"])).toEqual(["Late last"]);
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Late Team");
    expect(groups).toHaveLength(1);
    expect(groups[0]?.members).toHaveLength(2);
    expect((await h.admin().get(`/sources/okta/groups/${team.id}`)).body.state).toBe("synced");
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    expect(h.emulator.violations()).toEqual([]);
  }, 90_000);
});
