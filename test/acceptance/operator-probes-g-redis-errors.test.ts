/**
 * Probes g (the operator's surface): an error line about Redis holds no personal data. Redis
 * refusing a command for good (a key of the wrong type, a Lua script error, an ACL without the
 * command: NOPERM) is a bug or a misconfiguration, answered 500 and logged at `error` for a human.
 * ioredis puts the command's arguments on such an error (`command.args`: key names such as the
 * email index's, field names that are userNames, a script's arguments that are whole user records),
 * and the logger's error serializer wrote them all. Here the userName index of one source has the
 * wrong type; an operator looking a user up by userName, and an identity provider filtering by it,
 * get a 500, and no line names the user. The admin API's error line carries the request's id
 * (`reqId`), as docs/operations.md says of the lines a handler writes while serving a request.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;
const lines: string[] = [];
const NAME = "ada.lovelace@example.com";

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-g-redis-errors", { log: { level: "debug", destination: sink } });
  redis = new Redis(TEST_REDIS_URL);
  await h.scim("okta").createUser(NAME);
  await h.waitForIdle();
  // The userName index becomes a string: every HGET on it is refused (WRONGTYPE).
  const index = `${h.prefix}:src:okta:user:idx:userName`;
  expect(await redis.type(index)).toBe("hash");
  await redis.del(index);
  await redis.set(index, "not a hash");
}, 30_000);
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

describe("probes g: Redis refusing a command", () => {
  it("an admin lookup by userName is a 500, and its error line does not name the user", async () => {
    const from = lines.length;
    const res = await h.admin().get(`/sources/okta/users?userName=${encodeURIComponent(NAME)}`);
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("internal");
    const mine = lines.slice(from);
    const errorLine = mine.find((l) => l.includes('"level":50') && l.includes("admin request failed"));
    expect(errorLine, mine.join("\n")).toBeDefined();
    // What the operator needs stays: the reply and which command it was.
    expect(errorLine).toContain("WRONGTYPE");
    expect(errorLine).toContain('"name":"hget"');
    // The operator goes from the 500's x-request-id to its error line (docs/operations.md, Logs).
    expect(res.headers["x-request-id"]).toBeTruthy();
    expect(JSON.parse(errorLine as string).reqId).toBe(res.headers["x-request-id"]);
    for (const line of mine) expect(line.includes("ada.lovelace"), line).toBe(false);
  });

  it("a SCIM filter by userName is a 500, and its error line does not name the user", async () => {
    const from = lines.length;
    const res = await h.scim("okta").get(`/Users?filter=${encodeURIComponent(`userName eq "${NAME}"`)}`);
    expect(res.status).toBe(500);
    const mine = lines.slice(from);
    expect(
      mine.some((l) => l.includes('"level":50') && l.includes("WRONGTYPE")),
      mine.join("\n"),
    ).toBe(true);
    for (const line of mine) expect(line.includes("ada.lovelace"), line).toBe(false);
  });
});
