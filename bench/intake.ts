/**
 * The intake benchmark (issue 2): POST /Users, GET `userName eq` with 100k users stored, and group
 * PATCHes with 5,000 members, against the real bridge (`startBridge`, role "api", in a child
 * process) and, side by side in the same run, a plain in-memory scimmy-routers server (another
 * child). This process is the load generator: keep-alive connections, fixed concurrency, bounded
 * in time and count, only on 127.0.0.1. Writes the figures into bench/RESULTS.md and deletes its
 * Redis keys (its own prefix) afterwards.
 *
 * The bridge is measured twice: as one process (the in-process child above), and as an operator
 * runs it on a machine with several cores, `scim-bridge start --role api --processes N` (the CLI,
 * a cluster primary and N workers sharing the port; CPU summed over the process tree).
 *
 *   npx tsx bench/intake.ts [--quick] [--no-write] [--concurrency=32] [--processes=2] [--profile=<dir>]
 */
import { execSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { newToken } from "../src/config/tokens.js";
import { type ServerChild, startServerChild } from "./intake/child-process.js";
import { type CliServer, startCliServer } from "./intake/cli-server.js";
import { type LoadResult, createClient, percentile, runLoad } from "./intake/load-generator.js";
import { writeIntakeSection } from "./intake/results-file.js";
import { deleteKeys, seedUsers, userBody } from "./intake/seed.js";

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k ?? "", v ?? "true"] as const;
  }),
);
const quick = args.has("quick");
const concurrency = Number(args.get("concurrency") ?? 32);
const profileDir = args.get("profile");
/** Processes of the clustered bridge (`start --processes N`); 0 leaves that run out. */
const processes = Number(args.get("processes") ?? 2);
/** `--only=creates` (or lookups, groups, comma-separated) runs a part; the results file is then left alone. */
const only = args.has("only") ? new Set((args.get("only") ?? "").split(",")) : undefined;
const runs = (phase: string) => only === undefined || only.has(phase);
const redisUrl = "redis://127.0.0.1:6379";
const run = randomBytes(4).toString("hex");
const prefix = `{bench-intake-${run}}`;
/** One token per source (a token belongs to exactly one source); the baseline uses "bench"'s. */
const tokens: Record<string, string> = { bench: newToken(), lookup: newToken(), groups: newToken() };
const token = tokens.bench as string;
const tokenOf = (source: string) => tokens[source] ?? token;
const scale = {
  warmup: quick ? 300 : 1_000,
  createMs: Number(args.get("create-ms") ?? (quick ? 3_000 : 10_000)),
  lookupUsers: quick ? 10_000 : 100_000,
  lookupMs: quick ? 3_000 : 10_000,
  groupUsers: 5_000,
  bigPatchRuns: quick ? 3 : 10,
  smallPatchRuns: quick ? 50 : 200,
};

const uptime = () =>
  execSync("uptime")
    .toString()
    .trim()
    .replace(/^.*load average/, "load average");
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const log = (line: string) => process.stdout.write(`${line}\n`);
const loads: string[] = [];
const noteLoad = (when: string) => {
  const line = `${when}: ${uptime()}`;
  loads.push(line);
  log(`  [${line}]`);
};

/**
 * A load result plus the server process's CPU time (user + system) per answer, and Redis's (from
 * INFO cpu: an upper bound, since other engineers' tests share this Redis).
 */
type Measured = LoadResult & { cpuMsPerRequest: number; redisCpuMsPerRequest: number };

async function redisCpuMs(): Promise<number> {
  const redis = new Redis(redisUrl);
  try {
    const info = await redis.info("cpu");
    const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? Number.NaN);
    return (field("used_cpu_user") + field("used_cpu_sys")) * 1000;
  } finally {
    redis.disconnect();
  }
}

/** A server's CPU time so far (user + system, ms): the child's own, or a process tree's. */
type CpuReader = () => Promise<number>;

function cpuOf(server: ServerChild): CpuReader {
  return async () => {
    const usage = await server.request<NodeJS.CpuUsage>({ cpu: true }, "cpuUsage", 5_000);
    return (usage.user + usage.system) / 1000;
  };
}

