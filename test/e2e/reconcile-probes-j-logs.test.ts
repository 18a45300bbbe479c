/**
 * Probes-j (logs of reconciliation and resyncs): the platform's refusal may name the person it
 * refuses for (a bulk deactivation refused for the account's owner, a user read refused with the
 * user's login in its detail). The run or resync that fails on it keeps the reason in its report
 * (admin API), and its log lines carry the failure's code, operation and status: no personal data
 * (docs/operations.md, "What the logs hold").
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let proxy: FaultProxy;
const lines: string[] = [];
const ORPHAN = "zz.orphan.owner.j@example.com";
const OFF = "zz.off.person.j@example.com";

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("reconcile-probes-j-logs", {
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
      reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 1, keepRuns: 50 },
    },
  });
  proxy.upstream = h.platformUrl;
  await h.start();
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

async function ended<T extends { state: string }>(path: string): Promise<T> {
  return waitFor(
    async () => {
      const body = (await h.admin().get(path)).body as T;
      return ["queued", "running"].includes(body.state) ? null : body;
    },
    { what: `${path} to end` },
  );
}

describe("a run or resync failing on a refusal that names a person", () => {
  it("a run: the reason is in its report, not in the log", async () => {
    await h.scim("okta").createUser("zz.someone.j@example.com");
    await h.waitForIdle();
    h.emulator.drift({ action: "addOrphanUser", user: { userName: ORPHAN } });
    proxy.rule = (call) =>
      call.method === "POST" && call.path === "/api/v1/users/bulk"
        ? {
            kind: "answer",
            status: 400,
            body: {
              error: { code: "OWNER", message: `${ORPHAN} owns the account and cannot be deactivated` },
            },
          }
        : undefined;
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    const run = await ended<{ state: string; error?: string }>(`/reconcile-runs/${started.body.runId}`);
    proxy.rule = undefined;
    expect(run.state).toBe("failed");
    expect(run.error).toContain(ORPHAN);
    const failed = lines.filter((line) => line.includes("reconcile: run failed"));
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0] as string)).toMatchObject({ operation: "bulkUsers", status: 400 });
    expect(lines.filter((line) => line.includes(ORPHAN))).toEqual([]);
  });

  it("a resync: the reason is in its report, not in the log", async () => {
    const scim = h.scim("okta");
    const off = await scim.createUser(OFF);
    expect((await scim.patchUser(off.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    await h.waitForIdle();
    proxy.rule = (call) =>
      call.method === "GET" && call.path.startsWith("/api/scim/v2/Users/")
        ? { kind: "answer", status: 403, body: { detail: `reading ${OFF} is not allowed`, status: "403" } }
        : undefined;
    const started = await h.admin().post("/sources/okta/resync", { users: [off.id] });
    const op = await ended<{ state: string; error?: string }>(`/resyncs/${started.body.id}`);
    proxy.rule = undefined;
    expect(op.state).toBe("failed");
    expect(op.error).toContain(OFF);
    const failed = lines.filter((line) => line.includes('"resync: failed"'));
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0] as string)).toMatchObject({ operation: "getUser", status: 403 });
    expect(lines.filter((line) => line.includes(OFF))).toEqual([]);
  });
});
