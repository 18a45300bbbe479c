/**
 * Probes g (the operator's surface): a platform outage longer than the jobs' attempts
 * (`sync.attempts` 2 here). Creates become dead letters (docs/operations.md: a failure on the
 * job's last attempt is one) with a transient code, visible as such; a deactivation waiting in the
 * lifecycle batch is never lost. Once the platform answers again, `scim-bridge dead-letters retry`
 * lands the dead letters, the deactivation reaches the platform, and the bridge goes idle.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

beforeAll(async () => {
  h = await startTestBridge("probes-g-long-outage", {
    config: {
      sync: {
        concurrency: 8,
        attempts: 2,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 500,
        sweepAfterMs: 1_000,
      },
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: an outage longer than the attempts", () => {
  it("dead-letters the creates with a transient code, keeps the deactivation, and retry lands all", async () => {
    const kept = await h.scim("okta").createUser("long.kept@example.com");
    await h.waitForIdle();
    h.emulator.setFaults([{ id: "outage", type: "error", status: 503 }]);
    const created: string[] = [];
    for (let i = 0; i < 3; i++)
      created.push((await h.scim("okta").createUser(`long.new${i}@example.com`)).id);
    const off = await h.scim("okta").patchUser(kept.id, [{ op: "replace", path: "active", value: false }]);
    expect(off.status).toBe(200);

    await waitFor(async () => (await h.admin().get("/status")).body.deadLetters >= 3, {
      timeoutMs: 40_000,
      what: "the creates to be dead letters",
    });
    const letters = (await h.admin().get("/dead-letters")).body.items as Array<Record<string, unknown>>;
    expect(letters.map((l) => (l.ref as { id: string }).id).sort()).toEqual(
      expect.arrayContaining([...created].sort()),
    );
    for (const letter of letters) expect(String(letter.reason), JSON.stringify(letter)).toMatch(/503/);

    // The platform is back. The deactivation was never a dead letter: it must land by itself.
    h.emulator.setFaults([]);
    await waitFor(() => h.platformUsers().get("long.kept@example.com")?.active === false, {
      timeoutMs: 40_000,
      what: "the deactivation on the platform once it answers again",
    });
    const retry = await cli("dead-letters", "retry");
    expect(retry.code, retry.stderr).toBe(0);
    await h.waitForIdle(40_000);
    for (let i = 0; i < 3; i++) expect(h.platformUsers().get(`long.new${i}@example.com`)?.active).toBe(true);
    const status = await h.admin().get("/status");
    expect(status.body).toMatchObject({ idle: true, deadLetters: 0, pending: 0 });
    expect((await h.admin().get(`/sources/okta/users/${kept.id}`)).body.state).toBe("synced");
  }, 85_000);

  it("a platform refusing the bridge's token (401): dead letters at once, platform_unauthorized; retry all once fixed", async () => {
    h.emulator.setFaults([{ id: "revoked", type: "error", status: 401 }]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await h.scim("okta").createUser(`revoked.user${i}@example.com`)).id);
    await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 3, {
      timeoutMs: 20_000,
      what: "three dead letters",
    });
    const list = await cli("dead-letters", "list", "--source", "okta", "--json");
    expect(list.code).toBe(0);
    const items = JSON.parse(list.stdout).items as Array<Record<string, unknown>>;
    expect(items.map((l) => l.code)).toEqual([
      "platform_unauthorized",
      "platform_unauthorized",
      "platform_unauthorized",
    ]);
    // Permanent: not retried attempt after attempt against a token that cannot work.
    for (const letter of items) expect(letter.attempts).toBe(1);
    h.emulator.setFaults([]);
    const retry = await cli("dead-letters", "retry");
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain("retried 3");
    await h.waitForIdle(40_000);
    for (let i = 0; i < 3; i++)
      expect(h.platformUsers().get(`revoked.user${i}@example.com`)?.active).toBe(true);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 60_000);
});
