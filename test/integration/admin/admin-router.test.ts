import type { AddressInfo } from "node:net";
import express from "express";
import { Redis } from "ioredis";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueStatus } from "../../../jobs/queue-status.js";
import { type AdminJobs, startAdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import { createAdminRouter } from "../../../routes/admin/admin-router.js";
import { createQueueBoardRouter } from "../../../routes/admin/queue-board-router.js";
import { runAdminCommand } from "../../../src/cli/admin-commands.js";
import { hashToken } from "../../../src/config/tokens.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { httpMetricsMiddleware } from "../../../routes/middleware/http-metrics.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetricsRegistry } from "../../../src/observability/metrics.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const ADMIN = "admin-secret-token";
const VIEWER = "viewer-secret-token";
const SOURCE_TOKEN = "okta-scim-token";

describe("admin API (/admin/v1) against real Redis", () => {
  const prefix = testPrefix("admin-router");
  const names = {
    sync: `sync-${prefix}`,
    lifecycle: `lifecycle-${prefix}`,
    reconcile: `reconcile-${prefix}`,
    resync: `resync-${prefix}`,
  };
  const config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    admin: { tokens: [hashToken(ADMIN), { token: VIEWER, role: "viewer", name: "ops-viewer" }] },
    redis: { url: TEST_REDIS_URL, prefix },
    sources: { okta: { tokens: [SOURCE_TOKEN] }, entra: { tokens: ["entra-token"] } },
  });
  let redis: Redis;
  let queueRedis: Redis;
  let jobs: AdminJobs;
  let directory: RedisDirectoryStore;
  let syncState: RedisSyncStateStore;
  let queueStatus: ReturnType<typeof createQueueStatus>;
  const notified: EntityRef[] = [];
  let http: ReturnType<typeof supertest>;
  let app: express.Express;

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL);
    queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    directory = new RedisDirectoryStore({
      redis,
      prefix,
      matchesFilter,
      notify: async (refs) => {
        notified.push(...refs);
      },
    });
    syncState = new RedisSyncStateStore(redis, prefix);
    queueStatus = createQueueStatus({ connection: queueRedis, prefix, directory, names });
    const logger = createLogger("silent");
    jobs = await startAdminJobs({
      config,
      connection: queueRedis,
      redis,
      directory,
      syncState,
      queueStatus,
      logger,
      names,
    });
    app = express();
    app.use(
      "/admin/v1",
      createAdminRouter({ service: jobs.service, principals: jobs.principals, audit: jobs.audit, logger }),
    );
    app.use("/admin/queues", createQueueBoardRouter({ principals: jobs.principals, queues: jobs.queues }));
    http = supertest(app);
  });

  afterAll(async () => {
    await jobs?.close();
    await queueStatus?.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
    await queueRedis.quit();
  });

  describe("authentication and roles", () => {
    it("refuses a request without a token with a JSON 401", async () => {
      const res = await http.get("/admin/v1/status");
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    });

    it("refuses a source's SCIM token, and an unknown token", async () => {
      for (const token of [SOURCE_TOKEN, "entra-token", "nope"]) {
        const res = await http.get("/admin/v1/status").set(as(token));
        expect(res.status).toBe(401);
      }
    });

    it("lets a viewer read but not trigger, confirm or retry (403), and audits the refusal", async () => {
      expect((await http.get("/admin/v1/status").set(as(VIEWER))).status).toBe(200);
      const attempts = [
        http.post("/admin/v1/sources/okta/reconcile").set(as(VIEWER)).send({ dryRun: true }),
        http.post("/admin/v1/sources/okta/resync").set(as(VIEWER)).send({}),
        http.post("/admin/v1/dead-letters/retry").set(as(VIEWER)).send({}),
        http.post("/admin/v1/reconcile-runs/x/confirm").set(as(VIEWER)),
        http.delete("/admin/v1/dead-letters/okta/user/x").set(as(VIEWER)),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe("forbidden");
      }
      const audit = await http.get("/admin/v1/audit").set(as(ADMIN));
      const refused = audit.body.items.filter((e: { outcome: string }) => e.outcome === "refused");
      expect(refused.length).toBeGreaterThanOrEqual(5);
      expect(refused[0].actor).toBe("ops-viewer");
      expect((await http.get("/admin/v1/reconcile-runs").set(as(VIEWER))).status).toBe(200);
    });

    it("guards Bull Board: 401 without a token, served to viewers and admins", async () => {
      expect((await http.get("/admin/queues/")).status).toBe(401);
      expect((await http.get("/admin/queues/").set(as(SOURCE_TOKEN))).status).toBe(401);
      const viewer = await http.get("/admin/queues/api/queues").set(as(VIEWER));
      expect(viewer.status).toBe(200);
      expect(JSON.stringify(viewer.body)).toContain(names.reconcile);
      expect(viewer.body.queues.every((q: { readOnlyMode: boolean }) => q.readOnlyMode)).toBe(true);
      // Read-only is enforced by the server, not only by the UI.
      const pause = await http.put(`/admin/queues/api/queues/${names.resync}/pause`).set(as(VIEWER));
      expect(pause.status).toBeGreaterThanOrEqual(400);
      expect(await jobs.queues[2]?.isPaused()).toBe(false);
      const admin = await http.get("/admin/queues/api/queues").set(as(ADMIN));
      expect(admin.body.queues.every((q: { readOnlyMode: boolean }) => !q.readOnlyMode)).toBe(true);
    });
  });

  it("answers status with idle, pending, dead letters, queue counts and per-source counts", async () => {
    const res = await http.get("/admin/v1/status").set(as(ADMIN));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      idle: expect.any(Boolean),
      pending: expect.any(Number),
      deadLetters: expect.any(Number),
      queues: expect.objectContaining({ [names.sync]: expect.any(Object) }),
      sources: { okta: { users: expect.any(Number), groups: 0 }, entra: expect.any(Object) },
    });
  });

  it("starts a reconciliation (202 runId) and shows its report shape; bodies are validated", async () => {
    const res = await http.post("/admin/v1/sources/okta/reconcile").set(as(ADMIN)).send({ dryRun: true });
    expect(res.status).toBe(202);
    const runId = res.body.runId as string;
    expect(typeof runId).toBe("string");
    const run = await http.get(`/admin/v1/reconcile-runs/${runId}`).set(as(VIEWER));
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      state: "queued",
      dryRun: true,
      counts: {
        missing: 0,
        changed: 0,
        activeMismatch: 0,
        membership: 0,
        attributeValues: 0,
        deletedBehind: 0,
        orphans: 0,
      },
    });
    expect(await jobs.queues[0]?.getJob(`run-${runId}`)).toBeTruthy();
    const list = await http.get("/admin/v1/reconcile-runs?source=okta").set(as(ADMIN));
    expect(list.body.items.map((r: { runId: string }) => r.runId)).toContain(runId);

    const bad = await http.post("/admin/v1/sources/okta/reconcile").set(as(ADMIN)).send({ dryRun: "yes" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
    expect((await http.post("/admin/v1/sources/nope/reconcile").set(as(ADMIN)).send({})).status).toBe(404);
    expect((await http.get("/admin/v1/reconcile-runs/missing").set(as(ADMIN))).status).toBe(404);
    // Not awaiting confirmation: confirm and discard are refused with 409.
    expect((await http.post(`/admin/v1/reconcile-runs/${runId}/confirm`).set(as(ADMIN))).status).toBe(409);
  });

  it("reads a body as JSON whatever its Content-Type: a dry run sent as curl -d sends it is a dry run", async () => {
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "application/scim+json"]) {
      const res = await http
        .post("/admin/v1/sources/okta/reconcile")
        .set(as(ADMIN))
        .set("Content-Type", type)
        .send('{"dryRun":true}');
      expect(res.status).toBe(202);
      const run = await http.get(`/admin/v1/reconcile-runs/${res.body.runId}`).set(as(ADMIN));
      expect(run.body.dryRun).toBe(true);
    }
    // A body that is not JSON is refused, never read as {} (whose defaults would do more).
    const form = await http
      .post("/admin/v1/sources/okta/reconcile")
      .set(as(ADMIN))
      .set("Content-Type", "application/x-www-form-urlencoded")
      .send("dryRun=true");
    expect(form.status).toBe(400);
    expect(form.body.error.code).toBe("invalid_json");
    // No body at all is still the empty request.
    const none = await http.get("/admin/v1/status").set(as(ADMIN));
    expect(none.status).toBe(200);
  });

  it("counts admin requests answered before routing (401, bad JSON) as /admin/v1 in the HTTP metrics", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const counted = express();
    counted.use(httpMetricsMiddleware(registry));
    counted.use(
      "/admin/v1",
      createAdminRouter({
        service: jobs.service,
        principals: jobs.principals,
        audit: jobs.audit,
        logger: createLogger("silent"),
      }),
    );
    const client = supertest(counted);
    await client.get("/admin/v1/status").expect(401);
    await client
      .post("/admin/v1/sources/okta/reconcile")
      .set(as(ADMIN))
      .type("json")
      .send("{nope")
      .expect(400);
    await client.get("/admin/v1/status").set(as(ADMIN)).expect(200);
    const text = await registry.metrics();
    expect(text).toContain('http_requests_total{method="GET",route="/admin/v1",status="401"} 1');
    expect(text).toContain('http_requests_total{method="POST",route="/admin/v1",status="400"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="/admin/v1/status",status="200"} 1');
    expect(text).not.toContain('route="unmatched"');
  });

  it("takes the admin token from the Authorization header only, never from the URL or the body", async () => {
    const inQuery = await http.get(`/admin/v1/status?access_token=${ADMIN}`);
    expect(inQuery.status).toBe(401);
    expect(inQuery.body.error.message).toMatch(/Authorization header/);
    const inBody = await http
      .post("/admin/v1/sources/okta/reconcile")
      .send({ access_token: ADMIN, dryRun: true });
    expect(inBody.status).toBe(401);
    // Even beside a valid header, a token in the URL is refused (it is in the logs already).
    expect((await http.get(`/admin/v1/status?access_token=${ADMIN}`).set(as(ADMIN))).status).toBe(401);
    expect((await http.get("/admin/v1/status").set(as(ADMIN))).status).toBe(200);
  });

  it("confirms or discards a guarded run, once", async () => {
    for (const decision of ["confirm", "discard"] as const) {
      const run = await jobs.runs.createRun({ source: "okta", dryRun: false, trigger: "admin" });
      await jobs.runs.transition({ ...run, state: "awaiting-confirmation" }, ["queued"]);
      const res = await http.post(`/admin/v1/reconcile-runs/${run.runId}/${decision}`).set(as(ADMIN));
      expect(res.status).toBe(decision === "confirm" ? 202 : 200);
      expect(res.body.state).toBe(decision === "confirm" ? "queued" : "discarded");
      const again = await http.post(`/admin/v1/reconcile-runs/${run.runId}/${decision}`).set(as(ADMIN));
      expect(again.status).toBe(409);
      if (decision === "confirm") expect(await jobs.queues[0]?.getJob(`apply-${run.runId}`)).toBeTruthy();
      // The refused second attempt is audited too, with the state the run was in by then.
      const audit = await http.get("/admin/v1/audit?limit=5").set(as(ADMIN));
      const refused = audit.body.items.find(
        (e: { action: string; outcome: string; details?: { runId?: string } }) =>
          e.action === `reconcile.${decision}` && e.outcome === "refused" && e.details?.runId === run.runId,
      );
      // (queued, or already running or finished once a worker took the confirmed run's job)
      expect(refused?.details?.state).toEqual(expect.any(String));
      expect(refused?.details?.state).not.toBe("awaiting-confirmation");
    }
  });

  it("starts a resync (202 with an operation id) readable with progress", async () => {
    const res = await http
      .post("/admin/v1/sources/okta/resync")
      .set(as(ADMIN))
      .send({ users: ["u1"] });
    expect(res.status).toBe(202);
    const op = await http.get(`/admin/v1/resyncs/${res.body.id}`).set(as(VIEWER));
    expect(op.body).toMatchObject({
      state: "queued",
      total: 1,
      enqueued: 0,
      scope: { users: ["u1"], groups: [] },
    });
    const all = await http.post("/admin/v1/sources/okta/resync").set(as(ADMIN)).send({});
    expect(all.status).toBe(202);
    expect(
      (await http.post("/admin/v1/sources/okta/resync").set(as(ADMIN)).send({ users: "u1" })).status,
    ).toBe(400);
  });

  it("shows an entity's sync status, and 404 for one it does not know", async () => {
    const user = await directory.createUser("okta", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "ada@example.com",
      active: true,
    });
    const ref = { source: "okta", kind: "user" as const, id: user.resource.id };
    await syncState.setStatus({
      ref,
      state: "dead",
      platformId: "p-1",
      appliedGeneration: 1,
      lastSyncedAt: new Date().toISOString(),
      lastError: {
        message: "type clash",
        code: "attribute_type_clash",
        at: new Date().toISOString(),
        attempts: 3,
      },
    });
    const res = await http.get(`/admin/v1/sources/okta/users/${ref.id}`).set(as(VIEWER));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: ref.id,
      desired: { userName: "ada@example.com" },
      state: "dead",
      platformId: "p-1",
      lastApplied: { generation: 1 },
      lastError: { code: "attribute_type_clash" },
    });
    expect((await http.get("/admin/v1/sources/okta/users/nope").set(as(VIEWER))).status).toBe(404);
    expect((await http.get("/admin/v1/sources/okta/groups/nope").set(as(VIEWER))).status).toBe(404);
  });

  it("lists dead letters with reasons, retries one (resync requested, entity dirty) and discards one", async () => {
    const at = new Date().toISOString();
    const refs = ["d1", "d2", "d3"].map((id) => ({ source: "okta", kind: "user" as const, id }));
    for (const ref of refs) {
      await syncState.addDeadLetter({
        ref,
        reason: "platform said no",
        code: "platform_conflict",
        at,
        attempts: 8,
      });
    }
    const list = await http.get("/admin/v1/dead-letters?source=okta").set(as(VIEWER));
    expect(list.body.total).toBe(3);
    expect(list.body.items[0]).toMatchObject({ reason: "platform said no", code: "platform_conflict" });
    // A misspelt key is a 400 naming it, never a filter silently dropped (every source's letters).
    for (const path of ["/dead-letters?sorce=okta", "/reconcile-runs?page=2", "/audit?limt=10"]) {
      const typo = await http.get(`/admin/v1${path}`).set(as(VIEWER));
      expect(typo.status, path).toBe(400);
      expect(typo.body.error.code).toBe("invalid_request");
      expect(JSON.stringify(typo.body.error.details)).toMatch(/sorce|page|limt/);
    }

    const retry = await http.post("/admin/v1/dead-letters/okta/user/d1/retry").set(as(ADMIN));
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ retried: 1 });
    expect(await syncState.isResyncRequested(refs[0]!)).toBe(true);
    expect(notified.some((r) => r.id === "d1")).toBe(true);

    expect((await http.delete("/admin/v1/dead-letters/okta/user/d2").set(as(ADMIN))).status).toBe(200);
    expect((await http.delete("/admin/v1/dead-letters/okta/user/d2").set(as(ADMIN))).status).toBe(404);

    const rest = await http.post("/admin/v1/dead-letters/retry").set(as(ADMIN)).send({});
    expect(rest.body).toEqual({ retried: 1 });
    expect((await http.get("/admin/v1/dead-letters").set(as(ADMIN))).body.total).toBe(0);

    const audit = await http.get("/admin/v1/audit?limit=10").set(as(VIEWER));
    const actions = audit.body.items.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["dead-letters.retry", "dead-letters.discard"]));
    expect(audit.body.items[0]).toMatchObject({
      actor: "admin-token-1",
      role: "admin",
      at: expect.any(String),
    });
  });

  it("publishes an OpenAPI 3.1 description generated from the request schemas", async () => {
    const res = await http.get("/admin/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const reconcile = res.body.paths["/sources/{source}/reconcile"].post;
    expect(reconcile.requestBody.content["application/json"].schema.properties.dryRun.type).toBe("boolean");
    expect(reconcile.responses["202"]).toBeDefined();
    // The answers the design names are described: {"runId"} of a started run, the resync's id.
    const started = reconcile.responses["202"].content["application/json"].schema;
    expect(started.properties.runId.type).toBe("string");
    expect(started.required).toContain("runId");
    const resync =
      res.body.paths["/sources/{source}/resync"].post.responses["202"].content["application/json"];
    expect(resync.schema.required).toEqual(expect.arrayContaining(["id", "state"]));
    const run =
      res.body.paths["/reconcile-runs/{runId}"].get.responses["200"].content["application/json"].schema;
    expect(run.required).toEqual(expect.arrayContaining(["state", "dryRun", "counts"]));
    expect(Object.keys(run.properties.counts.properties)).toEqual([
      "missing",
      "changed",
      "activeMismatch",
      "membership",
      "attributeValues",
      "deletedBehind",
      "orphans",
    ]);
    expect(run.properties.state.enum).toEqual([
      "queued",
      "running",
      "succeeded",
      "failed",
      "awaiting-confirmation",
      "discarded",
    ]);
    expect(res.body.paths["/reconcile-runs/{runId}/confirm"].post["x-required-role"]).toBe("admin");
    expect(res.body.paths["/dead-letters/{source}/{kind}/{id}"].delete).toBeDefined();
    // Every field a letter is listed with is described, the reconciliation's once-only mark too.
    const letters =
      res.body.paths["/dead-letters"].get.responses["200"].content["application/json"].schema.properties
        .items;
    expect(Object.keys(letters.items.properties)).toEqual(
      expect.arrayContaining(["ref", "code", "reason", "operation", "at", "attempts", "autoRetriedAt"]),
    );
  });

  it("a discarded dead letter shows on the entity's status, and the CLI points to a resync, not a retry", async () => {
    const user = await directory.createUser("okta", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "discarded@example.com",
      active: true,
    });
    const ref = { source: "okta", kind: "user" as const, id: user.resource.id };
    const at = new Date().toISOString();
    const lastError = { message: "no", code: "platform_forbidden", at, attempts: 8 };
    await syncState.setStatus({ ref, state: "dead", lastError });
    await syncState.addDeadLetter({ ref, reason: "no", code: "platform_forbidden", at, attempts: 8 });
    expect((await http.delete(`/admin/v1/dead-letters/okta/user/${ref.id}`).set(as(ADMIN))).status).toBe(200);
    const status = await http.get(`/admin/v1/sources/okta/users/${ref.id}`).set(as(VIEWER));
    expect(status.body).toMatchObject({
      state: "dead",
      lastError: {
        code: "platform_forbidden",
        discardedBy: "admin-token-1",
        discardedAt: expect.any(String),
      },
    });

    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t), env: {}, fetch };
    try {
      const args = [`okta/user/${ref.id}`, "--url", url, "--token", VIEWER];
      expect(await runAdminCommand("status", args, io)).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const text = out.join("");
    expect(text).toMatch(/discarded: +by admin-token-1/);
    expect(text).toContain(`scim-bridge resync okta --user ${ref.id}`);
    expect(text).not.toContain("dead-letters retry");
  });

  it("the CLI talks to the same API over HTTP, with exit codes", async () => {
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t), env: {}, fetch };
    try {
      expect(
        await runAdminCommand(
          "reconcile",
          ["okta", "--dry-run", "--url", url, "--token", ADMIN, "--json"],
          io,
        ),
      ).toBe(0);
      const runId = JSON.parse(out.join("")).runId as string;
      expect((await jobs.runs.get(runId))?.dryRun).toBe(true);
      expect(await runAdminCommand("reconcile", ["okta", "--url", url, "--token", VIEWER], io)).toBe(1);
      expect(await runAdminCommand("dead-letters", ["list", "--url", url, "--token", VIEWER], io)).toBe(0);
      expect(
        await runAdminCommand("resync", ["okta", "--user", "u1", "--url", url, "--token", ADMIN], io),
      ).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
