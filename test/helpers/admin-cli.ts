import { runAdminCommand } from "../../src/cli/admin-commands.js";
import { E2E_ADMIN_TOKEN } from "./bridge-harness.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `scim-bridge <args…> --url <url>` in process, as an operator would from a shell, with the
 * e2e admin token in its environment (or `env`); what it printed and its exit code.
 */
export async function runCli(
  url: string,
  args: string[],
  env: Record<string, string> = { SCIM_BRIDGE_ADMIN_TOKEN: E2E_ADMIN_TOKEN },
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const [command, ...rest] = args;
  const code = await runAdminCommand(command as string, [...rest, "--url", url], {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    fetch: globalThis.fetch,
    pollMs: 50,
  });
  return { code, stdout, stderr };
}
