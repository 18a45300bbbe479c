import { parseArgs } from "node:util";
import { type Config, processesSchema } from "../config/config-schema.js";
import { ConfigError, loadConfigFile } from "../config/load-config.js";
// The bridge and the emulator are imported when a process runs them: a cluster primary loads
// neither (less memory), and a cluster worker serves its metrics to the primary sooner.
import type { Role, RunningBridge } from "../bridge.js";
import { type Logger, createLogger } from "../observability/logger.js";
import { type Registry, createMetricsRegistry } from "../observability/metrics.js";
import {
  clusterMetricsText,
  isClusterWorker,
  leaveCluster,
  receiveSetup,
  reportReady,
  resolveProcessCount,
  runClusterPrimary,
  serveMetricsToPrimary,
} from "../server/cluster-supervisor.js";
import { type StopSignals, catchStopSignals } from "../server/stop-signals.js";
import { type Sandbox, SandboxError, startSandbox } from "./sandbox.js";

const ROLES: readonly Role[] = ["all", "api", "worker"];

export const START_USAGE =
  "usage: scim-bridge start [--role all|api|worker] [--processes N|auto] [--config FILE]\n";

/** A usage error of `start`: one line saying what is wrong, then the usage text; exit 2. */
function usageError(problem: string): number {
  process.stderr.write(`start: ${problem}\n${START_USAGE}`);
  return 2;
}

/**
 * What node:util parseArgs says of arguments it refuses (an unknown option, an option without its
 * value, an extra argument), in one line: its first sentence, which names the option.
 */
function parseArgsProblem(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_")) return undefined;
  const first = (err as Error).message.split(/\.\s/)[0] ?? "";
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/**
 * `stopSignals`: SIGTERM and SIGINT, caught from as early as the caller could (main does before it
 * loads this module). A signal while the sandbox or the bridge starts, or the instant after the
 * banner, then stops the process cleanly instead of ending it by the signal's default action.
 */
export async function runStart(args: string[], stopSignals = catchStopSignals()): Promise<number> {
  if (isClusterWorker()) return runClusterWorker(stopSignals);
  if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) {
    process.stdout.write(START_USAGE);
    return 0;
  }
  let values: { role: string; config?: string; processes?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        role: { type: "string", default: "all" },
        config: { type: "string" },
        processes: { type: "string" },
      },
    }));
  } catch (err) {
    const problem = parseArgsProblem(err);
    if (problem === undefined) throw err;
    return usageError(problem);
  }
  const role = values.role as Role;
  if (!ROLES.includes(role)) return usageError(`--role must be one of ${ROLES.join(", ")}`);
  let processesFlag: number | "auto" | undefined;
  if (values.processes !== undefined) {
    const parsed = processesSchema.safeParse(
      /^\d+$/.test(values.processes) ? Number(values.processes) : values.processes,
    );
    if (!parsed.success) return usageError("--processes must be a whole number, 1 or more, or auto");
    processesFlag = parsed.data;
  }
  const file = values.config ?? process.env.SCIM_BRIDGE_CONFIG;
  let config: Config;
  let sandbox: Sandbox | undefined;
  try {
    if (file) {
      config = loadConfigFile(file, process.env);
    } else {
      sandbox = await startSandbox(process.env);
      config = sandbox.config;
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof SandboxError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }

  const processes = resolveProcessCount(processesFlag ?? config.server.processes);
  if (processes > 1 && !sandbox) {
    // Several bridge processes sharing the port(s): this process becomes their cluster primary.
    return runClusterPrimary({
      processes,
      setup: { config, role } satisfies WorkerSetup,
      logger: createLogger(config.logLevel),
      shutdownLimitMs: shutdownLimitMs(config),
      startedFields: { role, sources: Object.keys(config.sources) },
      stopSignals,
    });
  }
  const logger = createLogger(config.logLevel);
  if (processes > 1) {
    logger.warn(
      { processes },
      "the sandbox runs in one process; --processes and server.processes are ignored",
    );
  }
  return runBridgeProcess(config, role, logger, stopSignals, sandbox);
}

/** What a cluster worker receives from its primary: the primary's config and role, as they are. */
interface WorkerSetup {
  config: Config;
  role: Role;
}

