/**
 * Probes g (the operator's surface): a dead letter taken back after the fix, for the failures that
 * do not come from a user's own sync. A deactivation the platform refuses in its bulk call
 * (`platform_bulk_forbidden`): once the platform accepts it, `dead-letters retry` deactivates the
 * user. A group another source owns on the platform (`ownership_conflict`): once that source lets
 * the name go, the retried group is created with its members. Each time: synced, the dead letter
 * and its gauge gone, the CLI's entity status exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

const gauge = async (source: string) =>
  Number(
    new RegExp(`^dead_letters\\{source="${source}"\\} (\\d+)$`, "m").exec(
      (await h.http.get("/metrics")).text,
    )?.[1],
  );

beforeAll(async () => {
  h = await startTestBridge("probes-g-retry-paths", {
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: retrying dead letters of the lifecycle and group paths", () => {
  it("a refused deactivation (bulk FORBIDDEN), retried after the fix, deactivates the user", async () => {
    const user = await h.scim("okta").createUser("bulk.refused@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("bulk.refused@example.com")?.id as string;
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    const off = await h.scim("okta").patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
    expect(off.status).toBe(200);
    await waitFor(async () => (await h.admin().get("/dead-letters?source=okta")).body.total === 1, {
      timeoutMs: 20_000,
      what: "the dead letter",
    });
    await h.waitForIdle();
    const one = await cli("status", `okta/user/${user.id}`);
    expect(one.code).toBe(1);
    expect(one.stdout).toContain("platform_bulk_forbidden");
    expect(h.platformUsers().get("bulk.refused@example.com")?.active).toBe(true);
    expect(await gauge("okta")).toBe(1);

    h.emulator.data.bulkFailures.delete(pid);
    const retry = await cli("dead-letters", "retry", `okta/user/${user.id}`);
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    await waitFor(() => h.platformUsers().get("bulk.refused@example.com")?.active === false, {
      timeoutMs: 20_000,
      what: "the user deactivated on the platform",
    });
    await h.waitForIdle();
    expect((await cli("status", `okta/user/${user.id}`)).code).toBe(0);
    expect((await h.admin().get("/dead-letters")).body.total).toBe(0);
    expect(await gauge("okta")).toBe(0);
  });

  it("a group another source owns on the platform, retried once that source let the name go, lands with its members", async () => {
    const theirs = await h.scim("entra").createGroup("Shared Name");
    await h.waitForIdle();
    const member = await h.scim("okta").createUser("group.member@example.com");
    const ours = await h.scim("okta").createGroup("Shared Name", [member.id]);
    await waitFor(async () => (await h.admin().get("/dead-letters?source=okta")).body.total === 1, {
      timeoutMs: 20_000,
      what: "the conflict's dead letter",
    });
    await h.waitForIdle();
    const letter = (await h.admin().get("/dead-letters?source=okta")).body.items[0];
    expect(letter).toMatchObject({ ref: { kind: "group", id: ours.id }, code: "ownership_conflict" });
    const shown = await cli("status", "okta", "--group-name", "shared name");
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain(`okta/group/${ours.id}: dead`);
    expect(shown.stdout).toContain(`scim-bridge dead-letters retry okta/group/${ours.id}`);

    // The fix: entra's group is deleted at entra (and so on the platform).
    expect((await h.scim("entra").deleteGroup(theirs.id)).status).toBe(204);
    await h.waitForIdle();
    const retry = await h.admin().post(`/dead-letters/okta/group/${ours.id}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ retried: 1 });
    await waitFor(async () => (await cli("status", `okta/group/${ours.id}`)).code === 0, {
      timeoutMs: 20_000,
      what: "the group synced",
    });
    await h.waitForIdle();
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "Shared Name");
    expect(groups).toHaveLength(1);
    expect(groups[0]?.members).toEqual([h.platformUsers().get("group.member@example.com")?.id]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  });
});
