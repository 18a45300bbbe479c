/**
 * Probes n (the operator's surface): the platform revokes the bridge's token, so every call is a
 * 401, while an identity provider creates a user, a group and deactivates another user. The on-call
 * operator reads `scim-bridge status`, `dead-letters list`, one entity's status, a dry run, the
 * metrics and the log lines: each must say what happened (platform_unauthorized, no userName in a
 * line) and what to do (docs/operations.md: fix platform.token, then retry them all); retrying all
 * once the token works lands every change, the lifecycle's and the group's included.
 * (test/acceptance/operator-probes-g-long-outage.test.ts covers creates alone.)
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const lines: string[] = [];

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

const TOKEN_ADVICE = "the platform refused the bridge's token: set a valid platform.token (PLATFORM_TOKEN)";

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-n-token-revoked", {
    log: { level: "info", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes n: the platform revoked the bridge's token", () => {
  it("every surface says platform_unauthorized and what to do; fixed and retried, everything lands", async () => {
    const scim = h.scim("okta");
    const kept = await scim.createUser("revoked.kept@example.com");
    const leaving = await scim.createUser("revoked.leaving@example.com");
    await h.waitForIdle();

    h.emulator.setFaults([{ id: "revoked", type: "error", status: 401 }]);
    const fresh = await scim.createUser("revoked.fresh@example.com");
    const group = await scim.createGroup("Revoked Team", [kept.id, fresh.id]);
    expect((await scim.patchUser(leaving.id, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 3, {
      timeoutMs: 20_000,
      what: "three dead letters",
    });
    await h.waitForIdle();

    // status: idle (dead letters do not hold it), three dead letters of okta.
    const status = await cli("status");
    expect(status.stdout).toMatch(/dead letters: 3/);
    expect(status.stdout).toMatch(/okta: 3 users, 1 groups, 3 dead letters/);

    // dead-letters list: the three, each platform_unauthorized, and what to do about them.
    const list = await cli("dead-letters", "list");
    expect(list.code).toBe(0);
    for (const ref of [`okta/user/${fresh.id}`, `okta/group/${group.id}`, `okta/user/${leaving.id}`])
      expect(list.stdout).toContain(`${ref}  platform_unauthorized  `);
    expect(list.stdout).toContain(`platform_unauthorized (3): ${TOKEN_ADVICE}`);
    expect(list.stdout).toContain("scim-bridge dead-letters retry");

    // One entity: dead, the error, and the same advice (not only "retry with").
    const one = await cli("status", `okta/user/${leaving.id}`);
    expect(one.code).toBe(1);
    expect(one.stdout).toContain("platform_unauthorized bulkUsers: platform answered 401");
    expect(one.stdout).toContain(`what to do:   ${TOKEN_ADVICE}`);

    // A dry run fails at once, saying why.
    const run = await cli("reconcile", "okta", "--dry-run", "--wait", "--timeout-ms", "20000");
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/failed/);
    expect(run.stdout).toMatch(/error: listUsers: platform answered 401/);

    // Metrics: the letters by code, permanent failures by operation.
    const metrics = (await h.http.get("/metrics")).text;
    expect(metrics).toMatch(/^dead_letters_total\{source="okta",code="platform_unauthorized"\} 3$/m);
    expect(metrics).toMatch(/^dead_letters\{source="okta"\} 3$/m);
    for (const op of ["createUser", "createGroup", "bulkUsers"])
      expect(metrics).toMatch(
        new RegExp(`^platform_failures_total\\{operation="${op}",class="permanent"\\} 1$`, "m"),
      );

    // Log lines: an error line per letter with its ref and code; none names a user or the token.
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const errors = parsed.filter((l) => l.level === 50 && l.code === "platform_unauthorized");
    expect(errors.map((l) => (l.ref as { id: string }).id).sort()).toEqual(
      [fresh.id, group.id, leaving.id].sort(),
    );
    for (const line of lines) {
      expect(line).not.toMatch(/revoked\.(kept|leaving|fresh)/);
      expect(line).not.toContain(PLATFORM_TOKEN);
    }

    // The fix: a token the platform takes again; then retry them all.
    h.emulator.setFaults([]);
    const retry = await cli("dead-letters", "retry");
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain("retried 3");
    await h.waitForIdle(40_000);
    const users = h.platformUsers();
    expect(users.get("revoked.fresh@example.com")?.active).toBe(true);
    expect(users.get("revoked.leaving@example.com")?.active).toBe(false);
    const groups = (
      h.emulator.state() as unknown as { groups: Array<{ displayName: string; members: string[] }> }
    ).groups;
    const team = groups.find((g) => g.displayName === "Revoked Team");
    expect(team?.members.sort()).toEqual(
      [users.get("revoked.kept@example.com")?.id, users.get("revoked.fresh@example.com")?.id].sort(),
    );
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0, pending: 0 });
    expect((await cli("dead-letters", "list")).stdout).toMatch(/^0 dead letter\(s\)\n?$/);
    expect(await cli("status", `okta/group/${group.id}`)).toMatchObject({ code: 0 });
  }, 60_000);
});
