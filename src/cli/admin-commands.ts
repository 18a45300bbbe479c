import { readArguments } from "./admin-arguments.js";
import { adminClient, type CliIo } from "./admin-client.js";
import { RequestError, UsageError } from "./admin-errors.js";
import { usageFor } from "./admin-forms.js";
import { auditCommand } from "./audit-command.js";
import { deadLettersCommand } from "./dead-letters-command.js";
import { reconcileCommand, resyncCommand } from "./operation-commands.js";
import { statusCommand } from "./status-command.js";

export type { CliIo } from "./admin-client.js";
export { ADMIN_USAGE } from "./admin-forms.js";

const defaultIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  fetch: globalThis.fetch,
});

/**
 * The CLI's admin commands: `status`, `resync`, `reconcile`, `dead-letters`, `audit`. They talk to the admin
 * API over HTTP. Exit codes: 0 ok, 1 failure (or not idle / needs attention where that is the
 * question), 2 usage. Each command lives in its own module; this one reads the arguments (a usage
 * error before any request) and turns the errors into exit codes.
 */
export async function runAdminCommand(
  command: string,
  args: string[],
  io: CliIo = defaultIo(),
): Promise<number> {
  try {
    const { values, positionals, rest } = readArguments(command, args);
    const api = adminClient(values, io);
    switch (command) {
      case "status":
        return await statusCommand(api, io, values, rest);
      case "resync":
        return await resyncCommand(api, io, values, rest);
      case "reconcile":
        return await reconcileCommand(api, io, values, rest);
      case "audit":
        return await auditCommand(api, io, values);
      default:
        return await deadLettersCommand(api, io, values, positionals);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${err.message}\n${usageFor(command)}`);
      return 2;
    }
    if (err instanceof RequestError) {
      io.stderr(`${command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