const treeCpuOf =
  (server: CliServer): CpuReader =>
  async () =>
    server.cpuMs();

/** Runs a load and reads the server's CPU time before and after (load-insensitive cost per request). */
async function measured(cpu: CpuReader, load: () => Promise<LoadResult>): Promise<Measured> {
  const before = await cpu();
  const redisBefore = await redisCpuMs();
  const result = await load();
  const after = await cpu();
  const redisAfter = await redisCpuMs();
  const answers = Math.max(1, result.ok + result.errors);
  return {
    ...result,
    cpuMsPerRequest: (after - before) / answers,
    redisCpuMsPerRequest: (redisAfter - redisBefore) / answers,
  };
}

function describe(name: string, r: Measured): string {
  const errs = r.errors ? ` errors=${r.errors} ${JSON.stringify(r.errorKinds)}` : "";
  return `${name}: ${r.ok} ok in ${fmt(r.elapsedMs / 1000, 2)} s = ${fmt(r.perSecond, 0)}/s, p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, max ${fmt(r.maxMs, 1)} ms, server CPU ${fmt(r.cpuMsPerRequest, 3)} ms/req, Redis CPU <= ${fmt(r.redisCpuMsPerRequest, 3)} ms/req, generator CPU ${fmt(r.generatorCpuMsPerRequest, 3)} ms/req${errs}`;
}

const bridgeConfig = {
  platform: { baseUrl: "http://127.0.0.1:9", token: "unused-by-the-api-role", allowInsecureHttp: true },
  redis: { url: redisUrl, prefix },
  server: { port: 0, host: "127.0.0.1" },
  logLevel: "info",
  // The limiter stays in the path (one Redis call per request), with a rate the load cannot reach.
  sources: Object.fromEntries(
    Object.entries(tokens).map(([s, t]) => [s, { tokens: [t], rateLimit: { requestsPerSecond: 1e6 } }]),
  ),
};

const createLoad = (base: string, source: string, tag: string, duration: number, max: number) =>
  runLoad({
    baseUrl: base,
    token: tokenOf(source),
    concurrency,
    durationMs: duration,
    maxRequests: max,
    okStatus: 201,
    next: (i) => ({
      method: "POST",
      path: `/scim/v2/${source}/Users`,
      body: JSON.stringify(userBody(`${tag}-${i}@example.com`, i)),
    }),
  });

const lookupLoad = (base: string, source: string, seedTag: string, c: number, duration: number) =>
  runLoad({
    baseUrl: base,
    token: tokenOf(source),
    concurrency: c,
    durationMs: duration,
    maxRequests: 2_000_000,
    okStatus: 200,
    check: (body) => /"totalResults":1[,}]/.test(body),
    next: () => {
      const i = Math.floor(Math.random() * scale.lookupUsers);
      const filter = encodeURIComponent(`userName eq "${seedTag}-${i}@Example.com"`);
      return { method: "GET", path: `/scim/v2/${source}/Users?filter=${filter}` };
    },
  });

async function main() {
  const started = new Date();
  log(`intake benchmark ${run}: concurrency ${concurrency}${quick ? " (quick)" : ""}, ${cpus().length} cpus`);
  noteLoad("before");
  const execArgv = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  let bridge: ServerChild | undefined;
  let baseline: ServerChild | undefined;
  let cluster: CliServer | undefined;
  try {
    bridge = await startServerChild(
      "./bridge-child.ts",
      { BENCH_BRIDGE_CONFIG: JSON.stringify(bridgeConfig) },
      execArgv,
    );
    baseline = await startServerChild("./baseline-child.ts", { BENCH_BASELINE_TOKEN: token });
    if (processes > 0) cluster = await startCliServer(bridgeConfig, processes, execArgv);
    const creates = runs("creates") ? await phaseCreates(bridge, baseline, cluster) : undefined;
    const lookups = runs("lookups") ? await phaseLookups(bridge, baseline, cluster) : undefined;
    const groups = runs("groups") ? await phaseGroups(bridge) : undefined;
    if (!creates || !lookups || !groups) return;

    const section = render({ started, ...creates, ...lookups, groups });
    log("");
    log(section);
    if (!args.has("no-write") && !quick) {
      writeIntakeSection(fileURLToPath(new URL("./RESULTS.md", import.meta.url)), section);
      log("written to bench/RESULTS.md");
    }
  } finally {
    await bridge?.stop().catch(() => bridge?.child.kill("SIGKILL"));
    await baseline?.stop().catch(() => baseline?.child.kill("SIGKILL"));
    await cluster?.stop().catch(() => undefined);
    const deleted = await deleteKeys(redisUrl, prefix);
    log(`deleted ${deleted} Redis keys under ${prefix}`);
  }
}

