import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_VIEWER_TOKEN, type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

/** The admin surface as src/bridge.ts builds it by itself (no routers brought by the test). */
describe("the bridge's own admin surface", () => {
  let h: TestBridge;

  beforeAll(async () => {
    h = await startTestBridge("e2e-bridge-admin");
    await h.scim("okta").createUser("wired@example.com");
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("answers status as the contract says, idle while the scheduler waits for its next run", async () => {
    const res = await h.admin(E2E_VIEWER_TOKEN).get("/status");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ idle: true, pending: 0, deadLetters: 0, queues: expect.any(Object) });
    expect(res.body.sources.okta.users).toBe(1);
  });

  it("runs a dry reconciliation to the end and reports a converged source", async () => {
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const res = await h.admin(E2E_VIEWER_TOKEN).get(`/reconcile-runs/${started.body.runId}`);
        return res.body.state === "succeeded" ? res.body : null;
      },
      { what: "the run to finish" },
    );
    expect(run).toMatchObject({
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
    await h.waitForIdle();
  });

  it("serves Bull Board behind admin authentication, and the OpenAPI description", async () => {
    expect((await h.http.get("/admin/queues/")).status).toBe(401);
    expect(
      (await h.http.get("/admin/queues/api/queues").set("Authorization", `Bearer ${E2E_VIEWER_TOKEN}`))
        .status,
    ).toBe(200);
    const openapi = await h.http.get("/admin/v1/openapi.json");
    expect(openapi.body.paths["/reconcile-runs/{runId}"]).toBeDefined();
  });
});
