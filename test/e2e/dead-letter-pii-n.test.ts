/**
 * A platform whose refusals echo personal data (its error message names the userName or an email,
 * as real platforms' messages do: "userName x@y is taken", "x@y owns the account") must not put
 * that data into a log line. The sync's dead letter and the entity's status keep the platform's
 * words (the admin API is read by authenticated operators, who need the reason to fix the cause);
 * the log lines carry the entity's ids, the code and the operation only (docs/operations.md, "What
 * the logs hold"). The emulator's own messages never name a user, so a proxy answers for it here.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let proxy: FaultProxy;
const lines: string[] = [];

/** Emails that appear only in the platform's refusals (never sent to the bridge by a source). */
const ECHOED = {
  create: "zz.echo.create.n@example.com",
  member: "zz.echo.member.n@example.com",
  bulkOne: "zz.echo.bulkone.n@example.com",
  bulkAll: "zz.echo.bulkall.n@example.com",
};

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("dead-letter-pii-n", {
    start: false,
    log: { level: "trace", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
        timeoutMs: 2_000,
        maxRetries: 1,
      },
    },
  });
  proxy.upstream = h.platformUrl;
  await h.start();
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

interface Letter {
  ref: { source: string; kind: string; id: string };
  code: string;
  reason: string;
}

/** The dead letter of one entity, once it is there (admin API). */
async function letterOf(kind: string, id: string): Promise<Letter> {
  return waitFor(
    async () => {
      const body = (await h.admin().get("/dead-letters?source=okta")).body as { items: Letter[] };
      return body.items.find((l) => l.ref.kind === kind && l.ref.id === id) ?? null;
    },
    { timeoutMs: 20_000, what: `the dead letter of ${kind} ${id}` },
  );
}

/** Lines holding `text` (case-insensitively, also JSON-escaped or URL-encoded). */
function linesWith(text: string): string[] {
  const forms = [text, encodeURIComponent(text), JSON.stringify(text).slice(1, -1)].map((f) =>
    f.toLowerCase(),
  );
  return lines.filter((line) => forms.some((form) => line.toLowerCase().includes(form)));
}

describe("a platform refusal that echoes personal data", () => {
  it("a refused create: the dead letter keeps the platform's words, no log line holds them", async () => {
    const userName = "zz.refused.create.n@example.com";
    proxy.rule = (call) =>
      call.method === "POST" && call.path === "/api/scim/v2/Users"
        ? {
            kind: "answer",
            status: 400,
            body: {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "400",
              scimType: "invalidValue",
              detail: `userName ${userName} is refused: ${ECHOED.create} already holds this mailbox`,
            },
          }
        : undefined;
    const user = await h.scim("okta").createUser(userName);
    const letter = await letterOf("user", user.id);
    proxy.rule = undefined;
    expect(letter.code).toBe("platform_bad_request");
    expect(letter.reason).toContain(ECHOED.create);
    const status = (await h.admin().get(`/sources/okta/users/${user.id}`)).body;
    expect(JSON.stringify(status)).toContain(ECHOED.create);
    await h.waitForIdle();
    expect(lines.filter((line) => line.includes("dead letter"))).not.toEqual([]);
    expect(linesWith(ECHOED.create)).toEqual([]);
    expect(linesWith(userName)).toEqual([]);
  });

  it("a refused member add: the group's dead letter keeps them, no log line holds them", async () => {
    const okta = h.scim("okta");
    const member = await okta.createUser("zz.member.n@example.com");
    const group = await okta.createGroup("Echo Group N");
    await h.waitForIdle();
    proxy.rule = (call) =>
      call.method === "PATCH" && call.path.startsWith("/api/scim/v2/Groups/")
        ? {
            kind: "answer",
            status: 400,
            body: {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "400",
              detail: `member ${ECHOED.member} may not join this group`,
            },
          }
        : undefined;
    const res = await okta.patchGroup(group.id, [
      { op: "add", path: "members", value: [{ value: member.id }] },
    ]);
    expect([200, 204]).toContain(res.status);
    const letter = await letterOf("group", group.id);
    proxy.rule = undefined;
    expect(letter.reason).toContain(ECHOED.member);
    await h.waitForIdle();
    expect(linesWith(ECHOED.member)).toEqual([]);
  });

  it("a bulk deactivation refused for one user, and one refused whole: no log line holds the echo", async () => {
    const okta = h.scim("okta");
    const one = await okta.createUser("zz.bulk.one.n@example.com");
    await h.waitForIdle();
    const onePlatformId = h.platformUsers().get("zz.bulk.one.n@example.com")?.id as string;
    expect(onePlatformId).toBeDefined();
    proxy.rule = (call) =>
      call.method === "POST" && call.path === "/api/v1/users/bulk"
        ? {
            kind: "answer",
            status: 200,
            body: {
              succeeded: [],
              failed: [
                { userId: onePlatformId, code: "FORBIDDEN", message: `${ECHOED.bulkOne} owns the account` },
              ],
            },
          }
        : undefined;
    expect((await okta.patchUser(one.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    const first = await letterOf("user", one.id);
    expect(first.reason).toContain(ECHOED.bulkOne);

    const all = await okta.createUser("zz.bulk.all.n@example.com");
    proxy.rule = undefined;
    await h.waitForIdle();
    proxy.rule = (call) =>
      call.method === "POST" && call.path === "/api/v1/users/bulk"
        ? {
            kind: "answer",
            status: 400,
            body: { error: { code: "INVALID", message: `${ECHOED.bulkAll} cannot be deactivated now` } },
          }
        : undefined;
    expect((await okta.patchUser(all.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    const second = await letterOf("user", all.id);
    proxy.rule = undefined;
    expect(second.reason).toContain(ECHOED.bulkAll);
    await h.waitForIdle();
    expect(linesWith(ECHOED.bulkOne)).toEqual([]);
    expect(linesWith(ECHOED.bulkAll)).toEqual([]);
  });

  it("no line the bridge wrote holds any echoed email", () => {
    expect(lines.length).toBeGreaterThan(0);
    for (const email of Object.values(ECHOED)) expect(linesWith(email)).toEqual([]);
  });
});