async function phaseCreates(bridge: ServerChild, baseline: ServerChild, cluster: CliServer | undefined) {
  log("creates (POST /Users)");
  await createLoad(bridge.url, "bench", `warm-${run}`, 30_000, scale.warmup);
  await createLoad(baseline.url, "baseline", `warm-${run}`, 30_000, scale.warmup);
  // The clustered bridge warms up on both of its processes (the primary hands connections round robin).
  if (cluster) await createLoad(cluster.url, "bench", `warmc-${run}`, 30_000, scale.warmup * 3);
  const bridgeCreates = await measured(cpuOf(bridge), () =>
    createLoad(bridge.url, "bench", `c-${run}`, scale.createMs, 200_000),
  );
  log(`  ${describe("scim-bridge, 1 process", bridgeCreates)}`);
  const baselineCreates = await measured(cpuOf(baseline), () =>
    createLoad(baseline.url, "baseline", `c-${run}`, scale.createMs, 200_000),
  );
  log(`  ${describe("scimmy-routers", baselineCreates)}`);
  const clusterCreates = cluster
    ? await measured(treeCpuOf(cluster), () =>
        createLoad(cluster.url, "bench", `cc-${run}`, scale.createMs, 200_000),
      )
    : undefined;
  if (clusterCreates) log(`  ${describe(`scim-bridge, ${processes} processes`, clusterCreates)}`);
  noteLoad("after creates");
  const verified = await verifyCreates(
    scale.warmup + bridgeCreates.ok + (cluster ? scale.warmup * 3 + (clusterCreates?.ok ?? 0) : 0),
  );
  log(
    `  stored ${verified.stored}, dirty ${verified.dirty}, sync jobs waiting ${verified.jobs} (expected ${verified.expected})`,
  );
  return { bridgeCreates, baselineCreates, clusterCreates, verified };
}

async function phaseLookups(bridge: ServerChild, baseline: ServerChild, cluster: CliServer | undefined) {
  log(`lookups (GET userName eq) with ${scale.lookupUsers} users stored`);
  const seedStarted = performance.now();
  await seedUsers({
    redisUrl,
    prefix,
    source: "lookup",
    userName: (i) => `lk-${i}@example.com`,
    count: scale.lookupUsers,
  });
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`  seeded ${scale.lookupUsers} users in ${fmt(seedSeconds, 1)} s`);
  await baseline.request({ seed: { count: scale.lookupUsers, prefix: "lk-" } }, "seeded", 120_000);
  const b = bridge.url;
  const s = baseline.url;
  await lookupLoad(b, "lookup", "lk", concurrency, 2_000);
  await lookupLoad(s, "baseline", "lk", concurrency, 2_000);
  const bridgeLookups = await measured(cpuOf(bridge), () =>
    lookupLoad(b, "lookup", "lk", concurrency, scale.lookupMs),
  );
  log(`  ${describe(`scim-bridge c=${concurrency}`, bridgeLookups)}`);
  const baselineLookups = await measured(cpuOf(baseline), () =>
    lookupLoad(s, "baseline", "lk", concurrency, scale.lookupMs),
  );
  log(`  ${describe(`scimmy-routers c=${concurrency}`, baselineLookups)}`);
  let clusterLookups: Measured | undefined;
  if (cluster) {
    await lookupLoad(cluster.url, "lookup", "lk", concurrency, 2_000);
    clusterLookups = await measured(treeCpuOf(cluster), () =>
      lookupLoad(cluster.url, "lookup", "lk", concurrency, scale.lookupMs),
    );
    log(`  ${describe(`scim-bridge ${processes} processes c=${concurrency}`, clusterLookups)}`);
  }
  const bridgeLookups1 = await measured(cpuOf(bridge), () =>
    lookupLoad(b, "lookup", "lk", 1, scale.lookupMs / 2),
  );
  log(`  ${describe("scim-bridge c=1", bridgeLookups1)}`);
  const baselineLookups1 = await measured(cpuOf(baseline), () =>
    lookupLoad(s, "baseline", "lk", 1, scale.lookupMs / 2),
  );
  log(`  ${describe("scimmy-routers c=1", baselineLookups1)}`);
  noteLoad("after lookups");
  return { bridgeLookups, baselineLookups, clusterLookups, bridgeLookups1, baselineLookups1, seedSeconds };
}

