/**
 * Acceptance: the operator's admin CLI, as a separate process, against a whole bridge: `status`,
 * `reconcile <source> --dry-run --wait`, `resync --wait` and `dead-letters` list and retry after
 * the platform refused a user for a while.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_ADMIN_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

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
      { cwd: root, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  h = await startTestBridge("acceptance-admin-cli");
});
afterAll(async () => {
  await h?.close();
});

describe("admin CLI against a running bridge", () => {
  it("status, reconcile --dry-run --wait and resync --wait on a converged source", async () => {
    await h.scim("okta").createUser("cli.user@example.com");
    await h.waitForIdle();
    const status = await cli(["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });

    const dry = await cli(["reconcile", "okta", "--dry-run", "--wait", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const run = JSON.parse(dry.stdout);
    expect(run).toMatchObject({ state: "succeeded", dryRun: true, counts: { missing: 0, changed: 0 } });

    const resync = await cli(["resync", "okta", "--wait"]);
    expect(resync.code, resync.stderr).toBe(0);
    expect(h.platformUsers().get("cli.user@example.com")?.active).toBe(true);
  });

  it("a user the platform refuses becomes a dead letter with its reason; retry after the fix delivers it", async () => {
    h.emulator.addFault({ id: "refuse", type: "error", status: 403, match: { operation: "createUser" } });
    await h.scim("okta").createUser("refused@example.com");
    await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 1, {
      timeoutMs: 20_000,
      what: "one dead letter",
    });
    await h.waitForIdle();
    // Dead letters do not hold the bridge busy (ARCHITECTURE: outside interface, status).
    const status = await cli(["status"]);
    expect(status.code, status.stdout).toBe(0);
    expect(status.stdout).toMatch(/dead letters: 1/);

    const list = await cli(["dead-letters", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout) as { items: Array<Record<string, unknown>> };
    expect(page.items).toHaveLength(1);
    expect(JSON.stringify(page.items[0])).toMatch(/403|forbidden/i);
    expect(JSON.stringify(page.items)).not.toContain("refused@example.com");

    h.emulator.setFaults([]);
    const retry = await cli(["dead-letters", "retry"]);
    expect(retry.code, retry.stderr).toBe(0);
    await waitFor(() => h.platformUsers().get("refused@example.com"), {
      timeoutMs: 20_000,
      what: "the retried user on the platform",
    });
    await h.waitForIdle();
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  });

  it("an operator finds a user by userName and a group by displayName, in any case", async () => {
    const user = await h.scim("okta").createUser("Find.Me@example.com", { externalId: "ext-find-me" });
    await h.waitForIdle();
    const platformId = h.platformUsers().get("find.me@example.com")?.id;
    expect(platformId).toBeDefined();

    const found = await cli(["status", "okta", "--user-name", "find.me@EXAMPLE.com"]);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toContain(`okta/user/${user.id}: synced`);
    expect(found.stdout).toContain(`platform id:  ${platformId}`);
    const missing = await cli(["status", "okta", "--user-name", "nobody@example.com"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user of that name in source okta/);
    const both = await cli(["status", "okta", "--user-name", "a", "--group-name", "b"]);
    expect(both.code).toBe(2);

    const api = await h.admin().get("/sources/okta/users?externalId=ext-find-me");
    expect(api.status).toBe(200);
    expect(api.body.items).toHaveLength(1);
    expect(api.body.items[0]).toMatchObject({ id: user.id, state: "synced", platformId });
    const none = await h.admin().get("/sources/okta/users?userName=nobody%40example.com");
    expect(none.body).toEqual({ items: [] });
    for (const query of ["", "?userName=a&externalId=b", "?displayName=x", "?userName="]) {
      const bad = await h.admin().get(`/sources/okta/users${query}`);
      expect(bad.status, query).toBe(400);
    }
    expect((await h.admin().get("/sources/nowhere/users?userName=a")).status).toBe(404);

    const created = await h.scim("okta").createGroup("Finders", [user.id]);
    await h.waitForIdle();
    const group = await cli(["status", "okta", "--group-name", "FINDERS", "--json"]);
    expect(group.code, group.stderr).toBe(0);
    expect(JSON.parse(group.stdout)).toMatchObject({ kind: "group", id: created.id, state: "synced" });
  });

  it("resync --wait of an id the source does not have names it and exits non-zero", async () => {
    const known = await h.scim("okta").createUser("resync.known@example.com");
    const run = await cli(["resync", "okta", "--user", known.id, "--user", "no-such-user-id", "--wait"]);
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toContain("user/no-such-user-id");
    expect(`${run.stdout}${run.stderr}`).not.toContain(`user/${known.id}`);
    const ok = await cli(["resync", "okta", "--user", known.id, "--wait"]);
    expect(ok.code, ok.stdout).toBe(0);
  });
});
