/**
 * The processes a sync benchmark runs: the emulator host (from source through tsx) and one or two
 * bridge processes (`startBridge` with `--role ...`, from the built `dist/` as operators run it),
 * each on 127.0.0.1, logging to files in the run directory, with their peak RSS sampled from /proc.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { stringify } from "yaml";

export const ROOT = resolve(import.meta.dirname, "../..");
export const PLATFORM_TOKEN = "bench-platform-token";
export const SOURCE_TOKEN = "bench-source-token";
export const ADMIN_TOKEN = "bench-admin-token";
export const SOURCE = "bench";
export const DEPARTMENT_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export interface Proc {
  name: string;
  child: ChildProcess;
  /** Highest VmHWM (kB) read so far, and the highest sampled VmRSS (kB). */
  peakHwmKb: number;
  peakRssKb: number;
  /** CPU seconds (user + system) used so far, as of the last sample. */
  cpuSeconds: number;
}

/** utime + stime of a process in seconds (/proc/<pid>/stat fields 14 and 15, 100 ticks/s). */
function readCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function readProcKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU seconds a process has used so far (0 once it has exited). */
export function cpuSecondsOf(p: Proc): number {
  return p.child.pid === undefined ? 0 : readCpuSeconds(p.child.pid);
}

/** Samples VmHWM/VmRSS and CPU time of each process every `intervalMs` until stopped. */
export function sampleRss(procs: Proc[], intervalMs = 250): () => void {
  const tick = () => {
    for (const p of procs) {
      if (p.child.pid === undefined || p.child.exitCode !== null) continue;
      p.peakHwmKb = Math.max(p.peakHwmKb, readProcKb(p.child.pid, "VmHWM"));
      p.peakRssKb = Math.max(p.peakRssKb, readProcKb(p.child.pid, "VmRSS"));
      p.cpuSeconds = Math.max(p.cpuSeconds, readCpuSeconds(p.child.pid));
    }
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return () => {
    tick();
    clearInterval(timer);
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export function runDirectory(name: string): string {
  const dir = `/tmp/bench-sync-${name}-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Spawns a node process (no npx or tsx wrapper process) running a JavaScript entry, or a TypeScript
 * one through tsx's loader.
 */
function spawnNode(
  name: string,
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logDir: string,
  nodeArgs: string[] = [],
): Proc {
  const loader = entry.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(join(logDir, `${name}.log`));
  child.stderr?.pipe(log);
  return { name, child, peakHwmKb: 0, peakRssKb: 0, cpuSeconds: 0 };
}

/** Newest modification time (ms) of the files under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Builds `dist/` (`npm run build`) when it is missing or older than the sources, so that the bridge
 * a benchmark measures is the code checked out. Bench code itself is not part of `dist/`.
 */
export function ensureBridgeBuilt(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, "dist/src/bridge.js")).mtimeMs;
  } catch {
    // not built yet
  }
  const sources = Math.max(...["src", "routes", "jobs"].map((d) => newestMtime(join(ROOT, d))));
  if (built >= sources) return;
  process.stderr.write("building dist/ (npm run build): it is older than the sources\n");
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
}

export async function startEmulatorHost(logDir: string): Promise<{ proc: Proc; url: string }> {
  const proc = spawnNode("emulator", "bench/sync/emulator-host.ts", ["--token", PLATFORM_TOKEN], {}, logDir);
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    proc.child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolveUrl((JSON.parse(line) as { url: string }).url);
    });
    proc.child.once("exit", (code) => reject(new Error(`emulator host exited with ${code}`)));
  });
  return { proc, url };
}

export interface BridgeConfigOptions {
  platformUrl: string;
  prefix: string;
  port: number;
  attributes?: boolean;
  /** sync.concurrency (default: the bridge's default). */
  syncConcurrency?: number;
}

/** The bridge's YAML config: no platform rate limit to speak of, defaults for sync settings. */
export function writeBridgeConfig(dir: string, o: BridgeConfigOptions): string {
  const config = {
    platform: {
      baseUrl: o.platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      requestsPerSecond: 100_000,
    },
    admin: { tokens: [ADMIN_TOKEN] },
    // Once a year: no scheduled reconciliation during a run.
    reconcile: { schedule: "0 0 1 1 *" },
    redis: { url: REDIS_URL, prefix: o.prefix },
    server: { port: o.port, host: "127.0.0.1" },
    ...(o.syncConcurrency ? { sync: { concurrency: o.syncConcurrency } } : {}),
    logLevel: "warn",
    sources: {
      [SOURCE]: {
        tokens: [SOURCE_TOKEN],
        rateLimit: { requestsPerSecond: 100_000 },
        attributes:
          o.attributes === false
            ? {}
            : { department: { from: `${DEPARTMENT_URN}:department`, type: "string" } },
      },
    },
  };
  const file = join(dir, "bridge-config.yaml");
  writeFileSync(file, stringify(config));
  return file;
}

export interface BridgeProc extends Proc {
  /** The bench hook that answers the bridge's isIdle() (bench/sync/bridge-host.mjs). */
  controlUrl: string;
  /** The bridge's own HTTP server (SCIM for api/all, /metrics for every role). */
  url: string;
}

/**
 * Starts a bridge process with `--role <role>` (bench/sync/bridge-host.mjs on the built `dist/`,
 * built first if stale: startBridge from the
 * YAML config, as `scim-bridge start` does, plus an isIdle hook); waits for /readyz.
 */
export async function startBridgeProcess(
  role: "all" | "api" | "worker",
  configFile: string,
  logDir: string,
  port: number,
  /** Write V8 CPU profiles of the bridge process into logDir/profile-<role>/ at exit. */
  profile = false,
): Promise<BridgeProc> {
  ensureBridgeBuilt();
  const controlPort = await freePort();
  const proc = spawnNode(
    `bridge-${role}`,
    "bench/sync/bridge-host.mjs",
    ["--role", role, "--control-port", String(controlPort)],
    { SCIM_BRIDGE_CONFIG: configFile, PORT: String(port) },
    logDir,
    profile ? ["--cpu-prof", `--cpu-prof-dir=${join(logDir, `profile-${role}`)}`] : [],
  );
  proc.child.stdout?.resume();
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`bridge ${role} exited with ${proc.child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.status === 200) {
        return { ...proc, controlUrl: `http://127.0.0.1:${controlPort}`, url: `http://127.0.0.1:${port}` };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`bridge ${role} not ready within 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stopProcess(p: Proc, graceMs = 15_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once("exit", () => r()));
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Deletes every key under the run's own prefix (SCAN, never KEYS). */
export async function deletePrefixKeys(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let cursor = "0";
  let deleted = 0;
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  try {
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    await redis.quit();
  }
  return deleted;
}

/** Redis commands a bridge process has sent so far, by name (bench/sync/bridge-host.mjs). */
export async function redisStats(p: BridgeProc): Promise<Record<string, number>> {
  const res = await fetch(`${p.controlUrl}/redis-stats`).catch(() => undefined);
  return res?.status === 200 ? ((await res.json()) as Record<string, number>) : {};
}

/** The bridge's Prometheus text (empty when it does not answer). */
export async function scrapeMetrics(p: BridgeProc): Promise<string> {
  return fetch(`${p.url}/metrics`).then(
    (r) => r.text(),
    () => "",
  );
}
