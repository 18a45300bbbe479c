/**
 * Runs `scim-bridge start` as a real child process (node + tsx, no npx in between, so signals reach
 * the bridge itself) with a configuration file of its own, and plain node:http requests whose
 * every outcome (complete answer, refused, cut off) is recorded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { type Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ConfigInput } from "../../../src/config/config-schema.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface BridgeProcess {
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills the process if it still runs, and removes its configuration file. */
  dispose(): Promise<void>;
}

export function spawnBridge(
  config: ConfigInput,
  args: string[] = [],
  env: Record<string, string> = {},
): BridgeProcess {
  const dir = mkdtempSync(join(tmpdir(), "bridge-process-"));
  const file = join(dir, "config.yaml");
  // JSON is YAML: the loader reads it as is.
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "start", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", SCIM_BRIDGE_CONFIG: file, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited,
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Outcome =
  | { kind: "answer"; status: number; body: string; connectionClose: boolean }
  /** Never reached the server (it no longer listens): the client may retry elsewhere. */
  | { kind: "refused" }
  /** Sent but not completely answered: what a graceful shutdown must never do. */
  | { kind: "cut"; code: string };

export interface CallOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Default: a fresh connection (no agent). */
  agent?: Agent;
  /** Send the body in slices over this long (a slow client: the request stays in flight). */
  trickleMs?: number;
}

/** One request over plain HTTP; never throws, every outcome is a value. */
export function call(port: number, options: CallOptions): Promise<Outcome> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path,
        agent: options.agent ?? false,
        headers: {
          ...options.headers,
          ...(payload === undefined ? {} : { "Content-Length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => {
          resolve({
            kind: "answer",
            status: res.statusCode ?? 0,
            body,
            connectionClose: res.headers.connection === "close",
          });
        });
        res.on("aborted", () => resolve({ kind: "cut", code: "aborted" }));
        res.on("error", (err: NodeJS.ErrnoException) =>
          resolve({ kind: "cut", code: err.code ?? err.message }),
        );
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      resolve(
        err.code === "ECONNREFUSED" ? { kind: "refused" } : { kind: "cut", code: err.code ?? err.message },
      );
    });
    if (!options.trickleMs || payload === undefined) {
      req.end(payload);
      return;
    }
    const slices = 10;
    const size = Math.ceil(payload.length / slices);
    let sentSlices = 0;
    const timer = setInterval(() => {
      const slice = payload.slice(sentSlices * size, (sentSlices + 1) * size);
      sentSlices += 1;
      if (sentSlices >= slices) {
        clearInterval(timer);
        req.end(slice);
      } else req.write(slice);
    }, options.trickleMs / slices);
    req.flushHeaders();
  });
}

/** Waits until GET /readyz answers 200 (the process has started). */
export async function waitUntilReady(port: number, bridge: BridgeProcess, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      if (bridge.child.exitCode !== null) throw new Error(`bridge exited early:\n${bridge.output()}`);
      const res = await call(port, { path: "/readyz" });
      return res.kind === "answer" && res.status === 200;
    },
    { timeoutMs, intervalMs: 100, what: `the bridge on port ${port} to be ready` },
  );
}

/**
 * The live (not zombie) bridge processes among the children of `pid`, from /proc. (Under tsx a
 * process may also have an esbuild child, which is not one of them.)
 */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ")" ends it.
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(ppid) !== pid || state === "Z") continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("src/cli/main"))
        children.push(Number(entry));
    } catch {}
  }
  return children.sort((a, b) => a - b);
}

/** Whether `pid` runs (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The JSON log lines of the process's output (with this `msg`, when one is given). */
export function logLines(bridge: BridgeProcess, msg?: string): Array<Record<string, unknown>> {
  const lines = bridge
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
  return msg === undefined ? lines : lines.filter((line) => line.msg === msg);
}

/** Kills whatever is left of a cluster (its children first), even when a test failed midway. */
export async function disposeCluster(bridge: BridgeProcess | undefined): Promise<void> {
  if (!bridge) return;
  const pid = bridge.child.pid;
  for (const child of pid === undefined ? [] : childPids(pid)) {
    try {
      process.kill(child, "SIGKILL");
    } catch {}
  }
  await bridge.dispose();
}
