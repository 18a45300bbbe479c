/**
 * Probes g (the operator's surface): the platform is down (503 to every call). While it is, the
 * operator sees work waiting, not done and not lost: `GET /status` and `scim-bridge status` not
 * idle with the sync queue's jobs per state, each user `retrying` (or `pending`) with a transient
 * `lastError`, and in `/metrics` the queue depths and the retry and failure counters. Once the
 * platform answers again everything drains: idle, every user on the platform, no dead letter, the
 * queue gauges back to 0. No line written meanwhile holds a userName.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const lines: string[] = [];

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

/** Every series of `name` in /metrics' text with these labels, summed (0 when none). */
function sum(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) total += Number(m[3]);
  }
  return total;
}

const NAMES = Array.from({ length: 6 }, (_, i) => `outage.person${i}@example.com`);

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-g-outage", {
    log: { level: "debug", destination: sink },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: a platform outage, seen and drained", () => {
  it("shows the waiting work in status, the CLI and the metrics while the platform is down, then drains", async () => {
    h.emulator.setFaults([{ id: "outage", type: "error", status: 503 }]);
    const ids: string[] = [];
    for (const name of NAMES) ids.push((await h.scim("okta").createUser(name)).id);

    // The retries show: a job retried (delayed in the sync queue), and the platform counters.
    const during = await waitFor(
      async () => {
        const text = (await h.http.get("/metrics")).text;
        return sum(text, "jobs_total", { queue: "sync", outcome: "retried" }) > 0 &&
          sum(text, "queue_jobs", { queue: "sync", state: "delayed" }) > 0
          ? text
          : undefined;
      },
      { timeoutMs: 20_000, what: "a retried sync job, delayed" },
    );
    expect(sum(during, "platform_retries_total", { reason: "server" })).toBeGreaterThan(0);
    expect(sum(during, "platform_failures_total", { class: "transient" })).toBeGreaterThan(0);
    expect(sum(during, "platform_failures_total", { class: "permanent" })).toBe(0);
    expect(sum(during, "sync_jobs_total", { kind: "user", outcome: "retry" })).toBeGreaterThan(0);
    expect(sum(during, "queue_depth", { queue: "sync", state: "delayed" })).toBe(
      sum(during, "queue_jobs", { queue: "sync", state: "delayed" }),
    );
    expect(sum(during, "dead_letters", { source: "okta" })).toBe(0);
    expect(sum(during, "metrics_redis_read_ok")).toBe(1);

    const status = await h.admin().get("/status");
    expect(status.body.idle).toBe(false);
    expect(status.body.pending).toBeGreaterThan(0);
    expect(status.body.deadLetters).toBe(0);
    const sync = status.body.queues.sync as Record<string, number>;
    const busy = ["waiting", "active", "delayed", "prioritized", "waiting-children"].reduce(
      (n, s) => n + (sync[s] ?? 0),
      0,
    );
    expect(busy, JSON.stringify(sync)).toBeGreaterThan(0);

    const cliStatus = await cli("status");
    expect(cliStatus.code).toBe(1);
    expect(cliStatus.stdout).toMatch(/idle: false/);
    expect(cliStatus.stdout).toMatch(/dead letters: 0/);
    expect(cliStatus.stdout).toMatch(/^ {2}sync: .*delayed \d+/m);

    // Each user says why it waits: retrying (or pending), with a transient platform error.
    const retrying = await waitFor(
      async () => {
        const res = await h.admin().get(`/sources/okta/users/${ids[0]}`);
        return res.body.lastError ? res.body : undefined;
      },
      { timeoutMs: 20_000, what: "the user's lastError" },
    );
    expect(["retrying", "pending"]).toContain(retrying.state);
    expect(retrying.platformId).toBeNull();
    expect(retrying.lastError).toMatchObject({ code: expect.stringMatching(/^platform_/) });
    expect(String(retrying.lastError.message)).toMatch(/503/);
    const one = await cli("status", `okta/user/${ids[0]}`);
    expect(one.code).toBe(1);
    expect(one.stdout).toMatch(/retrying|pending/);

    // The platform is back: everything drains without an operator's hand.
    h.emulator.setFaults([]);
    await h.waitForIdle(60_000);
    for (const name of NAMES) expect(h.platformUsers().get(name)?.active, name).toBe(true);
    const after = (await h.http.get("/metrics")).text;
    for (const state of ["waiting", "active", "delayed", "prioritized", "waiting-children"]) {
      expect(sum(after, "queue_jobs", { queue: "sync", state }), state).toBe(0);
      expect(sum(after, "queue_jobs", { queue: "lifecycle", state }), state).toBe(0);
    }
    expect(sum(after, "dead_letters", { source: "okta" })).toBe(0);
    expect(sum(after, "jobs_total", { queue: "sync", outcome: "dead_lettered" })).toBe(0);
    expect(await cli("status").then((r) => r.code)).toBe(0);
    for (const id of ids) {
      const res = await h.admin().get(`/sources/okta/users/${id}`);
      expect(res.body, id).toMatchObject({ state: "synced", lastError: null });
    }

    // Logs: warn lines for the retries, no userName, no error line for a transient failure.
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.some((l) => l.level === 40 && /retry/.test(String(l.msg)))).toBe(true);
    expect(parsed.filter((l) => (l.level as number) >= 50)).toEqual([]);
    for (const line of lines) expect(line.includes("outage.person"), line).toBe(false);
  }, 90_000);
});
