/**
 * Acceptance: an option a command does not take (a typo such as `--proccesses`), an option
 * without its value, or an extra argument is a usage error: one line naming it, the usage text,
 * exit 2; never a TypeError's stack (exit 1), and never silently accepted.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env.SCIM_BRIDGE_CONFIG;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...args],
      { cwd: root, env, timeout: 15_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("CLI usage errors", () => {
  it.each([
    [["start", "--proccesses", "2"], /^start: .*--proccesses/, /usage: scim-bridge start/],
    [["start", "--processes"], /^start: .*--processes/, /usage: scim-bridge start/],
    [
      ["start", "--role", "bogus"],
      /^start: --role must be one of all, api, worker/,
      /usage: scim-bridge start/,
    ],
    [["start", "extra"], /^start: .*extra/, /usage: scim-bridge start/],
    [["config", "check", "--bogus"], /^config check: .*--bogus/, /usage: scim-bridge/],
    [["config", "check", "--config"], /^config check: .*--config/, /usage: scim-bridge/],
    [["token", "new", "--bogus"], /^token new: .*--bogus/, /usage: scim-bridge/],
    [["token", "new", "extra"], /^token new: .*extra/, /usage: scim-bridge/],
  ])("scim-bridge %j: one line naming it, the usage, exit 2", async (args, line, usage) => {
    const run = await cli(args);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe("");
    const [first, ...others] = run.stderr.split("\n");
    expect(first).toMatch(line);
    expect(others.join("\n")).toMatch(usage);
    expect(run.stderr).not.toMatch(/TypeError|ERR_PARSE_ARGS|\n\s+at /);
  });

  it("start --help prints the usage and exits 0, starting nothing", async () => {
    const run = await cli(["start", "--help"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^usage: scim-bridge start/);
    expect(run.stderr).toBe("");
  });

  it("token new with nothing else still prints a token", async () => {
    const run = await cli(["token", "new"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^token:\s+\S+$/m);
  });
});
