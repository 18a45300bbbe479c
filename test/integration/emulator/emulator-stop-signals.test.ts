/**
 * `scim-bridge emulator` and a stop signal while it starts (the gap e25c325 closed for `start`): a
 * SIGTERM that arrives before the emulator has said it listens must stop it with exit 0, not end
 * it by the signal's default action (exit code null), which is what a process with no listener yet
 * gets.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const command = fileURLToPath(new URL("../../../src/cli/emulator-command.ts", import.meta.url));

describe("scim-bridge emulator: a stop signal while it starts", () => {
  it("a SIGTERM sent the moment the command begins, before it listens, ends it with exit 0", async () => {
    // The command is called and, before its first await has settled (the emulator is still starting),
    // the process sends itself SIGTERM: deterministic, unlike a signal timed from outside.
    const script = [
      `import { runEmulator } from ${JSON.stringify(command)};`,
      `const run = runEmulator(["--port", "0", "--token", "t"]);`,
      `process.kill(process.pid, "SIGTERM");`,
      "run.then((code) => { process.exitCode = code; });",
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on("exit", (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
  }, 30_000);
});
