import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../../src/bridge.js";
import { createLogger } from "../../../src/observability/logger.js";
import {
  E2E_ADMIN_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  startTestBridge,
} from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

/** How often `"module":` appears in one raw JSON log line (a JSON parser would keep only the last). */
const moduleKeys = (line: string) => line.split('"module":').length - 1;

/**
 * Every log line carries one `module` key: a child logger that adds `module` under another one
 * that already did would write the key twice (pino does not merge bindings).
 */
describe("log lines carry one module key (bridge + emulator over HTTP)", () => {
  let h: TestBridge;
  let bridge: RunningBridge;
  const lines: string[] = [];

  beforeAll(async () => {
    h = await startTestBridge("e2e-log-module", { start: false });
    const logger = createLogger("debug", {}, { write: (chunk: string) => void lines.push(chunk) });
    bridge = await startBridge(h.config, { role: "all", logger });
    const http = supertest(bridge.url!);
    const created = await http
      .post("/scim/v2/okta/Users")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({ schemas: [USER_SCHEMA], userName: "logged@example.com", active: true });
    expect(created.status).toBe(201);
    await waitFor(() => bridge.isIdle(), { what: "the user to sync" });
    const run = await http
      .post("/admin/v1/sources/okta/reconcile")
      .set({ Authorization: `Bearer ${E2E_ADMIN_TOKEN}` })
      .send({ dryRun: true });
    expect(run.status).toBe(202);
    await waitFor(
      async () => {
        const got = await http
          .get(`/admin/v1/reconcile-runs/${run.body.runId}`)
          .set({ Authorization: `Bearer ${E2E_ADMIN_TOKEN}` });
        return got.body.state === "succeeded";
      },
      { what: "the run to finish" },
    );
  }, 30_000);

  afterAll(async () => {
    await bridge?.close();
    await h?.close();
  });

  const linesSaying = (msg: string) =>
    lines.flatMap((chunk) => chunk.split("\n")).filter((line) => line.includes(`"msg":"${msg}`));

  it("a platform client's line", () => {
    const calls = linesSaying("platform call");
    expect(calls.length).toBeGreaterThan(0);
    for (const line of calls) {
      expect(moduleKeys(line)).toBe(1);
      expect(JSON.parse(line).module).toBe("platform-client");
    }
  });

  it("a reconciliation run's line", () => {
    const finished = linesSaying("reconcile: run finished");
    expect(finished).toHaveLength(1);
    expect(moduleKeys(finished[0]!)).toBe(1);
    expect(JSON.parse(finished[0]!).module).toBe("reconcile");
  });

  it("every line the bridge wrote", () => {
    const all = lines.flatMap((chunk) => chunk.split("\n")).filter((line) => line.length > 0);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((line) => moduleKeys(line) > 1)).toEqual([]);
  });
});
