import { AggregatorRegistry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";
import { E2E_VIEWER_TOKEN, type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

/**
 * The metrics a bridge sets while it works (docs/operations.md, Metrics): jobs of every queue,
 * the dead-letter list's size read at scrape time, drift found and repaired by reconciliation.
 */
describe("bridge metrics end to end (bridge + emulator over HTTP)", () => {
  let h: TestBridge;
  const users: string[] = [];

  /** The sum of the series of `name` with these labels (histograms: `metricName`), 0 when none. */
  const series = async (name: string, labels: Record<string, string>, metricName = name) => {
    const metric = await h.bridge.registry.getSingleMetric(name)?.get();
    return (metric?.values ?? [])
      .filter((v) => ((v as { metricName?: string }).metricName ?? name) === metricName)
      .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
      .reduce((sum, v) => sum + v.value, 0);
  };
  const reconcile = async (dryRun: boolean) => {
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun });
    expect(res.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = await h.admin(E2E_VIEWER_TOKEN).get(`/reconcile-runs/${res.body.runId}`);
        return ["queued", "running"].includes(got.body.state) ? null : got.body;
      },
      { what: "the run to settle" },
    );
    await h.waitForIdle();
    return run;
  };

  beforeAll(async () => {
    h = await startTestBridge("e2e-bridge-metrics", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" } },
        },
        entra: { tokens: ["entra-token"] },
      },
      // Only the runs this test asks for (a scheduled one would move the counts under it).
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
    });
    for (let i = 0; i < 4; i++) users.push((await h.scim("okta").createUser(`m${i}@example.com`)).id);
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("counts the jobs of the sync queue by outcome, with their durations", async () => {
    const completed = await series("jobs_total", { queue: "sync", outcome: "completed" });
    expect(completed).toBeGreaterThanOrEqual(4);
    expect(
      await series(
        "job_duration_seconds",
        { queue: "sync", outcome: "completed" },
        "job_duration_seconds_count",
      ),
    ).toBe(completed);
  });

  it("reports each source's dead letters at scrape time, once per cluster, and their removal", async () => {
    expect(await series("dead_letters", { source: "okta" })).toBe(0);
    // A type clash with the platform's attribute is permanent: the user is dead-lettered.
    h.emulator.seed({ attributes: [{ name: "department", type: "number" }] });
    const clash = await h.scim("okta").createUser("clash@example.com", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", SCHEMA_ENTERPRISE_USER],
      [SCHEMA_ENTERPRISE_USER]: { department: "R&D" },
    });
    await h.waitForIdle();
    expect(await series("dead_letters", { source: "okta" })).toBe(1);
    expect(await series("dead_letters", { source: "entra" })).toBe(0);
    expect(await series("jobs_total", { queue: "sync", outcome: "dead_lettered" })).toBe(1);

    // Two processes of a cluster read the same list: the aggregate reports it once, not twice.
    const part = await h.bridge.registry.getMetricsAsJSON();
    const text = await AggregatorRegistry.aggregate([part, part]).metrics();
    expect(text).toContain('dead_letters{source="okta"} 1');

    expect((await h.admin().delete(`/dead-letters/okta/user/${clash.id}`)).status).toBeLessThan(300);
    expect(await series("dead_letters", { source: "okta" })).toBe(0);
  });

  it("counts drift found by every run and drift repaired when a run applies its repairs", async () => {
    const pid = (userName: string) => h.platformUsers().get(userName)?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid("m1@example.com"), active: false });
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "stranger@example.com" } });

    const dry = await reconcile(true);
    expect(dry.counts).toMatchObject({ activeMismatch: 1, orphans: 1 });
    expect(await series("drift_found_total", { source: "okta", kind: "activeMismatch" })).toBe(1);
    expect(await series("drift_found_total", { source: "okta", kind: "orphans" })).toBe(1);
    expect(await series("drift_repaired_total", { source: "okta" })).toBe(0);

    const run = await reconcile(false);
    // The user whose attribute clashes with the platform's (dead-lettered above, its letter
    // discarded) differs too: its repair fails again, so the run cannot say it repaired everything.
    expect(run).toMatchObject({
      state: "failed",
      counts: { activeMismatch: 1, attributeValues: 1, orphans: 1 },
      repairs: {
        entities: 2,
        applied: true,
        outcome: {
          synced: 1,
          failed: 1,
          pending: 0,
          settled: true,
          failures: [{ code: "attribute_type_clash" }],
        },
      },
    });
    expect(h.platformUsers().get("m1@example.com")?.active).toBe(true);
    expect(await series("drift_found_total", { source: "okta", kind: "activeMismatch" })).toBe(2);
    expect(await series("drift_repaired_total", { source: "okta", kind: "activeMismatch" })).toBe(1);
    // Counted once the entity synced: the clashing user's difference was not repaired.
    expect(await series("drift_repaired_total", { source: "okta", kind: "attributeValues" })).toBe(0);
    // orphans: "report" (the default): the orphan is reported, not deactivated, so not repaired.
    expect(await series("drift_repaired_total", { source: "okta", kind: "orphans" })).toBe(0);
    expect(await series("jobs_total", { queue: "reconcile", outcome: "completed" })).toBe(2);
    expect(
      await series(
        "job_duration_seconds",
        { queue: "reconcile", outcome: "completed" },
        "job_duration_seconds_count",
      ),
    ).toBe(2);
  });

  it("counts the jobs of the resync queue", async () => {
    const res = await h.admin().post("/sources/okta/resync", { users: [users[0]!] });
    expect(res.status).toBe(202);
    await waitFor(
      async () => (await h.admin(E2E_VIEWER_TOKEN).get(`/resyncs/${res.body.id}`)).body.state === "succeeded",
      { what: "the resync to finish" },
    );
    await h.waitForIdle();
    expect(await series("jobs_total", { queue: "resync", outcome: "completed" })).toBe(1);
  });
});
