/**
 * Acceptance: the commands a newcomer runs from the README, as separate processes
 * (`scim-bridge token new`, `config check` with good, bad and missing files, unknown commands).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const fixtures = fileURLToPath(new URL("../fixtures/acceptance/", import.meta.url));

const GOOD_ENV = {
  PLATFORM_BASE_URL: "https://platform.example.com",
  PLATFORM_TOKEN: "platform-secret",
  OKTA_HOOK_SECRET: "okta-hook-secret",
  EVENTS_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const clean = { ...process.env };
  delete clean.SCIM_BRIDGE_CONFIG;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...args],
      { cwd: root, env: { ...clean, ...env }, timeout: 15_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("scim-bridge CLI, as the README tells a newcomer to use it", () => {
  it("token new prints a fresh token and the sha256 form of that same token", async () => {
    const [a, b] = await Promise.all([cli(["token", "new"]), cli(["token", "new"])]);
    expect(a.code).toBe(0);
    const token = /^token:\s+(\S+)$/m.exec(a.stdout)?.[1];
    const hashed = /^config:\s+(sha256:[0-9a-f]{64})$/m.exec(a.stdout)?.[1];
    expect(token && token.length >= 32).toBe(true);
    expect(hashed).toBe(
      `sha256:${createHash("sha256")
        .update(token ?? "")
        .digest("hex")}`,
    );
    expect(b.stdout).not.toBe(a.stdout);
  });

  it("config check accepts a good file (exit 0)", async () => {
    const run = await cli(["config", "check", "--config", `${fixtures}good-config.yaml`], GOOD_ENV);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/config ok: 2 source/);
  });

  it("config check reads SCIM_BRIDGE_CONFIG when --config is not given", async () => {
    const run = await cli(["config", "check"], {
      ...GOOD_ENV,
      SCIM_BRIDGE_CONFIG: `${fixtures}good-config.yaml`,
    });
    expect(run.code).toBe(0);
  });

  it("config check names the problems of a bad file, one per line, and exits non-zero", async () => {
    const run = await cli(["config", "check", "--config", `${fixtures}bad-config.yaml`]);
    expect(run.code).not.toBe(0);
    const named = [
      "platform.token: environment variable ACCEPTANCE_UNSET_TOKEN is not set",
      "platform.requestsPerSecond",
      "reconcile.orphans",
      "reconcile.maxDeprovisionShare",
      "sources.okta.target.embedTenant",
      "sources.okta.onDelete",
      "sources.okta.attributes.department.type",
    ];
    for (const problem of named) expect(run.stderr).toContain(problem);
    // No secret value is echoed back.
    expect(run.stderr).not.toContain("not-a-whsec-secret");
  });

  it("config check with a missing file names the file; without any file it says how to name one", async () => {
    const missing = await cli(["config", "check", "--config", "/nonexistent/scim-bridge.yaml"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("/nonexistent/scim-bridge.yaml");
    const none = await cli(["config", "check"]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/--config|SCIM_BRIDGE_CONFIG/);
  });

  it("an unknown command prints the usage and exits 2; --help exits 0 listing the admin commands", async () => {
    const [bogus, help] = await Promise.all([cli(["bogus"]), cli(["--help"])]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/usage: scim-bridge/);
    expect(help.code).toBe(0);
    for (const cmd of [
      "start",
      "config check",
      "token new",
      "emulator",
      "status",
      "reconcile",
      "dead-letters",
    ])
      expect(help.stdout).toContain(cmd);
  });

  it("an admin command refuses an option it does not take (exit 2) before any request", async () => {
    // Nothing listens on port 1: a request would fail with exit 1, not 2.
    const admin = ["--url", "http://127.0.0.1:1", "--token", "t"];
    const [resync, retry, reconcile, timeout] = await Promise.all([
      cli(["resync", "alpha", "--dry-run", ...admin]),
      cli(["dead-letters", "retry", "--dry-run", ...admin]),
      cli(["reconcile", "alpha", "--user", "x", ...admin]),
      cli(["reconcile", "alpha", "--wait", "--timeout-ms", "abc", ...admin]),
    ]);
    for (const run of [resync, retry, reconcile, timeout]) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).not.toMatch(/cannot reach/);
    }
    expect(resync.stderr).toMatch(/--dry-run does not apply/);
    expect(resync.stderr).toContain("usage:\n  scim-bridge resync SOURCE");
    expect(reconcile.stderr).toMatch(/--user does not apply/);
    expect(timeout.stderr).toMatch(/--timeout-ms/);
  });

  it("emulator without --token refuses to start (exit 2) and says why", async () => {
    const run = await cli(["emulator", "--port", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--token/);
  });
});
