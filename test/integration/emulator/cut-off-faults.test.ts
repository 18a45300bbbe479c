import { request } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, type Harness, patch, scimUser, startHarness, TOKEN } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether the body arrived as whole as the answer's framing says (node's `complete`). */
  complete: boolean;
  /** The error that broke the answer off, if any. */
  error?: string;
}

/** One request over node:http, reporting what arrived even when the answer is broken off. */
function rawCall(method: string, path: string, body?: unknown): Promise<RawAnswer> {
  const url = new URL(path, h.url);
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  if (text !== undefined) {
    headers["content-type"] = path.startsWith("/api/scim") ? "application/scim+json" : "application/json";
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (error?: Error) => {
        if (settled) return;
        settled = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          complete: res.complete,
          ...(error ? { error: error.message } : {}),
        });
      };
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done());
      res.on("error", done);
      res.on("aborted", () => done(new Error("aborted")));
      res.on("close", () => done());
    });
    req.on("error", reject);
    req.end(text);
  });
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("emulator: cutOff (the write is applied, its 2xx answer broken off)", () => {
  it("sends the status, the JSON content type, the full Content-Length and half the body, then closes", async () => {
    h.emulator.addFault({ type: "cutOff", count: 1, match: { operation: "createUser" } });
    const answer = await rawCall("POST", "/api/scim/v2/Users", scimUser("cut@example.com"));
    expect(answer.status).toBe(201);
    expect(answer.headers["content-type"]).toMatch(/^application\/scim\+json/);
    const fullLength = Number(answer.headers["content-length"]);
    expect(answer.body.length).toBeGreaterThan(0);
    expect(answer.body.length).toBeLessThan(fullLength);
    expect(answer.complete).toBe(false);
    expect(isJson(answer.body)).toBe(false);

    // Applied once; a repeat is the usual 409, and the next request answers normally.
    expect(h.emulator.state().users.map((u) => u.userName)).toEqual(["cut@example.com"]);
    expect((await h.call("POST", "/api/scim/v2/Users", scimUser("cut@example.com"))).status).toBe(409);
    expect(h.emulator.requests().map((r) => [r.operation, r.status, r.fault])).toEqual([
      ["createUser", 201, "cutOff"],
      ["createUser", 409, undefined],
    ]);
    expect(h.emulator.faults()).toEqual([]);
  });

  it("with contentLength: false, ends a complete-looking answer with the connection, its JSON cut", async () => {
    const id = await createUser(h, "ann@example.com");
    h.emulator.addFault({
      type: "cutOff",
      contentLength: false,
      count: 1,
      match: { operation: "patchUser" },
    });
    const answer = await rawCall(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch({ op: "replace", path: "displayName", value: "Ann" }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(answer.headers["content-length"]).toBeUndefined();
    expect(answer.headers["transfer-encoding"]).toBeUndefined();
    expect(answer.headers.connection).toBe("close");
    expect(answer.complete).toBe(true);
    expect(answer.body.startsWith('{"schemas"')).toBe(true);
    expect(isJson(answer.body)).toBe(false);
    expect(h.emulator.state().users[0]?.displayName).toBe("Ann");
  });

  it("cuts /api/v1 answers too (application/json), and only the writes it matches", async () => {
    const id = await createUser(h, "bob@example.com");
    h.emulator.addFault({ type: "cutOff", match: { operation: "bulkUsers" } });
    expect((await h.call("GET", `/api/scim/v2/Users/${id}`)).status).toBe(200);
    const answer = await rawCall("POST", "/api/v1/users/bulk", { action: "DEACTIVATE", userIds: [id] });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(answer.complete).toBe(false);
    expect(h.emulator.state().users[0]?.active).toBe(false);
  });

  it("sends an answer without a body (204) whole, and an error answer whole", async () => {
    const ann = await createUser(h, "ann@example.com");
    const group = await h.call("POST", "/api/scim/v2/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "G",
    });
    h.emulator.addFault({ type: "cutOff", count: 2, match: { method: "PATCH" } });
    const added = await rawCall(
      "PATCH",
      `/api/scim/v2/Groups/${group.body.id}`,
      patch({ op: "add", path: "members", value: [{ value: ann }] }),
    );
    expect([added.status, added.complete, added.body]).toEqual([204, true, ""]);
    const refused = await rawCall(
      "PATCH",
      `/api/scim/v2/Groups/${group.body.id}`,
      patch({ op: "add", path: "members", value: [{ value: "nobody" }] }),
    );
    expect(refused.status).toBe(400);
    expect(refused.complete).toBe(true);
    expect(JSON.parse(refused.body).scimType).toBe("invalidValue");
    expect(
      h.emulator
        .requests()
        .filter((r) => r.operation === "patchGroup")
        .map((r) => r.fault),
    ).toEqual([undefined, undefined]);
    expect(h.emulator.state().groups[0]?.members).toEqual([ann]);
  });

  it("is set over HTTP and refused there with a contentLength that is not a boolean", async () => {
    const add = await fetch(`${h.url}/_emulator/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "cutOff", contentLength: false, match: { operation: "createUser" } }),
    });
    expect(add.status).toBe(200);
    expect(((await add.json()) as { faults: unknown[] }).faults).toEqual([
      { type: "cutOff", contentLength: false, match: { operation: "createUser" } },
    ]);
    const answer = await rawCall("POST", "/api/scim/v2/Users", scimUser("http@example.com"));
    expect([answer.status, isJson(answer.body)]).toEqual([201, false]);

    h.emulator.clearFaults();
    const bad = await fetch(`${h.url}/_emulator/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "cutOff", contentLength: "yes" }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/contentLength/);
    expect(h.emulator.faults()).toEqual([]);
  });
});

