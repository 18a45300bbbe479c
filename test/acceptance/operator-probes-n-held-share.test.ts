/**
 * Probes n (the operator's surface): a run the deprovisioning guard holds. docs/operations.md: it
 * ends `awaiting-confirmation` with its `guard` (`plannedDeprovisions`, `ownedUsers`, `share`,
 * `maxShare`). The on-call operator deciding whether to confirm must read from the CLI why it was
 * held (the share against the configured limit), not only "2 of 10 (tripped)"; a dry run under the
 * limit says it would not be held. (probes g and j cover settling it; this is what the text says.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

beforeAll(async () => {
  h = await startTestBridge("probes-n-held-share", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  for (let i = 0; i < 10; i++) await h.scim("okta").createUser(`share.person${i}@example.com`);
  await h.waitForIdle();
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes n: why a run is held, in the CLI's words", () => {
  it("a dry run within the limit says so", async () => {
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "share.orphan1@example.com" } });
    const dry = await cli("reconcile", "okta", "--dry-run", "--wait", "--timeout-ms", "20000");
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      "guard: 1 of 10 owned users: 10% to deprovision, within reconcile.maxDeprovisionShare 10%",
    );
  });

  it("a held run names its share and the limit it is over, in reconcile --show and --wait", async () => {
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "share.orphan2@example.com" } });
    const run = await cli("reconcile", "okta", "--wait", "--timeout-ms", "20000");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const runId = /^run (\S+) \(okta\): awaiting-confirmation$/m.exec(run.stdout)?.[1] as string;
    const why =
      "guard: 2 of 10 owned users (tripped): 20% to deprovision, more than reconcile.maxDeprovisionShare 10%";
    expect(run.stdout).toContain(why);
    const shown = await cli("reconcile", "--show", runId);
    expect(shown.stdout).toContain(why);
    expect((await cli("reconcile", "--discard", runId)).code).toBe(0);
  });
});
