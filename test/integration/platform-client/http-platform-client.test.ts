import { afterEach, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import {
  HttpPlatformClient,
  type HttpPlatformClientOptions,
} from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { type FakePlatform, scimUser, sendJson, startFakePlatform } from "./fake-platform.js";

const TOKEN = "test-token-123";
let platform: FakePlatform | undefined;
const clients: HttpPlatformClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await platform?.close();
  platform = undefined;
});

function clientFor(url: string, options: Partial<HttpPlatformClientOptions> = {}): HttpPlatformClient {
  const client = new HttpPlatformClient({
    baseUrl: url,
    token: TOKEN,
    allowInsecureHttp: true,
    timeoutMs: 2000,
    maxRetries: 3,
    budget: new NoopRequestBudget(),
    backoff: { baseMs: 10, capMs: 50 },
    ...options,
  });
  clients.push(client);
  return client;
}

async function failureOf(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(PlatformError);
    return err as PlatformError;
  }
  throw new Error("expected a PlatformError");
}

describe("HttpPlatformClient over HTTP", () => {
  it("refuses an http:// base URL unless allowInsecureHttp", () => {
    const make = (allowInsecureHttp: boolean) =>
      new HttpPlatformClient({
        baseUrl: "http://platform.example.com",
        token: TOKEN,
        allowInsecureHttp,
        timeoutMs: 1000,
        maxRetries: 0,
        budget: new NoopRequestBudget(),
      });
    expect(() => make(false)).toThrow(/http:\/\/.*https:\/\/ only.*allowInsecureHttp/);
    make(true).close();
    expect(
      () =>
        new HttpPlatformClient({
          baseUrl: "https://platform.example.com",
          token: TOKEN,
          rejectUnauthorized: false,
          timeoutMs: 1000,
          maxRetries: 0,
          budget: new NoopRequestBudget(),
        }),
    ).toThrow(/rejectUnauthorized/);
  });

  it("sends the bearer token and the contract's content types, and never a cookie", async () => {
    platform = await startFakePlatform((req, res) => {
      if (req.url.startsWith("/api/scim/v2/Users")) {
        sendJson(res, 201, scimUser("u1", "ada"), { "set-cookie": "session=abc; Path=/" });
      } else {
        sendJson(res, 201, { id: 7, name: "dept", type: "string" }, { "set-cookie": "session=abc; Path=/" });
      }
    });
    const client = clientFor(platform.url);
    await client.createUser({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ada" });
    await client.createUserAttribute({ name: "dept", type: "string" });
    await client.createUser({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "bob" });

    expect(platform.requests).toHaveLength(3);
    for (const req of platform.requests) {
      expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(req.headers.cookie).toBeUndefined();
    }
    const [scim, v1] = platform.requests;
    expect(scim?.headers["content-type"]).toBe("application/scim+json");
    expect(scim?.url).toBe("/api/scim/v2/Users");
    expect(v1?.headers["content-type"]).toBe("application/json");
    expect(v1?.url).toBe("/api/v1/user-attributes/");
    expect(JSON.parse(v1?.body ?? "")).toEqual({ name: "dept", type: "string" });
  });

  it("waits out Retry-After before retrying a 429", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index === 0)
        sendJson(res, 429, { error: { code: "RATE_LIMITED", message: "slow down" } }, { "retry-after": "1" });
      else sendJson(res, 200, scimUser("u1", "ada"));
    });
    const registry = new Registry();
    const budget = new NoopRequestBudget();
    const client = clientFor(platform.url, { registry, budget });
    const user = await client.getUser("u1");
    expect(user?.userName).toBe("ada");
    const [first, second] = platform.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    expect(await budget.pausedUntil()).toBeGreaterThanOrEqual(first!.at + 1000 - 50);
    const metrics = await registry.getMetricsAsJSON();
    const value = (name: string) =>
      metrics.find((m) => m.name === name)?.values.reduce((a, v) => a + v.value, 0);
    expect(value("platform_rate_limited_total")).toBe(1);
    expect(value("platform_retries_total")).toBe(1);
    expect(value("platform_requests_total")).toBe(2);
  });

  it("retries 5xx up to maxRetries, then fails transient saying why", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 503, { error: { code: "DOWN", message: "down" } }),
    );
    const client = clientFor(platform.url, { maxRetries: 2 });
    const err = await failureOf(client.listUserAttributes());
    expect(platform.requests).toHaveLength(3);
    expect(err.transient).toBe(true);
    expect(err.failure).toBe("server");
    expect(err.httpStatus).toBe(503);
    expect(err.operation).toBe("listUserAttributes");
    expect(err.message).toMatch(/503.*gave up after 3 tries of this call/);
  });

  it("recovers when a transient failure clears", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index < 2) sendJson(res, 500, {});
      else sendJson(res, 200, { items: [{ id: 1, name: "dept", type: "string" }] });
    });
    const client = clientFor(platform.url);
    expect(await client.listUserAttributes("string")).toEqual([{ id: 1, name: "dept", type: "string" }]);
    expect(platform.requests.map((r) => r.url)).toEqual(
      Array(3).fill("/api/v1/user-attributes/?type=string"),
    );
  });

  it.each([400, 401, 403, 409, 422])("never retries a %i", async (status) => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, status, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status: String(status),
        scimType: "uniqueness",
        detail: "no",
      }),
    );
    const client = clientFor(platform.url);
    const err = await failureOf(client.createGroup({ schemas: [], displayName: "g" }));
    expect(platform.requests).toHaveLength(1);
    expect(err.transient).toBe(false);
    expect(err.httpStatus).toBe(status);
    if (status === 409) expect(err.failure).toBe("conflict");
  });

  it("retries a dropped connection", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index === 0) res.socket?.destroy();
      else sendJson(res, 200, scimUser("u1", "ada"));
    });
    const client = clientFor(platform.url);
    expect((await client.getUser("u1"))?.id).toBe("u1");
    expect(platform.requests).toHaveLength(2);
  });

  it("times out a slow answer, retries it, and ends transient", async () => {
    platform = await startFakePlatform(() => {
      // never answers
    });
    const client = clientFor(platform.url, { timeoutMs: 200, maxRetries: 1 });
    const started = Date.now();
    const err = await failureOf(client.getGroup("g1"));
    expect(err.failure).toBe("timeout");
    expect(err.transient).toBe(true);
    expect(platform.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(err.message).toMatch(/timed out/);
  });

  it("treats a 2xx of the wrong shape as a permanent invalid_response naming the operation", async () => {
    platform = await startFakePlatform((_req, res) => sendJson(res, 200, { id: 5, userName: ["x"] }));
    const client = clientFor(platform.url);
    const err = await failureOf(client.getUser("u1"));
    expect(err.failure).toBe("invalid_response");
    expect(err.transient).toBe(false);
    expect(err.message).toMatch(/^getUser: 200 answer breaks the contract/);
    expect(platform.requests).toHaveLength(1);
  });

  it("answers null/false on 404 where the interface says so", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 404, { error: { code: "NOT_FOUND", message: "no" } }),
    );
    const client = clientFor(platform.url);
    expect(await client.getUser("nope")).toBeNull();
    expect(await client.deleteUser("nope")).toBe(false);
    expect(await client.getUserAttributeValues("nope")).toBeNull();
    const err = await failureOf(client.replaceUser("nope", { schemas: [], userName: "x" }));
    expect(err.failure).toBe("not_found");
  });

  it("encodes path parameters and escapes SCIM filter values", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 200, { totalResults: 1, Resources: [scimUser("u1", 'a"b\\c')] }),
    );
    const client = clientFor(platform.url);
    const user = await client.findUserByUserName('a"b\\c');
    expect(user?.id).toBe("u1");
    const url = new URL(platform.requests[0]!.url, "http://x");
    expect(url.pathname).toBe("/api/scim/v2/Users");
    expect(url.searchParams.get("filter")).toBe('userName eq "a\\"b\\\\c"');
  });

  it("surfaces a ghost-written create (applied, answer lost, retry 409) as a conflict", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index === 0)
        res.socket?.destroy(); // applied, but the answer never arrives
      else
        sendJson(res, 409, {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
          status: "409",
          scimType: "uniqueness",
          detail: "userName taken",
        });
    });
    const client = clientFor(platform.url);
    const err = await failureOf(client.createUser({ schemas: [], userName: "ada" }));
    expect(platform.requests).toHaveLength(2);
    expect(err.failure).toBe("conflict");
    expect(err.transient).toBe(false);
    expect(err.message).toMatch(/uniqueness.*earlier attempt.*adopt/);
  });

  it("reports a Retry-After longer than it waits as transient with the pause", async () => {
    platform = await startFakePlatform((_req, res) => sendJson(res, 429, {}, { "retry-after": "120" }));
    const client = clientFor(platform.url);
    const err = await failureOf(client.getUser("u1"));
    expect(platform.requests).toHaveLength(1);
    expect(err.failure).toBe("rate_limited");
    expect(err.transient).toBe(true);
    expect(err.retryAfterMs).toBe(120_000);
  });

  it("logs each call at debug and each retry at warn, never the token or a userName", async () => {
    platform = await startFakePlatform((_req, res, index) => {
      if (index === 0) sendJson(res, 503, {});
      else sendJson(res, 200, { totalResults: 1, Resources: [scimUser("u1", "secret.person@example.com")] });
    });
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const client = clientFor(platform.url, { logger: pino({ level: "debug" }, sink) });
    await client.findUserByUserName("secret.person@example.com");
    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain("secret.person");
    const warn = lines.filter((l) => l.level === 40);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatchObject({
      operation: "findUserByUserName",
      reason: "server",
      status: 503,
      attempt: 0,
    });
    const debug = lines.filter((l) => l.level === 20);
    expect(debug.map((l) => l.status)).toEqual(["503", "200"]);
  });
});
