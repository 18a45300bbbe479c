import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createHealthRouter } from "../../../routes/health.js";
import { createRequestLogger } from "../../../routes/middleware/request-logger.js";
import { createLogger } from "../../../src/observability/logger.js";

const SECRET = "s3cr3t-bearer-value-91f2";
const PASSWORD = "hunter2-correct-horse-77";
const USERNAME = "jane.doe@example.com";

function buildApp(level: string) {
  const lines: string[] = [];
  const logger = createLogger(level, {}, { write: (line: string) => void lines.push(line) });
  const app = express();
  app.use(createRequestLogger(logger));
  app.use(createHealthRouter({ redis: { ping: async () => "PONG" }, isReady: () => true }));
  app.get("/metrics", (_req, res) => {
    res.type("text/plain").send("");
  });
  app.post("/scim/v2/okta/Users", express.json(), (req, res) => {
    // A handler logging what it received, at debug: the shared redaction list still applies.
    req.log.debug({ user: req.body, authorization: req.headers.authorization }, "received user");
    res.status(201).json({ id: "1" });
  });
  app.get("/scim/v2/okta/Users", (_req, res) => {
    res.json({ Resources: [] });
  });
  app.get("/boom", () => {
    throw new Error("boom");
  });
  return { app, lines, output: () => lines.join("") };
}

const body = { userName: USERNAME, password: PASSWORD, emails: [{ value: USERNAME }] };

