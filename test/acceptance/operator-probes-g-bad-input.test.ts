/**
 * Probes g (the operator's surface): what an operator types wrong at 3 a.m. An unknown source, an
 * unknown id, a body that is not JSON, a wrong method, a missing or wrong admin token: each gets a
 * JSON error with the right status and a message that says what is wrong, over the admin API and
 * through the CLI (exit 1 for a refused request, 2 for a usage error), and changes nothing (no run,
 * no resync, no dead letter taken back, no job).
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import {
  E2E_ADMIN_TOKEN,
  E2E_VIEWER_TOKEN,
  type TestBridge,
  startTestBridge,
  deadLetteredUser,
} from "../helpers/bridge-harness.js";

let h: TestBridge;
let userId: string;
let deadId: string;
const lines: string[] = [];

function cli(args: string[], env?: Record<string, string>): Promise<CliResult> {
  return runCli(h.bridge.url as string, args, env);
}

/** What a bad request must not change: runs, resyncs, dead letters, queued work, the user's status. */
async function footprint(): Promise<unknown> {
  const [runs, resyncs, letters, status, user] = await Promise.all([
    h.admin().get("/reconcile-runs?limit=500"),
    h.admin().get("/resyncs?limit=500"),
    h.admin().get("/dead-letters"),
    h.admin().get("/status"),
    h.admin().get(`/sources/okta/users/${userId}`),
  ]);
  return {
    runs: runs.body.total,
    resyncs: resyncs.body.total,
    letters: letters.body.items.map((l: { ref: unknown }) => l.ref),
    idle: status.body.idle,
    pending: status.body.pending,
    queues: status.body.queues,
    user: { state: user.body.state, generation: user.body.generation, lastApplied: user.body.lastApplied },
  };
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-g-bad-input", {
    log: { level: "debug", destination: sink },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
  userId = (await h.scim("okta").createUser("kept.user@example.com")).id;
  await h.waitForIdle();
  deadId = await deadLetteredUser(h, "okta", "refused.user@example.com", 20_000);
}, 40_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: bad admin input gets a clear error and changes nothing", () => {
  it("an unknown source: 404 naming it, for every route that takes one", async () => {
    const before = await footprint();
    const asks = [
      h.admin().post("/sources/nowhere/reconcile", { dryRun: true }),
      h.admin().post("/sources/nowhere/resync", {}),
      h.admin().post("/sources/nowhere/resync", { users: [userId] }),
      h.admin().get(`/sources/nowhere/users/${userId}`),
      h.admin().get("/sources/nowhere/groups/x"),
      h.admin().get("/sources/nowhere/users?userName=kept.user%40example.com"),
      h.admin().get("/dead-letters?source=nowhere"),
      h.admin().get("/reconcile-runs?source=nowhere"),
      h.admin().get("/resyncs?source=nowhere"),
    ];
    for (const [i, res] of (await Promise.all(asks)).entries()) {
      expect(res.status, `ask ${i}`).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.message, `ask ${i}`).toMatch(/nowhere/);
      // A typo (`Okta`) is told which sources there are.
      expect(res.body.error.message, `ask ${i}`).toContain("configured: okta, entra");
    }
    expect(await footprint()).toEqual(before);
  });

  it("an unknown source through the CLI: exit 1 with the API's reason, never an empty answer", async () => {
    const before = await footprint();
    for (const args of [
      ["dead-letters", "list", "--source", "nowhere"],
      ["reconcile", "--list", "--source", "nowhere"],
      ["resync", "--list", "--source", "nowhere"],
      ["reconcile", "nowhere", "--dry-run"],
      ["resync", "nowhere"],
      ["status", "nowhere", "--user-name", "kept.user@example.com"],
      ["status", `nowhere/user/${userId}`],
    ]) {
      const run = await cli(args);
      expect(run.code, `${args.join(" ")}: ${run.stdout}`).toBe(1);
      expect(run.stderr, args.join(" ")).toMatch(/404 not_found: .*nowhere/);
    }
    expect(await footprint()).toEqual(before);
  });

  it("an unknown id: 404, or named as unknown, and nothing retried or discarded", async () => {
    const before = await footprint();
    const notFound = [
      h.admin().get("/sources/okta/users/no-such-id"),
      h.admin().get("/sources/okta/groups/no-such-id"),
      h.admin().get("/reconcile-runs/no-such-run"),
      h.admin().post("/reconcile-runs/no-such-run/confirm"),
      h.admin().post("/reconcile-runs/no-such-run/discard"),
      h.admin().get("/resyncs/no-such-op"),
      h.admin().post("/resyncs/no-such-op/confirm"),
      h.admin().post("/resyncs/no-such-op/discard"),
      h.admin().post("/dead-letters/okta/user/no-such-id/retry"),
      h.admin().post(`/dead-letters/okta/user/${userId}/retry`),
      h.admin().delete("/dead-letters/okta/user/no-such-id"),
      h.admin().delete(`/dead-letters/entra/user/${deadId}`),
      h.admin().delete(`/dead-letters/okta/widget/${deadId}`),
    ];
    for (const [i, res] of (await Promise.all(notFound)).entries()) {
      expect(res.status, `ask ${i}`).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.message.length).toBeGreaterThan(0);
    }
    const named = await h.admin().post("/dead-letters/retry", {
      refs: [{ source: "okta", kind: "user", id: "no-such-id" }],
    });
    expect(named.status).toBe(202);
    expect(named.body).toEqual({ retried: 0 });
    const empty = await h.admin().post("/dead-letters/retry", { refs: [] });
    expect(empty.body).toEqual({ retried: 0 });
    expect(await footprint()).toEqual(before);

    const retry = await cli(["dead-letters", "retry", "okta/user/no-such-id"]);
    expect(retry.code).toBe(1);
    expect(retry.stdout).toMatch(/retried 0 of 1 named/);
    const discard = await cli(["dead-letters", "discard", "okta/user/no-such-id"]);
    expect(discard.code).toBe(1);
    expect(discard.stderr).toMatch(/404 not_found: No dead letter for okta\/user\/no-such-id/);
    const confirm = await cli(["reconcile", "--confirm", "no-such-run"]);
    expect(confirm.code).toBe(1);
    expect(confirm.stderr).toMatch(/404/);
    const one = await cli(["status", "okta/user/no-such-id"]);
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/404 not_found/);
    expect(await footprint()).toEqual(before);
    expect((await h.admin().get(`/sources/okta/users/${deadId}`)).body.state).toBe("dead");
  });

  it("a userName where an id goes: the 404 says ids are the bridge's and how to find one by userName", async () => {
    const api = await h.admin().get(`/sources/okta/users/${encodeURIComponent("kept.user@example.com")}`);
    expect(api.status).toBe(404);
    expect(api.body.error.message).toMatch(/bridge's SCIM id/);
    expect(api.body.error.message).toContain("/sources/okta/users?userName=");
    const run = await cli(["status", "okta/user/kept.user@example.com"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("scim-bridge status okta --user-name");
    const group = await h.admin().get("/sources/okta/groups/Engineering");
    expect(group.body.error.message).toContain("--group-name");
  });

  it("a body that is not JSON, or not the schema: 400 with what is wrong, nothing started", async () => {
    const before = await footprint();
    const auth = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
    for (const [path, body] of [
      ["/sources/okta/reconcile", "{dryRun: true}"],
      ["/sources/okta/reconcile", "dryRun=false"],
      ["/sources/okta/resync", '{"users": ["a",]}'],
      ["/dead-letters/retry", "all"],
    ] as const) {
      const res = await h.http.post(`/admin/v1${path}`).set(auth).type("json").send(body);
      expect(res.status, `${path} ${body}`).toBe(400);
      expect(res.body.error.code).toBe("invalid_json");
    }
    for (const [path, body] of [
      ["/sources/okta/reconcile", { dryRun: "true" }],
      ["/sources/okta/reconcile", { dryrun: true }],
      ["/sources/okta/resync", { users: "abc" }],
      ["/sources/okta/resync", { user: ["abc"] }],
      ["/sources/okta/resync", [userId]],
      ["/dead-letters/retry", { refs: [`okta/user/${deadId}`] }],
      ["/dead-letters/retry", { refs: [{ source: "okta", kind: "users", id: deadId }] }],
    ] as const) {
      const res = await h.admin().post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.details.length, JSON.stringify(res.body)).toBeGreaterThan(0);
    }
    for (const query of ["?limit=0", "?limit=abc", "?offset=-1", "?limit=501"]) {
      const res = await h.admin().get(`/dead-letters${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect(await footprint()).toEqual(before);
  });

  it("parameters in the query string of a write (?dryRun=true, ?users=…): 400, never taken for {} (a real run, a whole source, every letter)", async () => {
    const before = await footprint();
    for (const [path, body] of [
      ["/sources/okta/reconcile?dryRun=true", undefined],
      ["/sources/okta/reconcile?dryRun=true", {}],
      [`/sources/okta/resync?users=${userId}`, undefined],
      [`/dead-letters/retry?refs=okta/user/${deadId}`, undefined],
      [`/dead-letters/okta/user/${deadId}/retry?force=1`, undefined],
      [`/reconcile-runs/x/discard?reason=typo`, undefined],
    ] as const) {
      const req = h.http.post(`/admin/v1${path}`).set({ Authorization: `Bearer ${E2E_ADMIN_TOKEN}` });
      const res = body === undefined ? await req : await req.send(body);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe("invalid_request");
      expect(res.body.error.message, path).toMatch(/query/);
    }
    const del = await h.http
      .delete(`/admin/v1/dead-letters/okta/user/${deadId}?dryRun=true`)
      .set({ Authorization: `Bearer ${E2E_ADMIN_TOKEN}` });
    expect(del.status).toBe(400);
    expect(await footprint()).toEqual(before);
    expect((await h.admin().get("/dead-letters")).body.total).toBe(1);
  });

  it("a wrong method: 405 with Allow, and nothing done", async () => {
    const before = await footprint();
    const cases: Array<[string, string, string]> = [
      ["get", "/sources/okta/reconcile", "POST"],
      ["get", "/sources/okta/resync", "POST"],
      ["put", "/status", "GET, HEAD"],
      ["post", "/status", "GET, HEAD"],
      ["delete", "/dead-letters/retry", "POST"],
      ["get", "/dead-letters/retry", "POST"],
      ["post", `/dead-letters/okta/user/${deadId}`, "DELETE"],
      ["delete", `/sources/okta/users/${userId}`, "GET, HEAD"],
      ["patch", "/reconcile-runs/x/confirm", "POST"],
      ["post", "/openapi.json", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await (h.http as unknown as Record<string, (p: string) => import("supertest").Test>)
        [method]?.(`/admin/v1${path}`)
        .set({ Authorization: `Bearer ${E2E_ADMIN_TOKEN}` })
        .send({});
      expect(res?.status, `${method} ${path}`).toBe(405);
      expect(res?.headers.allow).toBe(allow);
      expect(res?.body.error.code).toBe("method_not_allowed");
    }
    expect(await footprint()).toEqual(before);
    expect((await h.admin().get(`/sources/okta/users/${deadId}`)).body.state).toBe("dead");
  });

  it("no token, a wrong token, a source's token, a viewer's token: 401/403, and nothing done", async () => {
    const before = await footprint();
    const writes: Array<[string, unknown]> = [
      ["/sources/okta/reconcile", { dryRun: false }],
      ["/sources/okta/resync", {}],
      ["/dead-letters/retry", {}],
      [`/dead-letters/okta/user/${deadId}/retry`, {}],
    ];
    for (const [path, body] of writes) {
      const none = await h.http.post(`/admin/v1${path}`).send(body as object);
      expect(none.status, path).toBe(401);
      expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(none.body.error).toMatchObject({ code: "unauthorized", message: expect.any(String) });
      for (const token of ["wrong-token", "okta-token", `${E2E_ADMIN_TOKEN}x`, ""]) {
        const res = await h.http
          .post(`/admin/v1${path}`)
          .set({ Authorization: `Bearer ${token}` })
          .send(body as object);
        expect(res.status, `${path} with ${token || "an empty token"}`).toBe(401);
      }
      const basic = await h.http
        .post(`/admin/v1${path}`)
        .set({ Authorization: `Basic ${Buffer.from(`admin:${E2E_ADMIN_TOKEN}`).toString("base64")}` })
        .send(body as object);
      expect(basic.status, `${path} with Basic`).toBe(401);
      const viewer = await h.admin(E2E_VIEWER_TOKEN).post(path, body);
      expect(viewer.status, `${path} as viewer`).toBe(403);
      expect(viewer.body.error.code).toBe("forbidden");
    }
    const discard = await h.admin(E2E_VIEWER_TOKEN).delete(`/dead-letters/okta/user/${deadId}`);
    expect(discard.status).toBe(403);
    const wrongMethodNoToken = await h.http.get("/admin/v1/sources/okta/reconcile");
    expect(wrongMethodNoToken.status).toBe(401);
    expect(await footprint()).toEqual(before);

    const cliNone = await cli(["status"], {});
    expect(cliNone.code).toBe(2);
    expect(cliNone.stderr).toMatch(/admin token is needed/);
    const cliWrong = await cli(["dead-letters", "retry"], { SCIM_BRIDGE_ADMIN_TOKEN: "wrong-token" });
    expect(cliWrong.code).toBe(1);
    expect(cliWrong.stderr).toMatch(/401 unauthorized/);
    const cliViewer = await cli(["dead-letters", "retry"], { SCIM_BRIDGE_ADMIN_TOKEN: E2E_VIEWER_TOKEN });
    expect(cliViewer.code).toBe(1);
    expect(cliViewer.stderr).toMatch(/403 forbidden: This action needs the admin role/);
    expect(await footprint()).toEqual(before);
  });

  it("the bad requests' log lines hold no token and no userName; none is an error line", () => {
    const text = lines.join("\n");
    for (const word of [
      E2E_ADMIN_TOKEN,
      E2E_VIEWER_TOKEN,
      "wrong-token",
      "okta-token",
      "kept.user",
      "refused.user",
    ]) {
      expect(text.includes(word), word).toBe(false);
    }
    const adminErrors = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => (l.level as number) >= 50 && JSON.stringify(l).includes("/admin/v1"));
    expect(adminErrors).toEqual([]);
  });
});
