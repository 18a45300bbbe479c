/**
 * Probes g (the operator's surface): every metric docs/operations.md names ("Metrics") is in
 * `GET /metrics` under that name, of a counter, gauge or histogram type, and each of its series
 * carries exactly the labels the table names, with the documented label values, after a bridge has
 * done the work that sets them: SCIM traffic, an intake over its rate limit, an Okta hook delivery,
 * a 429 and a 503 from the platform, a dead letter, a reconciliation that finds drift, a resync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge, deadLetteredUser } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

/** name -> [type, labels] as docs/operations.md's table says. */
const DOCUMENTED: Record<string, [string, string[]]> = {
  http_requests_total: ["counter", ["method", "route", "status"]],
  http_request_duration_seconds: ["histogram", ["method", "route"]],
  scim_operations_total: ["counter", ["source", "resource", "operation", "status"]],
  intake_rate_limited_total: ["counter", ["source"]],
  queue_jobs: ["gauge", ["queue", "state"]],
  queue_depth: ["gauge", ["queue", "state"]],
  sync_jobs_total: ["counter", ["kind", "outcome"]],
  sync_job_duration_seconds: ["histogram", ["kind"]],
  platform_requests_total: ["counter", ["operation", "status"]],
  platform_request_duration_seconds: ["histogram", ["operation"]],
  platform_retries_total: ["counter", ["operation", "reason"]],
  platform_rate_limited_total: ["counter", ["operation"]],
  platform_failures_total: ["counter", ["operation", "class"]],
  scim_bridge_hook_events_total: ["counter", ["source", "hook", "event_type", "outcome"]],
  dead_letters_total: ["counter", ["source", "code"]],
  dead_letters: ["gauge", ["source"]],
  jobs_total: ["counter", ["queue", "outcome"]],
  job_duration_seconds: ["histogram", ["queue", "outcome"]],
  drift_found_total: ["counter", ["source", "kind"]],
  drift_repaired_total: ["counter", ["source", "kind"]],
  reconcile_runs_total: ["counter", ["source", "outcome"]],
  metrics_redis_read_ok: ["gauge", []],
};

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): { types: Map<string, string>; series: Series[] } {
  const types = new Map<string, string>();
  const series: Series[] = [];
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] as string, type[2] as string);
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1] as string, x[2] as string]),
    );
    series.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return { types, series };
}

/** The series of a metric (a histogram's `_bucket`, `_sum` and `_count` lines, without `le`). */
function seriesOf(all: Series[], name: string, type: string): Series[] {
  const names = type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
  return all
    .filter((s) => names.includes(s.name))
    .map((s) => {
      const { le: _le, ...labels } = s.labels;
      return { ...s, labels };
    });
}

