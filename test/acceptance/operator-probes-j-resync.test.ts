/**
 * Probes j (the operator's surface): `scim-bridge resync SOURCE --user ID...` with an id named
 * twice (a script's list, a copy and paste) resyncs that user once: it is counted once in the
 * resync's total, by the deprovisioning guard (two of ten is held, one of ten is not) and in what
 * the CLI prints.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;
const users: string[] = [];
const name = (i: number) => `twice.j${i}@example.com`;

beforeAll(async () => {
  h = await startTestBridge("probes-j-resync", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  const scim = h.scim("okta");
  for (let i = 0; i < 10; i++) users.push((await scim.createUser(name(i))).id);
  expect((await scim.patchUser(users[0]!, [{ op: "replace", path: "active", value: false }])).status).toBe(
    200,
  );
  await h.waitForIdle();
  // Behind the bridge's back the platform turns the user on again: the resync turns it off.
  h.emulator.drift({
    action: "setUserActive",
    userId: h.platformUsers().get(name(0))?.id as string,
    active: true,
  });
});
afterAll(async () => {
  await h?.close();
});

describe("probes j: a resync naming a user twice", () => {
  it("resyncs it once: one deprovisioning of ten is not held", async () => {
    const out = await runCli(h.bridge.url as string, [
      "resync",
      "okta",
      "--user",
      users[0]!,
      "--user",
      users[0]!,
      "--user",
      users[1]!,
      "--wait",
      "--timeout-ms",
      "20000",
      "--json",
    ]);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const op = JSON.parse(out.stdout);
    expect(op).toMatchObject({
      state: "succeeded",
      total: 2,
      enqueued: 2,
      scope: { users: [users[0], users[1]], groups: [] },
      guard: { plannedDeprovisions: 1, ownedUsers: 10, tripped: false },
      outcome: { synced: 2, failed: 0, pending: 0 },
    });
    await h.waitForIdle();
    expect(h.platformUsers().get(name(0))?.active).toBe(false);
  });
});
