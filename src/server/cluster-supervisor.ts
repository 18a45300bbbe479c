/**
 * Several bridge processes behind one port (node:cluster, `server.processes` > 1). The primary runs
 * no bridge: it forks the workers, each of which runs exactly what a single `scim-bridge start`
 * runs, hands them their setup over IPC, restarts one that dies, stops them all on SIGTERM or
 * SIGINT, and aggregates their metrics for GET /metrics (prom-client's AggregatorRegistry). The
 * workers log to the shared stdout themselves. Its decisions are the small pure functions at the top; the rest is wiring.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { AggregatorRegistry, type Registry } from "prom-client";
import type { Logger } from "../observability/logger.js";

// ---------------------------------------------------------------------------------------------
// Decisions

/** `server.processes` or `--processes`: "auto" is one process per CPU this process may use. */
export function resolveProcessCount(setting: number | "auto", available = availableParallelism()): number {
  return setting === "auto" ? Math.max(1, available) : setting;
}

export interface RestartPolicy {
  /** Pause before a dead process is replaced. */
  delayMs: number;
  /** More restarts than this within `windowMs` is a crash loop: the primary gives up. */
  maxRestarts: number;
  windowMs: number;
}

export const RESTART_POLICY: RestartPolicy = { delayMs: 1_000, maxRestarts: 5, windowMs: 60_000 };

export interface WorkerExit {
  /** The primary is shutting down (a signal, or it gave up): exits are expected. */
  stopping: boolean;
  /** The process had reported that its bridge started (it listens). */
  wasReady: boolean;
  /** Every process of the first start has reported ready ("scim-bridge started" was logged). */
  started: boolean;
  /** When the earlier restarts happened (ms since the epoch); older than the window do not count. */
  restarts: readonly number[];
  now: number;
}

export type ExitDecision =
  | { action: "none" }
  | { action: "restart"; delayMs: number }
  | { action: "give-up"; reason: string };

/** What the primary does when one of its bridge processes exits. */
export function decideOnWorkerExit(exit: WorkerExit, policy: RestartPolicy = RESTART_POLICY): ExitDecision {
  if (exit.stopping) return { action: "none" };
  // Like a single process whose bridge cannot start: exit 1 and let the orchestrator see it.
  if (!exit.started && !exit.wasReady)
    return { action: "give-up", reason: "a bridge process could not start" };
  const recent = exit.restarts.filter((at) => exit.now - at < policy.windowMs).length;
  if (recent >= policy.maxRestarts) {
    return {
      action: "give-up",
      reason: `bridge processes keep exiting: ${recent} restarts within ${policy.windowMs / 1000} s`,
    };
  }
  return { action: "restart", delayMs: policy.delayMs };
}

export interface ShutdownOutcome {
  /** How each process ended once the shutdown began. */
  exits: ReadonlyArray<{ code: number | null; signal: string | null }>;
  /** Some process outlived the shutdown limit and was killed. */
  killed: boolean;
  /** The primary gave up (a process could not start, or a crash loop). */
  failed: boolean;
}

/**
 * The primary's exit code: 0 when every process stopped cleanly (exit 0, or ended by the SIGTERM
 * it was sent before it had set up its own handler), 1 otherwise.
 */
