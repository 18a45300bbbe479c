/**
 * `scim-bridge emulator --port <port> --token <token> [--tls] [--host 127.0.0.1] [--seed N]
 * [--cert-file PATH]`: runs the platform emulator on its own until SIGINT/SIGTERM. Prints one
 * line `platform emulator listening on <url>` on stdout; with --cert-file the self-signed
 * certificate (PEM) is written there for clients to trust.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createPlatformEmulator } from "../platform/emulator/platform-emulator.js";
import { catchStopSignals } from "../server/stop-signals.js";

const USAGE =
  "usage: scim-bridge emulator --port <port> --token <token> [--tls] [--host 127.0.0.1] [--seed N] [--cert-file PATH]\n";

/**
 * `stopSignals`: SIGTERM and SIGINT, caught from the call on (as `start` does, e25c325). A signal
 * while the emulator starts, or the instant after its line, then stops it with exit 0 instead of
 * ending it by the signal's default action.
 */
export async function runEmulator(args: string[], stopSignals = catchStopSignals()): Promise<number> {
  let values: {
    port?: string;
    token?: string;
    tls?: boolean;
    host?: string;
    seed?: string;
    "cert-file"?: string;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: "string" },
        token: { type: "string" },
        tls: { type: "boolean" },
        host: { type: "string" },
        seed: { type: "string" },
        "cert-file": { type: "string" },
      },
    }));
  } catch (err) {
    process.stderr.write(`emulator: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  const port = Number(values.port ?? "0");
  if (!values.token || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`emulator: --token is required and --port must be 0..65535\n${USAGE}`);
    return 2;
  }
  const seed = values.seed !== undefined ? Number(values.seed) : undefined;
  const emulator = createPlatformEmulator({ token: values.token, tls: values.tls ?? false, seed });
  const url = await emulator.start({ port, host: values.host ?? "127.0.0.1" });
  if (stopSignals.received === undefined) {
    if (values["cert-file"] && emulator.certificatePem)
      writeFileSync(values["cert-file"], emulator.certificatePem);
    process.stdout.write(`platform emulator listening on ${url}\n`);
    // A second signal during the close gets the default action (the process ends at once).
    await stopSignals.next;
  }
  await emulator.close();
  return 0;
}
