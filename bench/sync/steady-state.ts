/**
 * Steady state (issue 4, "Benchmarks"): after a preload (default 2,000 users, 100 groups of ~20,
 * no faults), 200 changes per second for 60 s — 60 % profile PATCHes, 20 % deactivations and
 * reactivations, 20 % membership adds/removes — while the emulator answers every call in 20 ms
 * (a slow fault on all operations). For each change: the time from the SCIM answer to the first
 * platform write that carries it (see correlate.ts). Reports p50/p99 and checks the end state.
 *
 *   npx tsx bench/sync/steady-state.ts [--rate 200] [--duration 60] [--delay 20] [--users 2000]
 *     [--groups 100] [--members 20] [--split] [--profile] [--sync-concurrency N] [--record]
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  ADMIN_TOKEN,
  type BridgeProc,
  cpuSecondsOf,
  deletePrefixKeys,
  freePort,
  type Proc,
  redisStats,
  scrapeMetrics,
  runDirectory,
  SOURCE,
  SOURCE_TOKEN,
  sampleRss,
  startBridgeProcess,
  startEmulatorHost,
  stopProcess,
  writeBridgeConfig,
} from "./bench-processes.js";
import { machineLine, mb, ms, recordResult, table, uptimeLine } from "./bench-report.js";
import { ChangeGenerator, sendChanges } from "./change-generator.js";
import { correlate, type Write } from "./correlate.js";
import { checkEndState, groupBody, makePopulation, type PlatformSnapshot, userBody } from "./population.js";
import { HttpClient, idleProbe, nowMs, runPool, waitForIdle } from "./scim-client.js";
import { latencyRows, windowText } from "./latency-summary.js";
import {
  type Counters,
  meanDurations,
  redisDeltaText,
  summariseWrites,
  timelineFromWrites,
  timelineText,
} from "./write-summary.js";

const { values: args } = parseArgs({
  options: {
    rate: { type: "string", default: "200" },
    duration: { type: "string", default: "60" },
    delay: { type: "string", default: "20" },
    users: { type: "string", default: "2000" },
    groups: { type: "string", default: "100" },
    members: { type: "string", default: "20" },
    split: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    "sync-concurrency": { type: "string" },
    record: { type: "boolean", default: false },
  },
});
const RATE = Number(args.rate);
const DURATION = Number(args.duration);
const USERS = Number(args.users);
const GROUPS = Number(args.groups);

async function main(): Promise<number> {
  const loadBefore = uptimeLine();
  const date = new Date().toISOString();
  const dir = runDirectory("steady-state");
  const prefix = `{bench-sync-${randomUUID().slice(0, 8)}}`;
  const procs: Proc[] = [];
  const clients: HttpClient[] = [];
  let stopSampling = () => {};
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
    const bridgeProcs: BridgeProc[] = args.split
      ? [
          await startBridgeProcess("api", configFile, dir, apiPort, args.profile),
          await startBridgeProcess("worker", configFile, dir, await freePort(), args.profile),
        ]
      : [await startBridgeProcess("all", configFile, dir, apiPort, args.profile)];
    procs.push(...bridgeProcs);
    stopSampling = sampleRss(procs);
    const bridgeUrl = `http://127.0.0.1:${apiPort}`;
    const scim = new HttpClient(bridgeUrl, SOURCE_TOKEN, 64);
    const admin = new HttpClient(bridgeUrl, ADMIN_TOKEN, 2);
    const emu = new HttpClient(emulator.url, "", 2);
    clients.push(scim, admin, emu);
    const probe = await idleProbe(admin, bridgeProcs[0]!.controlUrl);

    // Preload (not measured).
    const population = makePopulation(USERS, GROUPS, Number(args.members), 7);
    const scimIds: string[] = new Array(USERS);
    await runPool(USERS, 32, async (i) => {
      const a = await scim.send("POST", `/scim/v2/${SOURCE}/Users`, userBody(population.users[i]!, i));
      if (a.status !== 201) throw new Error(`create user ${i}: ${a.status}`);
      scimIds[i] = (a.body as { id: string }).id;
    });
    const groupIds: string[] = new Array(GROUPS);
    await runPool(GROUPS, 32, async (g) => {
      const a = await scim.send(
        "POST",
        `/scim/v2/${SOURCE}/Groups`,
        groupBody(population.groups[g]!, scimIds),
      );
      if (a.status !== 201) throw new Error(`create group ${g}: ${a.status}`);
      groupIds[g] = (a.body as { id: string }).id;
    });
    if (!(await waitForIdle(probe, Date.now() + 300_000))) throw new Error("preload not idle within 300 s");
    const pre = (await emu.send("GET", "/_emulator/state")).body as PlatformSnapshot;
    const userPid = new Map(pre.users.map((u) => [u.userName.toLowerCase(), u.id]));
    const groupPid = new Map(pre.groups.map((g) => [g.displayName.toLowerCase(), g.id]));
    const pidOfUser = (i: number) => userPid.get(population.users[i]!.userName.toLowerCase())!;
    const pidOfGroup = (g: number) => groupPid.get(population.groups[g]!.displayName.toLowerCase())!;
    process.stdout.write(`preloaded ${USERS} users, ${GROUPS} groups; measuring\n`);

    // Measured phase.
    await emu.send("POST", "/_emulator/faults", { type: "slow", delayMs: Number(args.delay) });
    await emu.send("POST", "/_bench/record", { on: true });
    const countersBefore = ((await emu.send("GET", "/_emulator/requests")).body as { counters: Counters })
      .counters;
    const generator = new ChangeGenerator({
      users: population.users,
      groups: population.groups,
      scimUserIds: scimIds,
      scimGroupIds: groupIds,
      platformUserId: pidOfUser,
      platformGroupId: pidOfGroup,
    });
    const cpuBefore = procs.map(cpuSecondsOf);
    const redisBefore = await Promise.all(bridgeProcs.map(redisStats));
    const workerProc = bridgeProcs[bridgeProcs.length - 1]!;
    const metricsBefore = await scrapeMetrics(workerProc);
    const sent = await sendChanges(scim, SOURCE, generator, RATE, DURATION);
    const { changes, tStart } = sent;
    const tSentAll = sent.tEnd;
    const idle = await waitForIdle(probe, Date.now() + 300_000);
    const redisAfter = await Promise.all(bridgeProcs.map(redisStats));
    const metricsAfter = await scrapeMetrics(workerProc);
    const cpuUsed = procs
      .map((p, i) => `${p.name} ${(cpuSecondsOf(p) - cpuBefore[i]!).toFixed(1)} s`)
      .join(", ");
    stopSampling();
    await emu.send("POST", "/_bench/record", { on: false });
    await emu.send("DELETE", "/_emulator/faults");

    const writes = ((await emu.send("GET", "/_bench/writes")).body as { writes: Write[] }).writes;
    const counters = ((await emu.send("GET", "/_emulator/requests")).body as { counters: Counters }).counters;
    const violations = ((await emu.send("GET", "/_emulator/violations")).body as { violations: unknown[] })
      .violations;
    const state = (await emu.send("GET", "/_emulator/state")).body as PlatformSnapshot;
    writeFileSync(join(dir, "writes.json"), JSON.stringify(writes));
    writeFileSync(join(dir, "changes.json"), JSON.stringify(changes));
    writeFileSync(
      join(dir, "metrics.txt"),
      await fetch(`${bridgeUrl}/metrics`).then((r) => r.text(), String),
    );

    const matches = correlate(changes, writes);
    const expected = { users: population.users, groups: generator.expectedGroups() };
    const endState = checkEndState(expected, state);
    const byId = new Map(state.users.map((u) => [u.id, u]));
    const wrongNames = generator.displayNames.filter(
      (name, i) => byId.get(pidOfUser(i))?.displayName !== name,
    ).length;
    const problems =
      endState.missingUsers +
      endState.wrongActive +
      endState.missingGroups +
      endState.wrongMembership +
      endState.duplicateUsers +
      endState.duplicateGroups +
      endState.wrongDepartment +
      endState.unexpectedUsers +
      wrongNames +
      violations.length;
    const phase = subtractCounters(counters, countersBefore);
    const w = summariseWrites(phase, USERS, 0);
    const verdictRows = latencyRows(matches);
    const command = `npx tsx bench/sync/steady-state.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`;
    const block = [
      `#### ${date} — ${RATE}/s for ${DURATION} s, emulator ${args.delay} ms per call, ${args.split ? "api + worker processes" : "one process, role all"}`,
      "",
      `Command: \`${command}\` · machine: ${machineLine()}`,
      `Load before: \`${loadBefore}\` · after: \`${uptimeLine()}\``,
      "",
      table([
        [
          "bridge settings",
          `sync.concurrency ${args["sync-concurrency"] ?? "16 (default)"}, platform.requestsPerSecond 100000, other sync settings default${process.env.BENCH_SYNC_EXPERIMENT ? `; **experiment ${process.env.BENCH_SYNC_EXPERIMENT}**` : ""}`,
        ],
        [
          "preload",
          `${USERS} users, ${GROUPS} groups (avg ${args.members} members), no faults, not measured`,
        ],
        [
          "changes sent",
          `${changes.length} answered 2xx, ${sent.failed} failed; ${sent.overlaps} sent while the same entity had one in flight; generator lag max ${ms(sent.maxLagMs)}; sending took ${ms(tSentAll - tStart)}`,
        ],
        ...verdictRows,
        ["drained (idle) after last change", idle ? ms(idle.idleAt - tSentAll) : "**not idle within 300 s**"],
        ["platform writes in the phase", `${w.total}: ${w.byOperation}`],
        ["platform reads in the phase", w.reads],
        [
          "CPU time used in the phase until idle (user+sys)",
          `${cpuUsed} (wall ${ms((idle?.idleAt ?? nowMs()) - tStart)})`,
        ],
        [
          "Redis commands sent by the bridge (incl. the bench's idle polling every 100 ms)",
          bridgeProcs
            .map(
              (p, i) =>
                `${p.name}: ${redisDeltaText(redisBefore[i]!, redisAfter[i]!, changes.length, "change")}`,
            )
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
        ["peak RSS (VmHWM)", bridgeProcs.map((p) => `${p.name} ${mb(p.peakHwmKb)}`).join(", ")],
        [
          "end state",
          problems === 0
            ? "correct: every displayName, active flag and group membership as last pushed; no duplicates; 0 contract violations"
            : `**${problems} problem(s)**: ${JSON.stringify({ ...endState, examples: undefined, wrongNames, violations: violations.length })}`,
        ],
      ]),
      "",
      "Latency by 10 s window of the SCIM answer (arrival at the emulator):",
      "",
      "```",
      windowText(matches, tStart),
      "```",
      "",
      "Platform writes per 5 s during the phase:",
      "",
      "```",
      timelineText(timelineFromWrites(writes, tStart), tStart, 5),
      "```",
    ].join("\n");
    process.stdout.write(`\n${block}\n`);
    if (endState.examples.length > 0) process.stdout.write(`examples: ${endState.examples.join("; ")}\n`);
    process.stdout.write(`run files: ${dir}\n`);
    if (args.record) recordResult("Steady state", block);
    return problems === 0 && idle ? 0 : 1;
  } finally {
    stopSampling();
    for (const c of clients) c.close();
    for (const p of procs.reverse()) await stopProcess(p);
    const deleted = await deletePrefixKeys(prefix);
    process.stdout.write(`deleted ${deleted} Redis keys under ${prefix}\n`);
  }
}

function subtractCounters(after: Counters, before: Counters): Counters {
  const byOperation: Counters["byOperation"] = {};
  for (const [op, c] of Object.entries(after.byOperation)) {
    const b = before.byOperation[op];
    const byStatus: Record<string, number> = {};
    for (const [s, n] of Object.entries(c.byStatus)) {
      const d = n - (b?.byStatus[s] ?? 0);
      if (d > 0) byStatus[s] = d;
    }
    const calls = c.calls - (b?.calls ?? 0);
    if (calls > 0) byOperation[op] = { calls, byStatus };
  }
  return { total: after.total - before.total, writes: after.writes - before.writes, byOperation };
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