beforeAll(async () => {
  h = await startTestBridge("probes-g-metrics", {
    sources: {
      okta: { tokens: ["okta-token"], hooks: { okta: { secret: "okta-hook-secret-g" } } },
      slow: { tokens: ["slow-token"], rateLimit: { requestsPerSecond: 1 } },
    },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: the metrics table of docs/operations.md", () => {
  it("every named metric is there, of its type, with exactly its labels and the documented values", async () => {
    const scim = h.scim("okta");
    const a = await scim.createUser("metrics.a@example.com");
    await h.waitForIdle();
    // A 429 (Retry-After 1) and a 503, both healed by the client's retries.
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 1,
      count: 1,
      match: { operation: "createUser" },
    });
    h.emulator.addFault({ type: "error", status: 503, count: 1, match: { operation: "createUser" } });
    await scim.createUser("metrics.b@example.com");
    await h.waitForIdle();
    // A dead letter.
    await deadLetteredUser(h, "okta", "metrics.c@example.com", 20_000);
    // An intake over its rate limit (1/s, burst 2).
    const slow = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.http.get("/scim/v2/slow/Users").set({ Authorization: "Bearer slow-token" }),
      ),
    );
    expect(slow.map((r) => r.status)).toContain(429);
    // An Okta hook delivery with no events, and one a hook ignores.
    const hook = await h.http
      .post("/hooks/okta/okta")
      .set({ Authorization: "okta-hook-secret-g", "Content-Type": "application/json" })
      .send({
        data: {
          events: [{ eventType: "user.session.start", eventId: "e1", published: new Date().toISOString() }],
        },
      });
    expect(hook.status).toBe(200);
    // Drift found by a dry run, repaired by a real one; a resync.
    const pid = (await h.admin().get(`/sources/okta/users/${a.id}`)).body.platformId as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    for (const dryRun of [true, false]) {
      const run = await h.admin().post("/sources/okta/reconcile", { dryRun });
      await waitFor(
        async () => (await h.admin().get(`/reconcile-runs/${run.body.runId}`)).body.state === "succeeded",
        { timeoutMs: 20_000, what: "the run" },
      );
    }
    await h.waitForIdle();
    const resync = await h.admin().post("/sources/okta/resync", {});
    await waitFor(
      async () => (await h.admin().get(`/resyncs/${resync.body.id}`)).body.state === "succeeded",
      {
        timeoutMs: 20_000,
        what: "the resync",
      },
    );
    await h.waitForIdle();

    const res = await h.http.get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const { types, series } = parse(res.text);
    const problems: string[] = [];
    for (const [name, [type, labels]] of Object.entries(DOCUMENTED)) {
      if (types.get(name) !== type) problems.push(`${name}: type ${types.get(name)}, not ${type}`);
      const own = seriesOf(series, name, type);
      if (own.length === 0) problems.push(`${name}: no series`);
      for (const s of own) {
        const got = Object.keys(s.labels).sort().join(",");
        if (got !== [...labels].sort().join(","))
          problems.push(`${name}: labels ${got}, not ${labels.join(",")}`);
      }
    }
    expect(problems).toEqual([]);

    const values = (name: string, label: string) =>
      new Set(series.filter((s) => s.name === name).map((s) => s.labels[label]));
    // queue_jobs: every queue and state of the table, read at scrape time.
    for (const queue of ["sync", "lifecycle", "reconcile", "resync", "reconcile-schedule"])
      expect(values("queue_jobs", "queue"), queue).toContain(queue);
    for (const state of ["waiting", "active", "delayed", "prioritized", "waiting-children", "failed"])
      expect(values("queue_jobs", "state"), state).toContain(state);
    expect(values("dead_letters", "source")).toEqual(new Set(["okta", "slow"]));
    expect(values("dead_letters_total", "code")).toContain("platform_forbidden");
    for (const reason of ["server", "rate_limited"])
      expect(values("platform_retries_total", "reason")).toContain(reason);
    expect(values("platform_failures_total", "class")).toContain("permanent");
    for (const outcome of ["synced", "dead"]) expect(values("sync_jobs_total", "outcome")).toContain(outcome);
    for (const queue of ["sync", "reconcile", "resync"])
      expect(values("jobs_total", "queue")).toContain(queue);
    for (const outcome of ["completed", "dead_lettered"])
      expect(values("jobs_total", "outcome")).toContain(outcome);
    expect(values("drift_found_total", "kind")).toContain("activeMismatch");
    expect(values("drift_repaired_total", "kind")).toContain("activeMismatch");
    expect(values("http_requests_total", "route")).toContain("/scim/v2/:source/Users");
    expect(values("intake_rate_limited_total", "source")).toEqual(new Set(["slow"]));
    expect(values("scim_bridge_hook_events_total", "hook")).toEqual(new Set(["okta"]));
    expect(values("scim_bridge_hook_events_total", "event_type")).toContain("user.session.start");
    const readOk = series.find((s) => s.name === "metrics_redis_read_ok");
    expect(readOk?.value).toBe(1);
  }, 80_000);
});
