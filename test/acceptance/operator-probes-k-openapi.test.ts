/**
 * Probes k (the operator's surface): the admin API answers what its OpenAPI description says. An
 * operator (or a client generated from /admin/v1/openapi.json) trusts the description: every
 * answer of every route, success and error alike, must be valid against the schema the
 * description gives for that route and status, and every status a route answers must be there.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  E2E_VIEWER_TOKEN,
  type TestBridge,
  startTestBridge,
  deadLetteredUser,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let openapi: {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
};
let userId: string;
let deadId: string;
let groupId: string;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

/** What the description gets wrong, one line each; a test asserts the list is empty. */
let problems: string[] = [];

/** Checks one answer of `method template` against the description's response for its status. */
function check(template: string, method: string, res: { status: number; body: unknown }): void {
  const what = `${method.toUpperCase()} ${template} ${res.status}`;
  const op = openapi.paths[template]?.[method];
  if (!op) {
    problems.push(`${method.toUpperCase()} ${template} is not described`);
    return;
  }
  const schema = op.responses[String(res.status)]?.content?.["application/json"]?.schema;
  if (!op.responses[String(res.status)]) problems.push(`${what}: status not listed`);
  else if (!schema) problems.push(`${what}: no schema for the JSON it answers`);
  else {
    const validate = ajv.compile(schema);
    if (!validate(res.body)) {
      problems.push(
        `${what}: ${JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`))} for ${JSON.stringify(res.body).slice(0, 300)}`,
      );
    }
  }
}

beforeAll(async () => {
  h = await startTestBridge("probes-k-openapi", {
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
  openapi = (await h.http.get("/admin/v1/openapi.json")).body;
  userId = (await h.scim("okta").createUser("spec.user@example.com")).id;
  groupId = (await h.scim("okta").createGroup("Spec Group", [userId])).id;
  await h.waitForIdle();
  deadId = await deadLetteredUser(h, "okta", "spec.refused@example.com", 20_000);
}, 40_000);
afterAll(async () => {
  await h?.close();
});

describe("probes k: the admin API answers as its OpenAPI description says", () => {
  it("every success answer is valid against the described schema of its route and status", async () => {
    problems = [];
    const a = h.admin();
    check("/status", "get", await a.get("/status"));
    check("/sources", "get", await a.get("/sources"));
    check(
      "/sources/{source}/users",
      "get",
      await a.get("/sources/okta/users?userName=spec.user@example.com"),
    );
    check("/sources/{source}/groups", "get", await a.get("/sources/okta/groups?displayName=Spec%20Group"));
    check("/sources/{source}/users/{id}", "get", await a.get(`/sources/okta/users/${userId}`));
    check("/sources/{source}/users/{id}", "get", await a.get(`/sources/okta/users/${deadId}`));
    check("/sources/{source}/groups/{id}", "get", await a.get(`/sources/okta/groups/${groupId}`));
    check("/dead-letters", "get", await a.get("/dead-letters"));

    const started = await a.post("/sources/okta/reconcile", { dryRun: true });
    check("/sources/{source}/reconcile", "post", started);
    await waitFor(
      async () =>
        ["succeeded", "failed"].includes((await a.get(`/reconcile-runs/${started.body.runId}`)).body.state),
      { timeoutMs: 20_000, what: "the dry run to end" },
    );
    check("/reconcile-runs/{runId}", "get", await a.get(`/reconcile-runs/${started.body.runId}`));
    check("/reconcile-runs", "get", await a.get("/reconcile-runs"));

    const resync = await a.post("/sources/okta/resync", { users: [userId] });
    check("/sources/{source}/resync", "post", resync);
    await h.waitForIdle();
    check("/resyncs/{id}", "get", await a.get(`/resyncs/${resync.body.id}`));
    check("/resyncs", "get", await a.get("/resyncs"));

    check(
      "/dead-letters/{source}/{kind}/{id}/retry",
      "post",
      await a.post(`/dead-letters/okta/user/${deadId}/retry`),
    );
    await h.waitForIdle();
    check("/dead-letters/retry", "post", await a.post("/dead-letters/retry", {}));
    // The audit of what was asked above (its entries carry what each action asked).
    check("/audit", "get", await a.get("/audit?limit=500"));
    expect(problems).toEqual([]);
  }, 60_000);

  it("every error answer is listed for its route, with the described error body", async () => {
    problems = [];
    const a = h.admin();
    // Unknown source, run, resync, user: 404.
    check(
      "/sources/{source}/reconcile",
      "post",
      await a.post("/sources/nowhere/reconcile", { dryRun: true }),
    );
    check("/reconcile-runs/{runId}", "get", await a.get("/reconcile-runs/no-such-run"));
    check("/resyncs/{id}", "get", await a.get("/resyncs/no-such-resync"));
    check("/sources/{source}/users/{id}", "get", await a.get("/sources/okta/users/no-such-user"));
    check("/dead-letters/{source}/{kind}/{id}", "delete", await a.delete("/dead-letters/okta/user/nobody"));
    // A body that is not JSON, or not the schema: 400.
    check(
      "/sources/{source}/reconcile",
      "post",
      await h.http
        .post("/admin/v1/sources/okta/reconcile")
        .set("Authorization", "Bearer e2e-admin-token")
        .set("Content-Type", "application/json")
        .send("{not json"),
    );
    check("/sources/{source}/resync", "post", await a.post("/sources/okta/resync", { users: "everyone" }));
    check("/sources/{source}/users", "get", await a.get("/sources/okta/users"));
    // A body over the limit (server.bodyLimit, 5mb here): 413, and says so in its code.
    const huge = await a.post("/sources/okta/resync", { users: ["x".repeat(6 * 1024 * 1024)] });
    check("/sources/{source}/resync", "post", huge);
    expect(huge.body.error?.code).toBe("payload_too_large");
    // A settled run confirmed: 409.
    const run = await a.post("/sources/okta/reconcile", { dryRun: true });
    await h.waitForIdle();
    check(
      "/reconcile-runs/{runId}/confirm",
      "post",
      await a.post(`/reconcile-runs/${run.body.runId}/confirm`),
    );
    // No token, a viewer's token for a write: 401, 403.
    check("/status", "get", await h.http.get("/admin/v1/status"));
    check(
      "/sources/{source}/reconcile",
      "post",
      await h.admin(E2E_VIEWER_TOKEN).post("/sources/okta/reconcile", { dryRun: true }),
    );
    expect(problems).toEqual([]);
  }, 30_000);
});
