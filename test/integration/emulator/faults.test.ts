import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, type Harness, scimUser, startHarness } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

describe("emulator: fault injection", () => {
  it("answers 429 with Retry-After for the next N matching requests only", async () => {
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 2,
      count: 1,
      match: { operation: "createUser" },
    });
    expect((await h.call("GET", "/api/scim/v2/Users")).status).toBe(200);
    const limited = await h.call("POST", "/api/scim/v2/Users", scimUser("a@example.com"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.body.status).toBe("429");
    expect((await h.call("POST", "/api/scim/v2/Users", scimUser("a@example.com"))).status).toBe(201);
    expect(h.emulator.faults()).toEqual([]);
    expect(h.emulator.requests().map((r) => [r.operation, r.status, r.fault])).toEqual([
      ["listUsers", 200, undefined],
      ["createUser", 429, "error"],
      ["createUser", 201, undefined],
    ]);
  });

  it("answers 500 and 503 with JSON error bodies on /api/v1", async () => {
    h.emulator.setFaults([
      { type: "error", status: 500, count: 1 },
      { type: "error", status: 503, retryAfterSeconds: 5, count: 1 },
    ]);
    const first = await h.call("GET", "/api/v1/user-attributes/");
    expect(first.status).toBe(500);
    expect(first.body.error.code).toBe("INTERNAL");
    const second = await h.call("GET", "/api/v1/user-attributes/");
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("5");
    expect((await h.call("GET", "/api/v1/user-attributes/")).status).toBe(200);
    h.emulator.addFault({ type: "error", status: 403, count: 1 });
    const forbidden = await h.call("GET", "/api/v1/user-attributes/");
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("FORBIDDEN");
  });

  it("draws probabilistic faults the same way for the same seed", async () => {
    const outcomes: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const other = await startHarness({
        seed: 7,
        faults: [{ type: "error", status: 500, probability: 0.5 }],
      });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++)
        statuses.push((await other.call("GET", "/api/v1/user-attributes/")).status);
      await other.close();
      outcomes.push(statuses);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    const failures = outcomes[0]?.filter((s) => s === 500).length ?? 0;
    expect(failures).toBeGreaterThan(0);
    expect(failures).toBeLessThan(20);
  });

  it("drops the connection without answering and without applying the write", async () => {
    h.emulator.addFault({ type: "drop", count: 1, match: { method: "POST", path: "/api/scim/v2/Users" } });
    await expect(h.call("POST", "/api/scim/v2/Users", scimUser("a@example.com"))).rejects.toThrow();
    expect(h.emulator.state().users).toEqual([]);
    expect(h.emulator.requests()[0]).toMatchObject({ operation: "createUser", status: 0, fault: "drop" });
    expect((await h.call("POST", "/api/scim/v2/Users", scimUser("a@example.com"))).status).toBe(201);
  });

  it("applies a ghost write and loses the answer", async () => {
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createUser" } });
    await expect(h.call("POST", "/api/scim/v2/Users", scimUser("ghost@example.com"))).rejects.toThrow();
    expect(h.emulator.state().users.map((u) => u.userName)).toEqual(["ghost@example.com"]);
    const retry = await h.call("POST", "/api/scim/v2/Users", scimUser("ghost@example.com"));
    expect(retry.status).toBe(409);
  });

  it("slows answers down by the given delay", async () => {
    h.emulator.addFault({ type: "slow", delayMs: 300, match: { path: "/api/scim/v2/**" } });
    const started = performance.now();
    expect((await h.call("GET", "/api/scim/v2/Users")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(h.emulator.requests()[0]?.fault).toBe("slow");
    const quick = performance.now();
    await h.call("GET", "/api/v1/user-attributes/");
    expect(performance.now() - quick).toBeLessThan(290);
  });

  it("enforces a per-second rate limit with 429 and Retry-After", async () => {
    const id = await createUser(h, "a@example.com");
    h.emulator.addFault({ type: "rateLimit", perSecond: 3, match: { operation: "getUser" } });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => h.call("GET", `/api/scim/v2/Users/${id}`)),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(6);
    expect(limited.length).toBeGreaterThanOrEqual(4);
    expect(limited[0]?.headers.get("retry-after")).toBe("1");
    expect((await h.call("GET", "/api/v1/user-attributes/")).status).toBe(200);
  });

  it("sets and clears faults over HTTP", async () => {
    const add = await fetch(`${h.url}/_emulator/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "error", status: 503, match: { operation: "listUsers" } }),
    });
    expect(((await add.json()) as { faults: unknown[] }).faults).toHaveLength(1);
    expect((await h.call("GET", "/api/scim/v2/Users")).status).toBe(503);
    expect((await fetch(`${h.url}/_emulator/faults`, { method: "DELETE" })).status).toBe(204);
    expect((await h.call("GET", "/api/scim/v2/Users")).status).toBe(200);
  });
});

describe("emulator: fault rules that cannot apply", () => {
  it("refuses them, also over HTTP", async () => {
    const h2 = await startHarness();
    expect(() => h2.emulator.addFault({ type: "error", status: 418 as 429 })).toThrow(/status/);
    const res = await fetch(`${h2.url}/_emulator/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "explode" }),
    });
    expect(res.status).toBe(400);
    expect(h2.emulator.faults()).toEqual([]);
    await h2.close();
  });
});