async function phaseGroups(bridge: ServerChild) {
  log("group PATCH (5,000 members)");
  const groups = await groupPatches(bridge.url);
  log(
    `  add 5,000 to an empty group: p50 ${fmt(groups.big.p50)} ms, p99 ${fmt(groups.big.p99)} ms over ${groups.big.n} runs`,
  );
  log(
    `  add 2 + remove 2 on 5,000: p50 ${fmt(groups.small.p50, 2)} ms, p99 ${fmt(groups.small.p99, 2)} ms over ${groups.small.n} runs`,
  );
  noteLoad("after group PATCH");
  return groups;
}

async function verifyCreates(expected: number) {
  const redis = new Redis(redisUrl);
  const queue = new Queue("sync", { connection: redis, prefix });
  try {
    const stored = await redis.zcard(`${prefix}:src:bench:user:ids`);
    const dirty = await redis.zcard(`${prefix}:dirty`);
    const counts = await queue.getJobCounts("wait", "prioritized", "delayed", "active");
    const jobs =
      (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0);
    return {
      expected,
      stored,
      dirty,
      jobs,
      ok: stored === expected && dirty === expected && jobs === expected,
    };
  } finally {
    await queue.close();
    await redis.quit();
  }
}

async function groupPatches(base: string) {
  const ids = await seedUsers({
    redisUrl,
    prefix,
    source: "groups",
    userName: (i) => `gm-${i}@example.com`,
    count: scale.groupUsers + 100,
  });
  const members = ids.slice(0, scale.groupUsers);
  const spare = ids.slice(scale.groupUsers);
  const client = createClient(base, tokenOf("groups"));
  const path = "/scim/v2/groups/Groups";
  const createGroup = async (name: string) => {
    const answer = await client.send({
      method: "POST",
      path,
      body: JSON.stringify({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: name }),
    });
    if (answer.status !== 201) throw new Error(`group create answered ${answer.status}: ${answer.body}`);
    return (JSON.parse(answer.body) as { id: string }).id;
  };
  const patch = (id: string, operations: object[]) =>
    client.send({
      method: "PATCH",
      path: `${path}/${id}`,
      body: JSON.stringify({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: operations,
      }),
    });
  const ok = (status: number) => status === 200 || status === 204;
  try {
    const big: number[] = [];
    let full = "";
    let errors = 0;
    for (let r = 0; r < scale.bigPatchRuns + 1; r += 1) {
      const id = await createGroup(`big-${run}-${r}`);
      const answer = await patch(id, [
        { op: "add", path: "members", value: members.map((value) => ({ value })) },
      ]);
      if (!ok(answer.status)) errors += 1;
      else if (r > 0) big.push(answer.ms); // the first run warms up
      full = id;
    }
    const check = await client.send({ method: "GET", path: `${path}/${full}` });
    const count = ((JSON.parse(check.body) as { members?: unknown[] }).members ?? []).length;
    if (count !== scale.groupUsers)
      throw new Error(`the group holds ${count} members, not ${scale.groupUsers}`);
    const small: number[] = [];
    for (let r = 0; r < scale.smallPatchRuns + 10; r += 1) {
      const pair = Math.floor(r / 2) % 50;
      const inside = [members[pair * 2], members[pair * 2 + 1]];
      const outside = [spare[pair * 2], spare[pair * 2 + 1]];
      const [removed, added] = r % 2 === 0 ? [inside, outside] : [outside, inside];
      const answer = await patch(full, [
        { op: "remove", path: "members", value: removed.map((value) => ({ value })) },
        { op: "add", path: "members", value: added.map((value) => ({ value })) },
      ]);
      if (!ok(answer.status)) errors += 1;
      else if (r >= 10) small.push(answer.ms);
    }
    const stats = (xs: number[]) => {
      const sorted = Float64Array.from(xs).sort();
      return {
        n: xs.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted[sorted.length - 1] ?? Number.NaN,
      };
    };
    return { big: stats(big), small: stats(small), errors };
  } finally {
    client.close();
  }
}

