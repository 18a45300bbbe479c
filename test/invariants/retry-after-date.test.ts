import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogEntry } from "../../src/platform/emulator/request-recorder.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

/**
 * A platform 429 or 503 whose Retry-After is an HTTP-date (RFC 9110 §10.2.3), end to end: the
 * bridge's client waits until that date, about that long and not its own (much shorter) backoff,
 * and no request goes earlier: neither the retry nor, since the pause is shared, any other
 * platform call. Timed by the emulator's request log (arrival = logged time - duration).
 */
describe("a 429 or 503 with an HTTP-date Retry-After, end to end", () => {
  let h: TestBridge;
  /** Every platform user (SCIM JSON; userName and the fields these tests read). */
  const platformUsers = () =>
    h.emulator.state().users as Array<{ id: string; userName: string } & Record<string, unknown>>;
  beforeAll(async () => {
    h = await startTestBridge("inv-retry-after-date", {
      sources: { okta: { tokens: ["okta-token"] } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Timer and clock granularity (the date itself is whole seconds). */
  const SLACK_MS = 15;

  const arrival = (r: RequestLogEntry) => Date.parse(r.time) - r.durationMs;

  /** Each answered-with-a-date request and the requests that arrived after it was answered. */
  function pausesAndLaterRequests(operation: string) {
    const log = h.emulator.requests();
    return log
      .filter((r) => r.operation === operation && r.retryAfter !== undefined)
      .map((paused) => {
        const until = Date.parse(paused.retryAfter ?? "");
        // Calls already on their way when the pause was answered may still arrive just after it.
        const answeredAt = Date.parse(paused.time) + 100;
        const retry = log.find(
          (r) => r.seq > paused.seq && r.operation === operation && r.path === paused.path,
        );
        return {
          paused,
          until,
          retry,
          later: log.filter((r) => r.seq > paused.seq && arrival(r) > answeredAt),
        };
      });
  }

  async function expectSettled(): Promise<void> {
    await h.waitForIdle();
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    expect(h.emulator.faults()).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
  }

  it("429 on a create: the retry and every other call wait until the date, then all users land once", async () => {
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 2,
      retryAfterDate: true,
      count: 1,
      match: { operation: "createUser" },
    });
    const scim = h.scim("okta");
    const names = ["a", "b", "c", "d", "e"].map((n) => `${n}@dates.example`);
    await scim.createUser(names[0] ?? "");
    await waitFor(() => h.emulator.requests().some((r) => r.status === 429), { what: "the 429" });
    // Changes made during the pause wait for it too (it is shared through Redis).
    for (const name of names.slice(1)) await scim.createUser(name);
    await expectSettled();

    const [pause, ...more] = pausesAndLaterRequests("createUser");
    expect(more).toEqual([]);
    if (!pause) throw new Error("no 429 with a Retry-After was answered");
    expect(pause.paused).toMatchObject({ status: 429, fault: "error" });
    expect(pause.paused.retryAfter).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(pause.until - arrival(pause.paused)).toBeGreaterThan(1_500); // ~2 s, far above the first backoff (< 200 ms)
    // The first create after the 429 (the retry, or another user's: all share one path).
    if (!pause.retry) throw new Error("no create after the 429");
    expect(arrival(pause.retry)).toBeGreaterThanOrEqual(pause.until - SLACK_MS); // not earlier
    expect(arrival(pause.retry)).toBeLessThan(pause.until + 1_000); // about that long
    expect(pause.later.filter((r) => r.operation === "createUser")).toHaveLength(names.length);
    for (const r of pause.later) expect(arrival(r)).toBeGreaterThanOrEqual(pause.until - SLACK_MS);

    const created = platformUsers().filter((u) => u.userName.endsWith("@dates.example"));
    expect(created.map((u) => u.userName).sort()).toEqual(names);
  });

  it("503 on a bulk lifecycle call: the flush waits until the date and the user ends inactive", async () => {
    const scim = h.scim("okta");
    const user = await scim.createUser("f@dates.example");
    await expectSettled();
    h.emulator.addFault({
      type: "error",
      status: 503,
      retryAfterSeconds: 2,
      retryAfterDate: true,
      count: 1,
      match: { operation: "bulkUsers" },
    });
    await scim.patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
    await expectSettled();

    const [pause, ...more] = pausesAndLaterRequests("bulkUsers");
    expect(more).toEqual([]);
    if (!pause) throw new Error("no 503 with a Retry-After was answered");
    expect(pause.paused.status).toBe(503);
    if (!pause.retry) throw new Error("the 503'd call was not retried");
    expect(arrival(pause.retry)).toBeGreaterThanOrEqual(pause.until - SLACK_MS);
    expect(arrival(pause.retry)).toBeLessThan(pause.until + 1_000);
    expect(h.platformUsers().get("f@dates.example")?.active).toBe(false);
  });

  it("a rate limit answering dates: no call goes before any date it was given; every user lands once", async () => {
    h.emulator.addFault({
      type: "rateLimit",
      perSecond: 2,
      retryAfterSeconds: 1,
      retryAfterDate: true,
      match: { operation: "createUser" },
    });
    const scim = h.scim("okta");
    const names = Array.from({ length: 6 }, (_, i) => `r${i}@dates.example`);
    for (const name of names) await scim.createUser(name);
    await h.waitForIdle();
    h.emulator.clearFaults();
    await expectSettled();

    const pauses = pausesAndLaterRequests("createUser").filter((p) => p.paused.fault === "rateLimit");
    expect(pauses.length).toBeGreaterThan(0);
    for (const pause of pauses) {
      for (const r of pause.later) expect(arrival(r)).toBeGreaterThanOrEqual(pause.until - SLACK_MS);
    }
    const created = platformUsers().filter((u) => /^r\d@dates\.example$/.test(u.userName));
    expect(created.map((u) => u.userName).sort()).toEqual(names);
  });
});
