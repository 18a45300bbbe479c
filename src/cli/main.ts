#!/usr/bin/env node
import { type ParseArgsConfig, parseArgs } from "node:util";
import { ConfigError, loadConfigFile } from "../config/load-config.js";
import { hashToken, newToken } from "../config/tokens.js";
import { catchStopSignals } from "../server/stop-signals.js";

const USAGE = `usage: scim-bridge <command> [options]

commands:
  start [--role all|api|worker] [--processes N|auto]
                                   run the bridge (with no SCIM_BRIDGE_CONFIG: the local sandbox)
  config check [--config FILE]     validate the configuration and exit
  token new                        print a fresh token and its sha256 form for the config file
  emulator --port N --token T      run the platform emulator on its own

`;

/** A usage error: one line saying what is wrong (naming the option), then the usage text; exit 2. */
function usageError(problem: string): number {
  process.stderr.write(`${problem}\n${USAGE}`);
  return 2;
}

/**
 * The options of a command, or the one line a usage error prints: node:util parseArgs throws a
 * TypeError (ERR_PARSE_ARGS_*) for an unknown option, a missing value or an extra argument, and
 * its message's first sentence names the option.
 */
function parseOptions<T extends ParseArgsConfig["options"]>(
  command: string,
  args: string[],
  options: T,
): { values: Record<string, string | boolean | undefined> } | { problem: string } {
  try {
    return { values: parseArgs({ args, options }).values as Record<string, string | boolean | undefined> };
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_")) throw err;
    const first = (err as Error).message.split(/\.\s/)[0] ?? "";
    return { problem: `${command}: ${first.charAt(0).toLowerCase()}${first.slice(1)}` };
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "token": {
      if (rest[0] !== "new") break;
      const parsed = parseOptions("token new", rest.slice(1), {});
      if ("problem" in parsed) return usageError(parsed.problem);
      const token = newToken();
      process.stdout.write(`token:  ${token}\nconfig: ${hashToken(token)}\n`);
      return 0;
    }
    case "config": {
      if (rest[0] !== "check") break;
      const parsed = parseOptions("config check", rest.slice(1), { config: { type: "string" } });
      if ("problem" in parsed) return usageError(parsed.problem);
      const file = (parsed.values.config as string | undefined) ?? process.env.SCIM_BRIDGE_CONFIG;
      if (!file) {
        process.stderr.write("config check: name the file with --config or SCIM_BRIDGE_CONFIG\n");
        return 2;
      }
      try {
        const config = loadConfigFile(file, process.env);
        process.stdout.write(`config ok: ${Object.keys(config.sources).length} source(s)\n`);
        return 0;
      } catch (err) {
        if (err instanceof ConfigError) {
          process.stderr.write(`${err.message}\n`);
          return 1;
        }
        throw err;
      }
    }
    case "start": {
      // Before the start command loads: from here on a stop signal ends `start` cleanly (exit 0).
      const stopSignals = catchStopSignals();
      const { runStart } = await import("./start-command.js");
      return runStart(rest, stopSignals);
    }
    case "emulator": {
      // As for `start`: caught before the emulator's code loads.
      const stopSignals = catchStopSignals();
      const { runEmulator } = await import("./emulator-command.js");
      return runEmulator(rest, stopSignals);
    }
    case "status":
    case "resync":
    case "reconcile":
    case "dead-letters":
    case "audit": {
      const { runAdminCommand } = await import("./admin-commands.js");
      return runAdminCommand(command, rest);
    }
    case "-h":
    case "--help":
    case "help":
      process.stdout.write(`${USAGE}${(await import("./admin-commands.js")).ADMIN_USAGE}\n`);
      return 0;
  }
  process.stderr.write(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined && code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