/** A cluster worker (server.processes > 1): one bridge, run as a single process runs it. */
async function runClusterWorker(stopSignals: StopSignals): Promise<number> {
  // Before anything else, so that the primary's metrics requests find this process answering.
  const registry = createMetricsRegistry();
  serveMetricsToPrimary(registry);
  // The primary sends SIGTERM to a process still waiting for its setup when it stops, and then
  // sends no setup: such a process leaves the cluster and exits 0.
  const setup = await Promise.race([receiveSetup<WorkerSetup>(), stopSignals.next.then(() => undefined)]);
  if (!setup) {
    leaveCluster();
    return 0;
  }
  const { config, role } = setup;
  const logger = createLogger(config.logLevel).child({ pid: process.pid });
  return runBridgeProcess(config, role, logger, stopSignals, undefined, {
    registry,
    metricsText: clusterMetricsText(),
    started: (bridge) => reportReady(bridge),
    stopped: leaveCluster,
  });
}

/** How a cluster worker's bridge differs from a single process's: metrics and start/stop reports. */
interface InCluster {
  registry: Registry;
  metricsText: () => Promise<string>;
  started(bridge: { url?: string; adminUrl?: string }): void;
  stopped(): void;
}

/**
 * Runs one bridge in this process until SIGTERM or SIGINT (`stopSignals`, caught since the process
 * began to start): the single process, or a cluster worker.
 */
async function runBridgeProcess(
  config: Config,
  role: Role,
  logger: Logger,
  stopSignals: StopSignals,
  sandbox?: Sandbox,
  inCluster?: InCluster,
): Promise<number> {
  // bridge.close() bounds each step (drain, requests and jobs in flight, Redis); this is the last
  // resort if one of them hangs anyway.
  const armShutdownLimit = () => {
    const limitMs = shutdownLimitMs(config);
    setTimeout(() => {
      logger.error({ limitMs }, "shutdown timed out; exiting");
      process.exit(1);
    }, limitMs).unref();
  };
  const stopped = () => {
    logger.info("shut down");
    inCluster?.stopped();
    // Everything is closed; a handle left open by a library must not hold the exit.
    setTimeout(() => {
      logger.warn("open handles after shutdown; exiting");
      process.exit(0);
    }, 1_000).unref();
    return 0;
  };
  if (stopSignals.received) {
    // Stopped while the sandbox started: no bridge to start.
    logger.info({ signal: stopSignals.received }, "shutting down before the bridge started");
    armShutdownLimit();
    await sandbox?.close().catch((err: unknown) => logger.warn({ err }, "error while shutting down"));
    return stopped();
  }
  const { startBridge } = await import("../bridge.js");
  let bridge: RunningBridge;
  try {
    bridge = await startBridge(
      config,
      inCluster
        ? { role, logger, registry: inCluster.registry, metricsText: inCluster.metricsText }
        : { role, logger },
    );
  } catch (err) {
    // Exit at once, whatever client is still retrying: the orchestrator restarts the process.
    logger.fatal({ err: (err as Error).message }, "scim-bridge could not start");
    if (sandbox) {
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE")
        process.stderr.write(
          `port ${config.server.port} is taken (another bridge?): stop that one, or start the sandbox with PORT=<another port>\n`,
        );
      // Its Redis claim is released, so that the next start is not refused as a second sandbox.
      await Promise.race([sandbox.close(), new Promise((resolve) => setTimeout(resolve, 1_000))]);
    }
    process.exit(1);
  }
  if (sandbox) process.stdout.write(`${sandbox.banner}\n  bridge:             ${bridge.url}\n`);
  if (inCluster) {
    logger.info({ role, url: bridge.url }, "bridge process started");
    inCluster.started(bridge);
  } else {
    logger.info({ role, url: bridge.url, sources: Object.keys(config.sources) }, "scim-bridge started");
  }

  // A signal that arrived while the bridge started (or since) stops it now. A second signal during
  // the shutdown gets the default action (the process ends at once).
  const signal = await stopSignals.next;
  logger.info({ signal }, "shutting down");
  armShutdownLimit();
  await bridge
    .close()
    .then(() => sandbox?.close())
    .catch((err: unknown) => logger.warn({ err }, "error while shutting down"));
  return stopped();
}

/** How long a shutdown may take in all before the process gives up and exits 1. */
export function shutdownLimitMs(config: Config): number {
  return (config.server.drainDelayMs ?? 0) + config.server.shutdownTimeoutMs + 5_000;
}
