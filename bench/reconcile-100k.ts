/**
 * Benchmark: reconciliation of one source with 100k users against the platform emulator.
 *
 *   node --import tsx bench/reconcile-100k.ts [--users 100000] [--rps 20,100] [--no-write]
 *
 * The parent starts the emulator in a child process (so its memory is not counted), seeds the
 * platform (users, 0.5% changed behind the bridge's back, 100 orphans) and the directory with the
 * sync state of a converged source, then runs the reconciliation in a second child process
 * (bench/reconcile/run-child.ts) that reports its duration and peak RSS. Results go to the
 * "Reconcile" section of bench/RESULTS.md.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { RedisDirectoryStore } from "../src/directory/redis-directory-store.js";
import { matchesFilter } from "../src/scim/filter-eval.js";
import { SCHEMA_USER, refKey } from "../src/scim/scim-types.js";
import { syncKeys } from "../src/sync/sync-keys.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "100000" },
    rps: { type: "string", default: "20,100" },
    "no-write": { type: "boolean", default: false },
  },
});
const USERS = Number(values.users);
const BUDGETS = values.rps.split(",").map(Number);
const CHANGED_EVERY = 200; // 0.5% of the users changed on the platform
const ORPHANS = 100;
const TOKEN = "bench-platform-token";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `{bench-reconcile-${Date.now()}}`;

function startEmulator(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "emulator", "--port", "0", "--token", TOKEN],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolve({ url: match[1], stop: () => child.kill("SIGTERM") });
    });
    child.once("exit", (code) => reject(new Error(`emulator exited ${code}`)));
  });
}

async function seedPlatform(url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < USERS + ORPHANS; start += 10_000) {
    const users = [];
    for (let i = start; i < Math.min(start + 10_000, USERS + ORPHANS); i++) {
      const orphan = i >= USERS;
      users.push({
        schemas: [SCHEMA_USER],
        userName: orphan ? `orphan${i}@example.com` : `user${i}@example.com`,
        displayName: !orphan && i % CHANGED_EVERY === 0 ? `Changed ${i}` : `User ${i}`,
        active: true,
      });
    }
    const res = await fetch(`${url}/_emulator/seed`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ users }),
    });
    if (!res.ok) throw new Error(`seed: ${res.status} ${await res.text()}`);
    ids.push(...((await res.json()) as { users: string[] }).users);
  }
  return ids;
}

async function seedDirectory(redis: Redis, platformIds: string[]): Promise<void> {
  const directory = new RedisDirectoryStore({ redis, prefix, notify: async () => {}, matchesFilter });
  const lanes = 64;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = lane; i < USERS; i += lanes) {
        const record = await directory.createUser("bench", {
          schemas: [SCHEMA_USER],
          userName: `user${i}@example.com`,
          displayName: `User ${i}`,
          active: true,
        });
        const ref = { source: "bench", kind: "user" as const, id: record.resource.id };
        const pid = platformIds[i] as string;
        await redis
          .multi()
          .hset(syncKeys.pid(prefix, "bench"), ref.id, pid)
          .hset(syncKeys.owner(prefix, "user"), pid, refKey(ref))
          .exec();
        await directory.markClean(ref, record.generation);
      }
    }),
  );
}

function runChild(url: string, rps: number): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/reconcile/run-child.ts"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      BENCH_PREFIX: prefix,
      BENCH_PLATFORM_URL: url,
      BENCH_TOKEN: TOKEN,
      BENCH_RPS: String(rps),
      REDIS_URL,
    },
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0) return reject(new Error(`run child exited ${code}: ${out}`));
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

async function deleteKeys(redis: Redis): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(
      cursor,
      "MATCH",
      `${prefix.replace(/[{}]/g, "\\$&")}*`,
      "COUNT",
      5000,
    );
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
}

const BEGIN = "<!-- reconcile:begin (written by bench/reconcile-100k.ts) -->";
const END = "<!-- reconcile:end -->";

function writeResults(body: string): void {
  const path = "bench/RESULTS.md";
  let text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmark results\n";
  if (!text.includes(BEGIN)) {
    text = text.includes("## Reconcile")
      ? text.replace("## Reconcile", `## Reconcile\n\n${BEGIN}\n${END}`)
      : `${text.trimEnd()}\n\n## Reconcile\n\n${BEGIN}\n${END}\n`;
  }
  const start = text.indexOf(BEGIN) + BEGIN.length;
  const end = text.indexOf(END);
  writeFileSync(path, `${text.slice(0, start)}\n${body.trim()}\n${text.slice(end)}`);
}

const redis = new Redis(REDIS_URL);
const emulator = await startEmulator();
try {
  const t0 = Date.now();
  const platformIds = await seedPlatform(emulator.url);
  const t1 = Date.now();
  await seedDirectory(redis, platformIds);
  const t2 = Date.now();
  process.stderr.write(`seeded platform in ${t1 - t0} ms, directory in ${t2 - t1} ms\n`);
  const rows: string[] = [];
  let last: Record<string, unknown> = {};
  for (const rps of BUDGETS) {
    const result = await runChild(emulator.url, rps);
    process.stderr.write(`${JSON.stringify(result)}\n`);
    const durationS = Number(result.durationMs) / 1000;
    const peakMb = Number(result.peakRssMb);
    rows.push(
      `| ${rps} | ${durationS.toFixed(1)} s (${durationS < 60 ? "met" : "missed"}) | ${peakMb.toFixed(0)} MB (${peakMb < 300 ? "met" : "missed"}; ${Number(result.baselineRssMb).toFixed(0)} MB before the run) | ${result.platformRequests} | ${result.state} |`,
    );
    last = result;
  }
  const body = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, local Redis, emulator in its own process.`,
    "",
    `Source with ${USERS.toLocaleString("en")} users (${USERS / CHANGED_EVERY} changed on the platform behind the bridge's back) and ${ORPHANS} orphans; one non-dry run per platform budget (repairs enqueued, not synced; orphans reported). Targets: under 60 s, under 300 MB peak RSS (getrusage maxRSS of the process running the reconciliation).`,
    "",
    "| platform budget (requests/s) | run duration | peak RSS | platform requests | state |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    `Counts: \`${JSON.stringify(last.counts)}\`; repairs enqueued: ${(last.repairs as { entities: number } | undefined)?.entities}.`,
    "",
    `The platform lists 100 users a page, so a run needs at least ${Math.ceil((USERS + ORPHANS) / 100)} list calls: at the default budget of 20 requests/s the listing alone takes ${Math.ceil((USERS + ORPHANS) / 100 / 20)} s. The next page is fetched while the previous one is classified; the duration at 20 requests/s is bound by the budget.`,
  ].join("\n");
  if (!values["no-write"]) writeResults(body);
  process.stdout.write(`${body}\n`);
} finally {
  emulator.stop();
  await deleteKeys(redis);
  await redis.quit();
}
