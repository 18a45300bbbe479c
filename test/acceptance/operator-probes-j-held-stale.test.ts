/**
 * Probes j (the operator's surface): a run held by the deprovisioning guard that an admin gets to
 * only later. The bridge restarts meanwhile (the held run is still listed, still idle), the
 * identity provider turns two of the three users back on, a newer run shows the drift as it is
 * now; confirming the old run then deprovisions only the one still off at the source, never the
 * two that came back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const users: string[] = [];

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}
const name = (i: number) => `stale.person${i}@example.com`;
const activeOnPlatform = (i: number) => h.platformUsers().get(name(i))?.active !== false;

beforeAll(async () => {
  h = await startTestBridge("probes-j-held-stale", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  const scim = h.scim("okta");
  for (let i = 0; i < 10; i++) users.push((await scim.createUser(name(i))).id);
  for (const id of users.slice(0, 3))
    expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
  await h.waitForIdle();
  // Behind the bridge's back, the three are turned on again on the platform.
  for (let i = 0; i < 3; i++) {
    h.emulator.drift({
      action: "setUserActive",
      userId: h.platformUsers().get(name(i))?.id as string,
      active: true,
    });
  }
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes j: a held run confirmed after the directory changed", () => {
  let held: string;

  it("is held, survives a restart of the bridge, and is still listed (idle)", async () => {
    const run = await cli("reconcile", "okta", "--wait", "--timeout-ms", "20000");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    held = /^run (\S+) \(okta\): awaiting-confirmation$/m.exec(run.stdout)?.[1] as string;
    expect(held, run.stdout).toBeDefined();
    expect(run.stdout).toContain("guard: 3 of 10 owned users (tripped)");

    await h.stop();
    await h.start();
    const status = await cli("status", "--json");
    expect(status.code, status.stdout).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      idle: true,
      awaitingConfirmation: [
        { kind: "reconcile", id: held, source: "okta", plannedDeprovisions: 3, ownedUsers: 10 },
      ],
    });
    for (let i = 0; i < 3; i++) expect(activeOnPlatform(i), `user ${i}`).toBe(true);
  });

  it("after the IdP turned two of them back on, a newer run shows the drift as it is now", async () => {
    const scim = h.scim("okta");
    for (const id of users.slice(1, 3))
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: true }])).status).toBe(200);
    await h.waitForIdle();
    const dry = await cli("reconcile", "okta", "--dry-run", "--wait", "--json");
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      state: "succeeded",
      counts: { activeMismatch: 1 },
      guard: { plannedDeprovisions: 1, ownedUsers: 10, tripped: false },
    });
  });

  it("confirming the old run deprovisions only the one still off at the source", async () => {
    const confirmed = await cli("reconcile", "--confirm", held);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toContain(`run ${held}: queued`);
    const run = await waitFor(
      async () => {
        const res = await cli("reconcile", "--show", held, "--json");
        const body = JSON.parse(res.stdout);
        return ["queued", "running"].includes(body.state) ? null : body;
      },
      { what: "the confirmed run" },
    );
    expect(run.state, JSON.stringify(run)).toBe("succeeded");
    await h.waitForIdle();
    expect(activeOnPlatform(0)).toBe(false);
    expect(activeOnPlatform(1)).toBe(true);
    expect(activeOnPlatform(2)).toBe(true);
    for (let i = 3; i < 10; i++) expect(activeOnPlatform(i), `user ${i}`).toBe(true);
    const status = await cli("status", "--json");
    expect(JSON.parse(status.stdout)).toMatchObject({ idle: true, deadLetters: 0, awaitingConfirmation: [] });
    const clean = await cli("reconcile", "okta", "--dry-run", "--wait", "--json");
    expect(JSON.parse(clean.stdout).counts.activeMismatch).toBe(0);
  });
});
