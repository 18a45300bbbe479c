/**
 * Acceptance: `reconcile <source> --wait` and `resync <source> --user ID --wait` say what became of
 * the repairs they enqueued. Enqueued is not done: a repair that ends as a dead letter (the
 * platform refused it) makes the run or resync end `failed`, the CLI name the entity and the dead
 * letter's code and exit 1, and drift_repaired_total not count it.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_ADMIN_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
let h: TestBridge;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli/main.ts",
        ...args,
        "--url",
        h.bridge.url ?? "",
        "--token",
        E2E_ADMIN_TOKEN,
      ],
      { cwd: root, timeout: 40_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function repaired(kind: string): Promise<number> {
  const metric = await h.bridge.registry.getSingleMetric("drift_repaired_total")?.get();
  return (metric?.values ?? [])
    .filter((v) => v.labels.source === "okta" && v.labels.kind === kind)
    .reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  h = await startTestBridge("acceptance-repair-outcome", {
    // Only the runs this test asks for.
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("a repair the platform refuses", () => {
  it("fails the run and the resync that enqueued it, names it, and is not counted as repaired", async () => {
    const user = await h.scim("okta").createUser("outcome.user@example.com");
    await h.scim("okta").createUser("outcome.other@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("outcome.user@example.com")?.id as string;
    // Deactivated behind the bridge's back; the platform then refuses the bulk call that would
    // activate the user again.
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    h.emulator.addFault({ id: "refuse-bulk", type: "error", status: 403, match: { operation: "bulkUsers" } });

    const run = await cli(["reconcile", "okta", "--wait"]);
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(1);
    expect(run.stdout).toMatch(/: failed/);
    expect(run.stdout).toContain("1 repairs enqueued: 0 synced, 1 failed");
    expect(run.stdout).toContain(`failed: okta/user/${user.id}  platform_`);
    const latest = (await h.admin().get("/reconcile-runs?source=okta&limit=1")).body.items[0];
    expect(latest).toMatchObject({
      state: "failed",
      counts: { activeMismatch: 1 },
      repairs: {
        entities: 1,
        applied: true,
        outcome: { synced: 0, failed: 1, pending: 0, settled: true },
      },
    });
    expect(latest.repairs.outcome.failures[0]).toMatchObject({ ref: `okta/user/${user.id}` });
    expect(latest.error).toMatch(/1 of 1 repairs failed/);
    expect(await repaired("activeMismatch")).toBe(0);

    const resync = await cli(["resync", "okta", "--user", user.id, "--wait"]);
    expect(resync.code, `${resync.stdout}${resync.stderr}`).toBe(1);
    expect(resync.stdout).toMatch(/: failed, 1 of 1 enqueued/);
    expect(resync.stdout).toContain("entities: 0 synced, 1 failed");
    expect(resync.stdout).toContain(`failed: okta/user/${user.id}  platform_`);

    // The cause fixed, the same commands say the platform is repaired, and only then it counts.
    h.emulator.setFaults([]);
    const fixed = await cli(["reconcile", "okta", "--wait", "--json"]);
    expect(fixed.code, `${fixed.stdout}${fixed.stderr}`).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({
      state: "succeeded",
      repairs: { entities: 1, outcome: { synced: 1, failed: 0, pending: 0, settled: true, failures: [] } },
    });
    expect(h.platformUsers().get("outcome.user@example.com")?.active).toBe(true);
    expect(await repaired("activeMismatch")).toBe(1);

    const again = await cli(["resync", "okta", "--user", user.id, "--wait"]);
    expect(again.code, `${again.stdout}${again.stderr}`).toBe(0);
    expect(again.stdout).toContain("entities: 1 synced, 0 failed");
  });
});
