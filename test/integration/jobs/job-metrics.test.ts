import { afterEach, describe, expect, it } from "vitest";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/** The sum of the series of `name` with these labels (a histogram's `_count`: `metricName`), 0 when none. */
async function series(
  h: JobsHarness,
  name: string,
  labels: Record<string, string>,
  metricName = name,
): Promise<number> {
  const metric = await h.registry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((v) => ((v as { metricName?: string }).metricName ?? name) === metricName)
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((sum, v) => sum + v.value, 0);
}

const jobs = (h: JobsHarness, queue: string, outcome: string) => series(h, "jobs_total", { queue, outcome });
const timed = (h: JobsHarness, queue: string, outcome: string) =>
  series(h, "job_duration_seconds", { queue, outcome }, "job_duration_seconds_count");

/** jobs_total and job_duration_seconds count what became of every job of the sync and lifecycle queues. */
describe("job outcome metrics", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("counts completed jobs of the sync and lifecycle queues, with their durations", async () => {
    h = await startJobsHarness("job-metrics-ok");
    const u = await h.directory.createUser("okta", h.user("fine@example.com"));
    await h.waitForIdle();
    expect(await jobs(h, "sync", "completed")).toBeGreaterThanOrEqual(1);
    expect(await timed(h, "sync", "completed")).toBe(await jobs(h, "sync", "completed"));
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(h.platformUsers().get("fine@example.com")?.active).toBe(false);
    expect(await jobs(h, "lifecycle", "completed")).toBeGreaterThanOrEqual(1);
    expect(await timed(h, "lifecycle", "completed")).toBe(await jobs(h, "lifecycle", "completed"));
    expect(await jobs(h, "sync", "retried")).toBe(0);
    expect(await jobs(h, "sync", "dead_lettered")).toBe(0);
  });

  it("counts a transient failure as retried and a permanent one as dead-lettered", async () => {
    h = await startJobsHarness("job-metrics-fail", {
      sources: {
        okta: { tokens: ["t"], attributes: { department: { from: `${ENT}:department`, type: "string" } } },
      },
    });
    // 1 call + 3 client retries answered 500: the job fails once, BullMQ runs it again.
    h.emulator.addFault({ type: "error", status: 500, count: 4, match: { operation: "createGroup" } });
    await h.directory.createGroup("okta", h.group("Flaky"), []);
    await h.waitForIdle();
    expect(h.platformGroups().get("Flaky")).toBeDefined();
    expect(await jobs(h, "sync", "retried")).toBe(1);
    expect(await timed(h, "sync", "retried")).toBe(1);
    expect(await jobs(h, "sync", "dead_lettered")).toBe(0);

    // A type clash is permanent: the job fails for good at its first attempt.
    h.emulator.seed({ attributes: [{ name: "department", type: "number" }] });
    await h.directory.createUser("okta", h.user("clash@example.com", { [ENT]: { department: "R&D" } }));
    await h.waitForIdle();
    expect(await h.state.countDeadLetters()).toBe(1);
    expect(await jobs(h, "sync", "dead_lettered")).toBe(1);
    expect(await timed(h, "sync", "dead_lettered")).toBe(1);
    expect(await jobs(h, "sync", "retried")).toBe(1);
  });
});