describe("emulator: Retry-After as an HTTP-date (retryAfterDate)", () => {
  /** RFC 9110 §5.6.7 IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. */
  const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

  it("answers an error fault's Retry-After as the date that many seconds ahead, rounded up", async () => {
    h.emulator.addFault({ type: "error", status: 503, retryAfterSeconds: 3, retryAfterDate: true, count: 1 });
    const before = Date.now();
    const answer = await h.call("GET", "/api/v1/user-attributes/");
    const after = Date.now();
    expect(answer.status).toBe(503);
    const header = answer.headers.get("retry-after") ?? "";
    expect(header).toMatch(IMF_FIXDATE);
    const date = Date.parse(header);
    expect(date % 1000).toBe(0);
    expect(date).toBeGreaterThanOrEqual(before + 3000);
    expect(date).toBeLessThanOrEqual(Math.ceil((after + 3000) / 1000) * 1000);
    expect(h.emulator.requests()[0]).toMatchObject({ status: 503, fault: "error", retryAfter: header });
  });

  it("dates a 429's default second and a rate limit's Retry-After too; seconds stay the default", async () => {
    h.emulator.addFault({ type: "error", status: 429, retryAfterDate: true, count: 1 });
    const limited = await h.call("GET", "/api/v1/user-attributes/");
    expect(limited.status).toBe(429);
    const date = Date.parse(limited.headers.get("retry-after") ?? "");
    expect(limited.headers.get("retry-after")).toMatch(IMF_FIXDATE);
    expect(date - Date.now()).toBeGreaterThan(0);
    expect(date - Date.now()).toBeLessThanOrEqual(2000);

    h.emulator.setFaults([{ type: "rateLimit", perSecond: 1, retryAfterSeconds: 2, retryAfterDate: true }]);
    const answers = await Promise.all([1, 2, 3].map(() => h.call("GET", "/api/v1/user-attributes/")));
    const tripped = answers.find((a) => a.status === 429);
    expect(tripped?.headers.get("retry-after")).toMatch(IMF_FIXDATE);

    h.emulator.setFaults([{ type: "error", status: 503, retryAfterSeconds: 4, count: 1 }]);
    expect((await h.call("GET", "/api/v1/user-attributes/")).headers.get("retry-after")).toBe("4");
  });

  it("is set over HTTP, and a retryAfterDate that is not a boolean is refused", async () => {
    const add = await fetch(`${h.url}/_emulator/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "error", status: 429, retryAfterSeconds: 1, retryAfterDate: true }),
    });
    expect(add.status).toBe(200);
    expect((await h.call("GET", "/api/v1/user-attributes/")).headers.get("retry-after")).toMatch(IMF_FIXDATE);
    h.emulator.clearFaults();

    for (const rule of [
      { type: "error", status: 503, retryAfterDate: "yes" },
      { type: "rateLimit", perSecond: 1, retryAfterDate: 1 },
      { type: "error", status: 429, retryAfterSeconds: -1 },
    ]) {
      const bad = await fetch(`${h.url}/_emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(rule),
      });
      expect(bad.status).toBe(400);
    }
    expect(() => h.emulator.addFault({ type: "error", status: 503, retryAfterDate: "yes" as never })).toThrow(
      /retryAfterDate/,
    );
    expect(h.emulator.faults()).toEqual([]);
  });
});

describe("emulator: a list of fault rules is taken all or nothing", () => {
  const send = (method: string, body: unknown) =>
    fetch(`${h.url}/_emulator/faults`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const kept = { type: "error", status: 503, match: { operation: "listUsers" } } as const;

  it("POST of a list with one bad rule adds none of them", async () => {
    h.emulator.addFault(kept);
    const res = await send("POST", [{ type: "cutOff" }, { type: "cutOff", contentLength: "no" }]);
    expect(res.status).toBe(400);
    expect(h.emulator.faults()).toEqual([kept]);
  });

  it("PUT (and setFaults) of a list with one bad rule keeps the rules in place", async () => {
    h.emulator.addFault(kept);
    const res = await send("PUT", [{ type: "ghost" }, { type: "error", status: 418 }]);
    expect(res.status).toBe(400);
    expect(h.emulator.faults()).toEqual([kept]);
    expect(() => h.emulator.setFaults([{ type: "drop" }, { type: "explode" } as never])).toThrow(
      /unknown type/,
    );
    expect(h.emulator.faults()).toEqual([kept]);
  });
});
