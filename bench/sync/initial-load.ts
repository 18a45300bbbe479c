/**
 * Initial load (issue 4, "Benchmarks"): 20,000 users and 1,000 groups (average 50 members)
 * pushed over SCIM (keep-alive, fixed concurrency) into a bridge in its own process, against the
 * emulator in another with no rate limit. Measures time until idle, platform write calls per user
 * (by operation; attribute values apart), peak RSS of the bridge, and checks the end state.
 *
 *   npx tsx bench/sync/initial-load.ts [--users 20000] [--groups 1000] [--members 50]
 *     [--concurrency 32] [--split] [--profile] [--sync-concurrency N] [--timeout 600] [--record]
 *
 * --split runs one api and one worker process instead of one `--role all` process.
 * --profile writes a V8 CPU profile of each bridge process into the run directory
 * (summarise it with bench/sync/profile-summary.ts).
 * --record appends the figures to the "sync" section of bench/RESULTS.md.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  ADMIN_TOKEN,
  deletePrefixKeys,
  freePort,
  type BridgeProc,
  cpuSecondsOf,
  type Proc,
  redisStats,
  scrapeMetrics,
  SOURCE,
  SOURCE_TOKEN,
  sampleRss,
  startBridgeProcess,
  startEmulatorHost,
  stopProcess,
  writeBridgeConfig,
  runDirectory,
} from "./bench-processes.js";
import { machineLine, mb, ms, recordResult, table, uptimeLine } from "./bench-report.js";
import { checkEndState, groupBody, makePopulation, type PlatformSnapshot, userBody } from "./population.js";
import { HttpClient, idleProbe, nowMs, runPool, waitForIdle } from "./scim-client.js";
import {
  type Counters,
  meanDurations,
  redisDeltaText,
  summariseWrites,
  type Timeline,
  timelineText,
} from "./write-summary.js";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "20000" },
    groups: { type: "string", default: "1000" },
    members: { type: "string", default: "50" },
    concurrency: { type: "string", default: "32" },
    timeout: { type: "string", default: "600" },
    split: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    "sync-concurrency": { type: "string" },
    record: { type: "boolean", default: false },
  },
});
const USERS = Number(args.users);
const GROUPS = Number(args.groups);
const CONCURRENCY = Number(args.concurrency);

async function main(): Promise<number> {
  const loadBefore = uptimeLine();
  const date = new Date().toISOString();
  const dir = runDirectory("initial-load");
  const prefix = `{bench-sync-${randomUUID().slice(0, 8)}}`;
  const procs: Proc[] = [];
  let stopSampling = () => {};
  const clients: HttpClient[] = [];
  try {
    const emulator = await startEmulatorHost(dir);
    procs.push(emulator.proc);
    const apiPort = await freePort();
    const configFile = writeBridgeConfig(dir, {
      platformUrl: emulator.url,
      prefix,
      port: apiPort,
      syncConcurrency: args["sync-concurrency"] ? Number(args["sync-concurrency"]) : undefined,
    });
    const bridgeProcs: BridgeProc[] = [];
    if (args.split) {
      bridgeProcs.push(await startBridgeProcess("api", configFile, dir, apiPort, args.profile));
      bridgeProcs.push(await startBridgeProcess("worker", configFile, dir, await freePort(), args.profile));
    } else {
      bridgeProcs.push(await startBridgeProcess("all", configFile, dir, apiPort, args.profile));
    }
    procs.push(...bridgeProcs);
    stopSampling = sampleRss(procs);
    const bridgeUrl = `http://127.0.0.1:${apiPort}`;
    const scim = new HttpClient(bridgeUrl, SOURCE_TOKEN, CONCURRENCY);
    const admin = new HttpClient(bridgeUrl, ADMIN_TOKEN, 2);
    const emu = new HttpClient(emulator.url, "", 2);
    clients.push(scim, admin, emu);

    const population = makePopulation(USERS, GROUPS, Number(args.members));
    const scimIds: string[] = new Array(USERS);
    process.stdout.write(`pushing ${USERS} users and ${GROUPS} groups (concurrency ${CONCURRENCY})\n`);
    const cpuBefore = procs.map(cpuSecondsOf);
    const redisBefore = await Promise.all(bridgeProcs.map(redisStats));
    const workerProc = bridgeProcs[bridgeProcs.length - 1]!;
    const metricsBefore = await scrapeMetrics(workerProc);
    const t0 = nowMs();
    await runPool(USERS, CONCURRENCY, async (i) => {
      const a = await scim.send("POST", `/scim/v2/${SOURCE}/Users`, userBody(population.users[i]!, i));
      if (a.status !== 201) throw new Error(`create user ${i}: ${a.status} ${JSON.stringify(a.body)}`);
      scimIds[i] = (a.body as { id: string }).id;
    });
    const tUsersPushed = nowMs();
    await runPool(GROUPS, CONCURRENCY, async (g) => {
      const a = await scim.send(
        "POST",
        `/scim/v2/${SOURCE}/Groups`,
        groupBody(population.groups[g]!, scimIds),
      );
      if (a.status !== 201) throw new Error(`create group ${g}: ${a.status} ${JSON.stringify(a.body)}`);
    });
    const tPushed = nowMs();
    process.stdout.write(`pushed in ${ms(tPushed - t0)}; waiting for idle\n`);

    const samples: Array<{ t: number; pending: unknown; queues: unknown }> = [];
    let lastSample = 0;
    const probe = await idleProbe(admin, bridgeProcs[0]!.controlUrl);
    const idle = await waitForIdle(probe, Date.now() + Number(args.timeout) * 1000, (s) => {
      const t = nowMs();
      if (t - lastSample < 1000) return;
      lastSample = t;
      samples.push({ t: Math.round(t - t0), pending: s["pending"], queues: s["queues"] });
    });
    const tIdle = idle?.idleAt;
    const redisAfter = await Promise.all(bridgeProcs.map(redisStats));
    const metricsAfter = await scrapeMetrics(workerProc);
    const cpuUsed = procs
      .map((p, i) => `${p.name} ${(cpuSecondsOf(p) - cpuBefore[i]!).toFixed(1)} s`)
      .join(", ");
    stopSampling();

    const counters = ((await emu.send("GET", "/_emulator/requests")).body as { counters: Counters }).counters;
    const timeline = (await emu.send("GET", "/_bench/timeline")).body as Timeline;
    const violations = ((await emu.send("GET", "/_emulator/violations")).body as { violations: unknown[] })
      .violations;
    const state = (await emu.send("GET", "/_emulator/state")).body as PlatformSnapshot;
    const endState = checkEndState(population, state);
    const metrics = await fetch(`${bridgeUrl}/metrics`).then((r) => r.text(), String);
    writeFileSync(join(dir, "metrics.txt"), metrics);
    writeFileSync(join(dir, "status-samples.json"), JSON.stringify(samples, null, 1));
    writeFileSync(join(dir, "counters.json"), JSON.stringify(counters, null, 1));

    const writes = summariseWrites(counters, USERS);
    const peak = bridgeProcs.map((p) => `${p.name} ${mb(p.peakHwmKb)}`).join(", ");
    const peakMaxKb = Math.max(...bridgeProcs.map((p) => p.peakHwmKb));
    const converged = tIdle !== undefined;
    const idleMs = converged ? tIdle - t0 : Number.NaN;
    const problems =
      endState.missingUsers +
      endState.wrongActive +
      endState.wrongDepartment +
      endState.missingGroups +
      endState.wrongMembership +
      endState.duplicateUsers +
      endState.duplicateGroups +
      endState.unexpectedUsers +
      violations.length;
    const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
    const loadAfter = uptimeLine();
    const command = `npx tsx bench/sync/initial-load.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`;
    const block = [
      `#### ${date} — ${USERS} users, ${GROUPS} groups, ${args.split ? "api + worker processes" : "one process, role all"}`,
      "",
      `Command: \`${command}\` · machine: ${machineLine()}`,
      `Load before: \`${loadBefore}\` · after: \`${loadAfter}\``,
      "",
      table([
        [
          "bridge settings",
          `sync.concurrency ${args["sync-concurrency"] ?? "16 (default)"}, platform.requestsPerSecond 100000, other sync settings default${process.env.BENCH_SYNC_EXPERIMENT ? `; **experiment ${process.env.BENCH_SYNC_EXPERIMENT}**` : ""}`,
        ],
        ["idle observed via", probe.via],
        ["SCIM push (users, then groups)", `${ms(tUsersPushed - t0)} + ${ms(tPushed - tUsersPushed)}`],
        [
          "time until idle (from first SCIM request)",
          converged
            ? `${ms(idleMs)} (target 60 s: ${verdict(idleMs <= 60_000)})`
            : `**not idle within ${args.timeout} s**`,
        ],
        [
          "platform writes, attribute values apart",
          `${writes.nonAttribute} = ${writes.perUser.toFixed(3)} per user (target ≤ 1.1: ${verdict(writes.perUser <= 1.1)})`,
        ],
        [
          "attribute value writes (department)",
          `${writes.attributeValues} = ${writes.perValue.toFixed(3)} per value (target ≤ 1: ${verdict(writes.perValue <= 1)}); definitions: ${writes.attributeDefinitions}`,
        ],
        ["writes by operation", writes.byOperation],
        ["reads (GET) by operation", writes.reads],
        ["CPU time used from first request to idle (user+sys)", cpuUsed],
        [
          "Redis commands sent by the bridge (incl. the bench's idle polling every 100 ms)",
          bridgeProcs
            .map((p, i) => `${p.name}: ${redisDeltaText(redisBefore[i]!, redisAfter[i]!, USERS, "user")}`)
            .join("; "),
        ],
        [
          "sync job duration (mean, by kind; bridge metrics)",
          meanDurations(metricsBefore, metricsAfter, "sync_job_duration_seconds", "kind"),
        ],
        [
          "platform call duration seen by the bridge (mean)",
          meanDurations(metricsBefore, metricsAfter, "platform_request_duration_seconds", "operation"),
        ],
        ["peak RSS (VmHWM)", `${peak} (target < 300 MB: ${verdict(peakMaxKb < 300 * 1024)})`],
        [
          "end state",
          problems === 0
            ? `correct: ${endState.platformUsers} users, ${endState.platformGroups} groups, active flags, departments and members as pushed; no duplicates; 0 contract violations`
            : `**${problems} problem(s)**: ${JSON.stringify({ ...endState, examples: undefined, violations: violations.length })}`,
        ],
      ]),
      "",
      "Platform writes over time (from the emulator):",
      "",
      "```",
      timelineText(timeline, t0),
      "```",
    ].join("\n");
    process.stdout.write(`\n${block}\n`);
    if (endState.examples.length > 0) process.stdout.write(`examples: ${endState.examples.join("; ")}\n`);
    if (violations.length > 0)
      process.stdout.write(`violations: ${JSON.stringify(violations.slice(0, 5))}\n`);
    process.stdout.write(`run files (logs, metrics, status samples): ${dir}\n`);
    if (args.record) recordResult("Initial load", block);
    return converged && problems === 0 ? 0 : 1;
  } finally {
    stopSampling();
    for (const c of clients) c.close();
    for (const p of procs.reverse()) await stopProcess(p);
    const deleted = await deletePrefixKeys(prefix);
    process.stdout.write(`deleted ${deleted} Redis keys under ${prefix}\n`);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