function render(r: {
  started: Date;
  bridgeCreates: Measured;
  baselineCreates: Measured;
  clusterCreates?: Measured;
  verified: Awaited<ReturnType<typeof verifyCreates>>;
  bridgeLookups: Measured;
  baselineLookups: Measured;
  clusterLookups?: Measured;
  bridgeLookups1: Measured;
  baselineLookups1: Measured;
  groups: Awaited<ReturnType<typeof groupPatches>>;
  seedSeconds: number;
}): string {
  const ratio = r.bridgeCreates.perSecond / r.baselineCreates.perSecond;
  const clusterRatio = r.clusterCreates
    ? r.clusterCreates.perSecond / r.baselineCreates.perSecond
    : Number.NaN;
  const nProc = `${processes} processes`;
  const yes = (v: boolean) => (v ? "met" : "**missed**");
  const errs = (x: Measured) => (x.errors ? `${x.errors} ${JSON.stringify(x.errorKinds)}` : "0");
  let commit = "unknown";
  try {
    commit = execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {}
  const row = (name: string, x: Measured | undefined) => (x === undefined ? [] : [rowOf(name, x)]);
  const rowOf = (name: string, x: Measured) =>
    `| ${name} | ${fmt(x.perSecond, 0)} | ${fmt(x.p50Ms, 2)} | ${fmt(x.p99Ms, 2)} | ${fmt(x.cpuMsPerRequest, 3)} | ${fmt(x.redisCpuMsPerRequest, 3)} | ${fmt(x.generatorCpuMsPerRequest, 3)} | ${x.ok} | ${errs(x)} |`;
  const cpuRatio = r.baselineCreates.cpuMsPerRequest / r.bridgeCreates.cpuMsPerRequest;
  const users = `${scale.lookupUsers / 1000}k`;
  return [
    `Run ${r.started.toISOString()} (commit ${commit}), Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Redis on the same machine. Load generator: this process, keep-alive, ${concurrency} requests in flight unless noted. Bridge, 1 process: \`startBridge(config, {role: "api"})\` in a child process (security headers, one request log line at info to /dev/null, HTTP metrics, per-source Redis rate limiter with a rate set out of reach, bearer auth against the source's hashed tokens${process.env.BENCH_EXPERIMENT ? `; experiment: ${process.env.BENCH_EXPERIMENT}` : ""}). Bridge, ${nProc}: the same configuration started as an operator would, \`scim-bridge start --role api --processes ${processes}\` (a cluster primary and ${processes} workers sharing the port; its CPU is the sum over the process tree). Baseline: scimmy-routers with in-memory handlers and a userName index, in a child process (one process: its state is in memory).`,
    "",
    "How to read it: the bridge, Redis, the baseline and this load generator share 2 cores with whatever else runs, so req/s is bounded by the CPU share they get; server CPU per request is the figure that compares the servers' efficiency. One Node process uses about one core, so the single-process rows compare like with like; the multi-process rows show what the bridge does on the machine (its state is in Redis, so its processes share nothing else; an in-memory server cannot be split this way). At c=32 a latency is mostly queueing (Little's law: 32 in flight / req/s); c=1 shows the service time.",
    "",
    "Machine load (`uptime`; other engineers' test suites share these 2 cores):",
    "",
    ...loads.map((l) => `- ${l}`),
    "",
    "| measurement | req/s | p50 ms | p99 ms | server CPU ms/req | Redis CPU ms/req (upper bound) | generator CPU ms/req | answers counted | errors |",
    "|---|---|---|---|---|---|---|---|---|",
    ...row("POST /Users, scim-bridge, 1 process (201s)", r.bridgeCreates),
    ...row(`POST /Users, scim-bridge, ${nProc} (201s)`, r.clusterCreates),
    ...row("POST /Users, scimmy-routers baseline (201s)", r.baselineCreates),
    ...row(`GET userName eq, ${users} stored, scim-bridge, 1 process, c=${concurrency}`, r.bridgeLookups),
    ...row(`GET userName eq, ${users} stored, scim-bridge, ${nProc}, c=${concurrency}`, r.clusterLookups),
    ...row(`GET userName eq, ${users} stored, baseline, c=${concurrency}`, r.baselineLookups),
    ...row(`GET userName eq, ${users} stored, scim-bridge, 1 process, c=1`, r.bridgeLookups1),
    ...row(`GET userName eq, ${users} stored, baseline, c=1`, r.baselineLookups1),
    "",
    `Creates verified in Redis after the run: ${r.verified.stored} users stored, ${r.verified.dirty} dirty markers, ${r.verified.jobs} sync jobs waiting (expected ${r.verified.expected} each, warm-up included): ${r.verified.ok ? "all there" : "**MISMATCH**"}.`,
    "",
    `Group PATCH (one request at a time): add 5,000 members to an empty group: p50 ${fmt(r.groups.big.p50)} ms, p99 ${fmt(r.groups.big.p99)} ms, max ${fmt(r.groups.big.max)} ms (${r.groups.big.n} runs); remove 2 + add 2 on a 5,000-member group: p50 ${fmt(r.groups.small.p50, 2)} ms, p99 ${fmt(r.groups.small.p99, 2)} ms (${r.groups.small.n} runs); errors ${r.groups.errors}.`,
    "",
    `Seeding ${scale.lookupUsers} users through the directory store took ${fmt(r.seedSeconds, 1)} s.`,
    "",
    "| target | measured | |",
    "|---|---|---|",
    `| >= 2,000 creates/s durably stored and marked for sync | 1 process: ${fmt(r.bridgeCreates.perSecond, 0)}/s; ${nProc}: ${r.clusterCreates ? `${fmt(r.clusterCreates.perSecond, 0)}/s` : "not run"} | 1 process: ${yes(r.bridgeCreates.perSecond >= 2000 && r.verified.ok)}; ${nProc}: ${r.clusterCreates ? yes(r.clusterCreates.perSecond >= 2000 && r.verified.ok) : "not run"} |`,
    `| >= 3x the baseline's creates/s | 1 process: ${fmt(ratio, 2)}x; ${nProc}: ${fmt(clusterRatio, 2)}x (server CPU per create, 1 process: ${fmt(cpuRatio, 2)}x less than the baseline) | 1 process: ${yes(ratio >= 3)}; ${nProc}: ${r.clusterCreates ? yes(clusterRatio >= 3) : "not run"} |`,
    `| p99 < 10 ms, userName eq with ${users} users (c=1 / c=${concurrency}) | ${fmt(r.bridgeLookups1.p99Ms, 2)} / ${fmt(r.bridgeLookups.p99Ms, 2)} ms (${nProc}, c=${concurrency}: ${r.clusterLookups ? `${fmt(r.clusterLookups.p99Ms, 2)} ms` : "not run"}) | ${yes(r.bridgeLookups1.p99Ms < 10)} at c=1, ${r.bridgeLookups.p99Ms < 10 ? "met" : "missed"} at c=${concurrency} (queueing) |`,
    `| 5,000-member group PATCH < 50 ms (p99) | ${fmt(r.groups.big.p99)} ms (add 5,000), ${fmt(r.groups.small.p99, 2)} ms (small) | ${yes(r.groups.big.p99 < 50 && r.groups.small.p99 < 50)} |`,
  ].join("\n");
}

await main();
