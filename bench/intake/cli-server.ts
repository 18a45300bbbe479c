import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The bridge as an operator starts it: `scim-bridge start --role api --processes N`, a process tree. */
export interface CliServer {
  url: string;
  /** The primary and its cluster workers, as the operating system lists them now. */
  pids(): number[];
  /** CPU time (user + system) of the whole tree so far, in ms, from /proc. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL("../../", import.meta.url));
/** Linux's clock ticks per second (USER_HZ) for /proc/<pid>/stat times. */
const TICKS_PER_SECOND = 100;

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

/**
 * Starts the CLI from source (tsx, as the other benchmark children run) with `config` written to a
 * file of its own and `server.port` set to a free port; waits until /readyz answers and the
 * primary has `processes` workers. Its output goes to /dev/null, as a deployed process's to a
 * collector. Only 127.0.0.1.
 */
export async function startCliServer(
  config: Record<string, unknown>,
  processes: number,
  execArgv: readonly string[] = [],
): Promise<CliServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-intake-"));
  const file = join(dir, "config.yaml");
  const server = { ...(config.server as object), port, host: "127.0.0.1" };
  // JSON is YAML: the config file is the same object the in-process children get.
  writeFileSync(file, JSON.stringify({ ...config, server }));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...execArgv,
      "--import",
      "tsx",
      "src/cli/main.ts",
      "start",
      "--role",
      "api",
      "--processes",
      String(processes),
    ],
    { cwd: root, env: { ...process.env, SCIM_BRIDGE_CONFIG: file }, stdio: ["ignore", "ignore", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid as number;
  const url = `http://127.0.0.1:${port}`;
  const pids = () => [pid, ...childrenOf(pid)];
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`the bridge exited with ${child.exitCode} at start`);
        const ready = await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        return ready && (processes === 1 || childrenOf(pid).length >= processes);
      },
      60_000,
      `the bridge (${processes} processes) was not ready`,
    );
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    pids,
    cpuMs: () => (pids().reduce((sum, p) => sum + cpuTicks(p), 0) * 1000) / TICKS_PER_SECOND,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => {
          for (const p of pids()) {
            try {
              process.kill(p, "SIGKILL");
            } catch {}
          }
        }, 20_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