export function shutdownExitCode(outcome: ShutdownOutcome): number {
  if (outcome.failed || outcome.killed) return 1;
  const clean = outcome.exits.every((e) => e.code === 0 || (e.code === null && e.signal === "SIGTERM"));
  return clean ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// IPC between the primary and its workers

const MSG = {
  /** worker -> primary: listening for its setup. */
  boot: "scim-bridge:worker-boot",
  /** primary -> worker: `{setup}`. */
  setup: "scim-bridge:worker-setup",
  /** worker -> primary: `{url, adminUrl}`, its bridge started. */
  ready: "scim-bridge:worker-ready",
  /** worker -> primary: `{id}`, a GET /metrics wants the cluster's metrics. */
  metricsRequest: "scim-bridge:metrics-request",
  /** primary -> worker: `{id, text}` or `{id, error}`. */
  metricsAnswer: "scim-bridge:metrics-answer",
} as const;

type Message = { type?: unknown; [key: string]: unknown };

function isMessage(value: unknown, type: string): value is Message {
  return value !== null && typeof value === "object" && (value as Message).type === type;
}

/** How long a worker's GET /metrics waits for the primary (prom-client's own bound is 5 s). */
export const METRICS_TIMEOUT_MS = 6_000;

// ---------------------------------------------------------------------------------------------
// Primary

export interface ClusterPrimaryOptions {
  processes: number;
  /** Sent to every worker over IPC when it starts (JSON): all it needs to run its bridge. */
  setup: unknown;
  logger: Logger;
  /** After SIGTERM, how long the workers may take before they are killed (SIGKILL). */
  shutdownLimitMs: number;
  /** More fields of the one "scim-bridge started" line (role, sources). */
  startedFields?: Record<string, unknown>;
  policy?: RestartPolicy;
}

interface Member {
  worker: Worker;
  pid: number | undefined;
  ready: boolean;
  url?: string;
  adminUrl?: string;
}

/**
 * Runs the cluster primary until it is stopped (SIGTERM or SIGINT) or gives up; resolves with its
 * exit code. It never runs a bridge itself.
 */
export function runClusterPrimary(options: ClusterPrimaryOptions): Promise<number> {
  const { logger, processes, policy = RESTART_POLICY } = options;
  // Answers clusterMetrics() by asking every worker for its registry (they serve it, see
  // serveMetricsToPrimary) and aggregating each metric by its own aggregator.
  const aggregator = new AggregatorRegistry();
  // Workers write to the primary's own stdout and stderr. Their loggers write whole lines of at most
  // PIPE_BUF bytes at a time (src/observability/logger.ts), which the kernel never interleaves; a
  // primary relaying their lines cost each request about 0.2 ms of CPU (the intake benchmark).
  cluster.setupPrimary({ stdio: ["inherit", "inherit", "inherit", "ipc"] });

  const members = new Map<number, Member>();
  const restarts: number[] = [];
  const restartTimers = new Set<NodeJS.Timeout>();
  /** Processes that have not closed yet (they may have exited already). */
  const unclosed = new Set<Promise<void>>();
  const shutdownExits: Array<{ code: number | null; signal: string | null }> = [];
  let started = false;
  let stopping = false;
  let failed = false;
  let killed = false;

  return new Promise<number>((resolve) => {
    const send = (worker: Worker, message: Message) => {
      if (!worker.isConnected()) return;
      worker.send(message, undefined, (err: Error | null) => {
        if (err) logger.debug({ worker: worker.id, err: err.message }, "could not reach a bridge process");
      });
    };

    const fork = () => {
      const worker = cluster.fork();
      const closed: Promise<void> = new Promise<void>((done) =>
        worker.process.once("close", () => {
          unclosed.delete(closed);
          done();
        }),
      );
      unclosed.add(closed);
      const member: Member = { worker, pid: worker.process.pid, ready: false };
      members.set(worker.id, member);
      logger.info({ worker: worker.id, pid: member.pid }, "bridge process starting");
      worker.on("message", (message: unknown) => onMessage(member, message));
      worker.on("error", (err: Error) =>
        logger.warn({ worker: worker.id, pid: member.pid, err: err.message }, "bridge process error"),
      );
      worker.once("exit", (code: number | null, signal: string | null) => onExit(member, code, signal));
    };

    const onMessage = (member: Member, message: unknown) => {
      const { worker } = member;
      if (isMessage(message, MSG.boot)) {
        if (!stopping) send(worker, { type: MSG.setup, setup: options.setup });
      } else if (isMessage(message, MSG.ready)) {
        member.ready = true;
        member.url = typeof message.url === "string" ? message.url : undefined;
        member.adminUrl = typeof message.adminUrl === "string" ? message.adminUrl : undefined;
        logger.info({ worker: worker.id, pid: member.pid, url: member.url }, "bridge process ready");
        const all = [...members.values()];
        if (!started && !stopping && all.length === processes && all.every((m) => m.ready)) {
          started = true;
          logger.info(
            {
              ...options.startedFields,
              url: member.url,
              ...(member.adminUrl ? { adminUrl: member.adminUrl } : {}),
              processes,
              pids: all.map((m) => m.pid),
            },
            "scim-bridge started",
          );
        }
      } else if (isMessage(message, MSG.metricsRequest)) {
        const id = message.id;
        aggregator.clusterMetrics().then(
          (text) => send(worker, { type: MSG.metricsAnswer, id, text }),
          (err: unknown) => send(worker, { type: MSG.metricsAnswer, id, error: (err as Error).message }),
        );
      }
    };

    const onExit = (member: Member, code: number | null, signal: string | null) => {
      const { worker } = member;
      members.delete(worker.id);
      const fields = { worker: worker.id, pid: member.pid, code, signal };
      if (stopping) {
        shutdownExits.push({ code, signal });
        logger.info(fields, "bridge process exited");
        return;
      }
      logger.warn({ ...fields, wasReady: member.ready }, "bridge process exited unexpectedly");
      const now = Date.now();
      const decision = decideOnWorkerExit(
        { stopping, wasReady: member.ready, started, restarts, now },
        policy,
      );
      if (decision.action === "restart") {
        restarts.push(now);
        while (restarts.length > 0 && now - restarts[0]! >= policy.windowMs) restarts.shift();
        logger.info({ delayMs: decision.delayMs }, "replacing the bridge process");
        const timer = setTimeout(() => {
          restartTimers.delete(timer);
          if (!stopping) fork();
        }, decision.delayMs);
        restartTimers.add(timer);
      } else if (decision.action === "give-up") {
        logger.fatal({ reason: decision.reason }, `${decision.reason}; stopping every process`);
        failed = true;
        void stop();
      }
    };

    /** Stops every process; `signal` is the one the primary received (none when it gave up). */
    const stop = async (signal?: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      for (const timer of restartTimers) clearTimeout(timer);
      restartTimers.clear();
      logger.info({ ...(signal ? { signal } : {}), processes: members.size }, "shutting down");
      const left = [...members.values()];
      for (const { worker } of left) worker.process.kill("SIGTERM");
      const killTimer = setTimeout(() => {
        for (const m of members.values()) {
          killed = true;
          logger.error(
            { worker: m.worker.id, pid: m.pid, limitMs: options.shutdownLimitMs },
            "bridge process did not stop in time; killing it",
          );
          m.worker.process.kill("SIGKILL");
        }
      }, options.shutdownLimitMs);
      await Promise.all([...unclosed]);
      clearTimeout(killTimer);
      const code = shutdownExitCode({ exits: shutdownExits, killed, failed });
      logger.info({ code }, "shut down");
      resolve(code);
      // Every process has ended; a handle left open must not hold the primary's exit.
      setTimeout(() => process.exit(code), 1_000).unref();
    };

    // A second signal during shutdown gets the default action: the primary ends at once, and
    // node:cluster ends its workers with it (they exit when their IPC channel closes).
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
    for (let i = 0; i < processes; i++) fork();
  });
}

// ---------------------------------------------------------------------------------------------
// Worker

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/**
 * Worker: answers the primary's requests for this process's metrics with `registry` (prom-client's
 * cluster protocol). Call it first thing, before the bridge starts, so that a scrape during a
 * restart finds the new process answering.
 */
export function serveMetricsToPrimary(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one adds prom-client's listener for the primary's requests (once per process).
  new AggregatorRegistry();
}

/** Worker: tells the primary it listens for its setup, and waits for it. */
export function receiveSetup<T>(): Promise<T> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error("not a cluster worker"));
      return;
    }
    const onMessage = (message: unknown) => {
      if (!isMessage(message, MSG.setup)) return;
      process.off("message", onMessage);
      resolve(message.setup as T);
    };
    process.on("message", onMessage);
    process.send({ type: MSG.boot });
  });
}

