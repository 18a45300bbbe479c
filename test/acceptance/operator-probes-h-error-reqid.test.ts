/**
 * Probes h (the operator's surface): the error line of a failed SCIM or webhook request carries the
 * request's id (`reqId`), the one echoed in the answer's `x-request-id`, as the admin API's does
 * (docs/operations.md, Logs: lines a handler writes while serving a request carry it). An operator
 * goes from a 500 to its line. Redis refuses a command for good (a key of the wrong type), and the
 * line still names no user.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oktaDelivery, oktaEvent } from "../fixtures/hooks/okta-delivery.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;
const lines: string[] = [];
const NAME = "grace.hopper@example.com";
const OKTA_ID = "00uhopperh1";
const SECRET = "okta-hook-secret-h";

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-h-error-reqid", {
    sources: { okta: { tokens: ["okta-token"], hooks: { okta: { secret: SECRET } } } },
    log: { level: "debug", destination: sink },
  });
  redis = new Redis(TEST_REDIS_URL);
  await h.scim("okta").createUser(NAME);
  await h.waitForIdle();
  // The userName index becomes a string: every HGET on it is refused (WRONGTYPE).
  const index = `${h.prefix}:src:okta:user:idx:userName`;
  expect(await redis.type(index)).toBe("hash");
  await redis.del(index);
  await redis.set(index, "not a hash");
  // So do the hook's ordering marks of one Okta user.
  await redis.set(`${h.prefix}:hooks:okta:okta:marks:user:${OKTA_ID}`, "not a hash");
}, 30_000);
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

function errorLineOf(mine: string[]): Record<string, unknown> | undefined {
  return mine
    .filter((l) => l.includes('"level":50') && l.includes("WRONGTYPE"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg !== "request errored");
}

describe("probes h: the error line of a failed SCIM or webhook request carries its reqId", () => {
  it("a SCIM filter by userName answered 500", async () => {
    const from = lines.length;
    const res = await h.scim("okta").get(`/Users?filter=${encodeURIComponent(`userName eq "${NAME}"`)}`);
    expect(res.status).toBe(500);
    const reqId = res.headers["x-request-id"] as string;
    expect(reqId).toBeTruthy();
    const mine = lines.slice(from);
    const line = errorLineOf(mine);
    expect(line, mine.join("\n")).toBeDefined();
    expect(line?.reqId, JSON.stringify(line)).toBe(reqId);
    for (const l of mine) expect(l.includes("grace.hopper"), l).toBe(false);
  });

  it("an Okta hook delivery answered 5xx", async () => {
    const from = lines.length;
    const event = oktaEvent("user-lifecycle-deactivate", {
      user: { id: OKTA_ID, alternateId: NAME, displayName: "Grace Hopper" },
    });
    const res = await h.http
      .post("/hooks/okta/okta")
      .set({ Authorization: SECRET, "Content-Type": "application/json" })
      .send(JSON.stringify(oktaDelivery([event])));
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(500);
    const reqId = res.headers["x-request-id"] as string;
    expect(reqId).toBeTruthy();
    const mine = lines.slice(from);
    const line = errorLineOf(mine);
    expect(line, mine.join("\n")).toBeDefined();
    expect(line?.reqId, JSON.stringify(line)).toBe(reqId);
    for (const l of mine) {
      expect(l.includes("grace.hopper"), l).toBe(false);
      expect(l.includes("Grace Hopper"), l).toBe(false);
    }
  });
});