describe("request logger", () => {
  it.each(["info", "debug", "trace"])(
    "never writes the bearer token or a password (level %s)",
    async (level) => {
      const { app, output, lines } = buildApp(level);
      await request(app)
        .post("/scim/v2/okta/Users")
        .set("Authorization", `Bearer ${SECRET}`)
        .set("Cookie", `session=${SECRET}`)
        .send(body)
        .expect(201);
      expect(lines.length).toBeGreaterThan(0);
      expect(output()).not.toContain(SECRET);
      expect(output()).not.toContain(PASSWORD);
      if (level !== "info") expect(output()).toContain("[redacted]");
    },
  );

  it.each(["debug", "trace"])(
    "never writes a secret carried in a custom header (level %s)",
    async (level) => {
      // Okta Event Hooks may carry their shared secret in any header the admin names.
      const { app, output, lines } = buildApp(level);
      await request(app)
        .get("/scim/v2/okta/Users")
        .set("X-Hook-Key", SECRET)
        .set("User-Agent", "okta-hooks")
        .expect(200);
      expect(lines.length).toBeGreaterThan(0);
      expect(output()).toContain("okta-hooks");
      expect(output()).not.toContain(SECRET);
    },
  );

  it("keeps bodies, query strings and headers (personal data) out of lines above debug", async () => {
    const { app, output, lines } = buildApp("info");
    await request(app).post("/scim/v2/okta/Users").set("Authorization", `Bearer ${SECRET}`).send(body);
    await request(app).get(`/scim/v2/okta/Users?filter=${encodeURIComponent(`userName eq "${USERNAME}"`)}`);
    expect(lines).toHaveLength(2);
    expect(output()).not.toContain(USERNAME);
    expect(output()).not.toContain("jane.doe");
    const line = JSON.parse(lines[1]!);
    expect(line.req).toEqual({ id: expect.any(String), method: "GET", url: "/scim/v2/okta/Users" });
    expect(line.res).toEqual({ statusCode: 200 });
    expect(line.level).toBe(30);
  });

  it.each(["debug", "trace"])(
    "writes a filter's shape at %s, not its values (they are userNames and emails)",
    async (level) => {
      const { app, lines } = buildApp(level);
      const filter = `userName eq "${USERNAME}" and (emails co "jane" or externalId eq "e\\"x")`;
      await request(app).get("/scim/v2/okta/Users").query({ Filter: filter, count: "5" });
      await request(app)
        .get("/scim/v2/okta/Users")
        .query({ filter: ['displayName sw "Jane', "x"] });
      expect(lines).toHaveLength(2);
      expect(lines.join("")).not.toContain("jane");
      const [first, second] = lines.map((l) => JSON.parse(l).req.query);
      expect(first).toEqual({
        Filter: 'userName eq "…" and (emails co "…" or externalId eq "…")',
        count: "5",
      });
      expect(second).toEqual({ filter: ['displayName sw "…', "…"] });
    },
  );

  it.each([
    ["unquoted", "userName eq jane.doe@example.com"],
    ["single-quoted", "userName eq 'jane.doe@example.com'"],
    ["bare", "jane.doe@example.com"],
  ])("hides a %s filter value at debug", async (_kind, filter) => {
    const { app, lines } = buildApp("debug");
    await request(app).get("/scim/v2/okta/Users").query({ filter });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("jane");
    expect(lines[0]).not.toContain("example.com");
  });

  it("keeps a filter's attribute paths and operators, whatever the quoting of its values", async () => {
    const { app, lines } = buildApp("debug");
    const filters = [
      "userName eq jane.doe@example.com and active eq true",
      "userName Eq 'jane.doe@example.com' or displayName sw Jane Doe",
      'emails[type eq "work" and value co jane].value pr',
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq 701984",
    ];
    for (const filter of filters) await request(app).get("/scim/v2/okta/Users").query({ filter });
    expect(lines.join("")).not.toMatch(/jane|Jane|701984/);
    expect(lines.map((l) => JSON.parse(l).req.query.filter)).toEqual([
      "userName eq … and active eq true",
      "userName Eq '…' or displayName sw … …",
      'emails[type eq "…" and value co …].value pr',
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq …",
    ]);
  });

  it("hides a login where no comparison operator puts it (bare, after an unknown operator, after pr)", async () => {
    const { app, lines } = buildApp("debug");
    const filters = ["jane.doe", "userName == jane.doe", "userName = jane.doe", "userName pr jane.doe"];
    for (const filter of filters) await request(app).get("/scim/v2/okta/Users").query({ filter });
    expect(lines.join("")).not.toContain("jane");
    expect(lines.map((l) => JSON.parse(l).req.query.filter)).toEqual([
      "…",
      "userName … …",
      "userName … …",
      "userName pr …",
    ]);
  });

  it("writes a list parameter's value only when it holds what its name says", async () => {
    const { app, lines } = buildApp("debug");
    await request(app)
      .get("/scim/v2/okta/Users")
      .query({
        startIndex: "jane.doe",
        count: "1e3",
        attributes: `userName,${USERNAME}`,
        excludedAttributes: "jane.doe",
        sortBy: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
        sortOrder: "jane",
      });
    await request(app)
      .get("/scim/v2/okta/Users")
      .query({ attributes: ["emails.value", "jane.doe"] });
    expect(lines.join("")).not.toContain("jane");
    expect(lines.map((l) => JSON.parse(l).req.query)).toEqual([
      {
        startIndex: "…",
        count: "…",
        attributes: "…",
        excludedAttributes: "…",
        sortBy: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
        sortOrder: "…",
      },
      { attributes: ["emails.value", "…"] },
    ]);
  });

  it("logs other query parameters' values only for known SCIM list parameters", async () => {
    const { app, lines } = buildApp("debug");
    await request(app)
      .get("/scim/v2/okta/Users")
      .query({
        userName: USERNAME,
        startIndex: "1",
        count: "10",
        attributes: "userName,emails",
        excludedAttributes: "groups",
        sortBy: "userName",
        sortOrder: "descending",
        q: ["jane", "doe"],
      });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("jane");
    expect(JSON.parse(lines[0]!).req.query).toEqual({
      userName: "…",
      startIndex: "1",
      count: "10",
      attributes: "userName,emails",
      excludedAttributes: "groups",
      sortBy: "userName",
      sortOrder: "descending",
      // Any other parameter is only counted: its very name may be a login.
      "…": 1,
    });
  });

  it("hides path segments that may be personal data, keeping route words, ids and schema URNs", async () => {
    const { app, lines } = buildApp("info");
    const id = "2f1d0c9e-6a53-4b7e-9c41-0d6f3e8a7b21";
    for (const path of [
      `/scim/v2/okta/Users/${encodeURIComponent(USERNAME)}`,
      "/scim/v2/okta/Users/jane.doe@example.com",
      "/scim/v2/okta/Users/Jane%20Doe/x",
      "/scim/v2/okta/Users/+1%20555%200100",
      "/scim/v2/okta/Users/Zo%C3%AB",
      `/scim/v2/okta/Users/${id}`,
      "/scim/v2/okta/Schemas/urn:ietf:params:scim:schemas:core:2.0:User",
      "/scim/v2/okta/Users/.search",
      // Plain logins and employee numbers where an id goes: only the bridge's ids are kept there.
      "/scim/v2/okta/Users/jsmith",
      "/scim/v2/okta/Groups/Ada_Lovelace",
      "/admin/v1/sources/okta/users/E12345",
      "/admin/v1/dead-letters/okta/user/ada.lovelace/retry",
      // The router reads runs of slashes as one: a login after `Users//` is where an id goes.
      "/scim/v2/okta/Users//jsmith",
      `/scim/v2/okta/Users/${id}/jsmith`,
    ])
      await request(app).get(path);
    // Every field but the random and clock ones (a request id or a time may hold "555" by chance).
    const withoutNoise = lines.map((l) => {
      const { time: _time, responseTime: _took, req, ...rest } = JSON.parse(l);
      const { id: _id, ...reqRest } = req;
      return JSON.stringify({ ...rest, req: reqRest });
    });
    expect(withoutNoise.join("")).not.toMatch(/jane|555|Zo|jsmith|Ada|E12345|lovelace/);
    expect(lines.map((l) => JSON.parse(l).req.url)).toEqual([
      "/scim/v2/okta/Users/…",
      "/scim/v2/okta/Users/…",
      "/scim/v2/okta/Users/…/…",
      "/scim/v2/okta/Users/…",
      "/scim/v2/okta/Users/…",
      `/scim/v2/okta/Users/${id}`,
      "/scim/v2/okta/Schemas/urn:ietf:params:scim:schemas:core:2.0:User",
      "/scim/v2/okta/Users/.search",
      "/scim/v2/okta/Users/…",
      "/scim/v2/okta/Groups/…",
      "/admin/v1/sources/okta/users/…",
      "/admin/v1/dead-letters/okta/user/…/retry",
      "/scim/v2/okta/Users//…",
      `/scim/v2/okta/Users/${id}/…`,
    ]);
  });

  it("takes the request id from x-request-id, or generates one, and echoes it", async () => {
    const { app, lines } = buildApp("info");
    const given = await request(app).get("/scim/v2/okta/Users").set("x-request-id", "abc-123").expect(200);
    expect(given.headers["x-request-id"]).toBe("abc-123");
    expect(JSON.parse(lines[0]!).req.id).toBe("abc-123");
    const generated = await request(app).get("/scim/v2/okta/Users").expect(200);
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(lines[1]!).req.id).toBe(generated.headers["x-request-id"]);
    const hostile = await request(app)
      .get("/scim/v2/okta/Users")
      .set("x-request-id", 'a b{"x":1}')
      .expect(200);
    expect(hostile.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("does not log health, readiness and metrics requests", async () => {
    const { app, lines } = buildApp("info");
    await request(app).get("/healthz").expect(200);
    await request(app).get("/readyz").expect(200);
    await request(app).get("/metrics").expect(200);
    expect(lines).toHaveLength(0);
    await request(app).get("/scim/v2/okta/Users").expect(200);
    expect(lines).toHaveLength(1);
  });

  it("logs a 5xx at error level", async () => {
    const { app, lines } = buildApp("info");
    await request(app).get("/boom").expect(500);
    expect(JSON.parse(lines.at(-1)!).level).toBe(50);
  });
});