/** Worker: its bridge started and listens at `url`. */
export function reportReady(info: { url?: string; adminUrl?: string }): void {
  process.send?.({ type: MSG.ready, url: info.url, adminUrl: info.adminUrl });
}

/**
 * Worker: the source of GET /metrics: the cluster's metrics, aggregated by the primary. Rejects
 * when the primary does not answer within `timeoutMs` (the scrape is then answered 503).
 */
export function clusterMetricsText(timeoutMs = METRICS_TIMEOUT_MS): () => Promise<string> {
  let next = 0;
  const pending = new Map<
    number,
    { resolve(text: string): void; reject(err: Error): void; timer: NodeJS.Timeout }
  >();
  process.on("message", (message: unknown) => {
    if (!isMessage(message, MSG.metricsAnswer) || typeof message.id !== "number") return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (typeof message.text === "string") waiting.resolve(message.text);
    else waiting.reject(new Error(`the cluster's metrics could not be gathered: ${String(message.error)}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      if (!process.send || !process.connected) {
        reject(new Error("not connected to the cluster primary"));
        return;
      }
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the cluster primary did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      pending.set(id, { resolve, reject, timer });
      process.send({ type: MSG.metricsRequest, id }, undefined, undefined, (err: Error | null) => {
        if (!err || !pending.delete(id)) return;
        clearTimeout(timer);
        reject(new Error(`could not ask the cluster primary: ${err.message}`));
      });
    });
}

/**
 * Worker, after its bridge has closed: leaves the cluster (closes the IPC channel), so that the
 * process can end by itself like a single process does.
 */
export function leaveCluster(): void {
  cluster.worker?.disconnect();
}
