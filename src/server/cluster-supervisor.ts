/**
 * Several bridge processes behind one port (node:cluster, `server.processes` > 1). The primary runs
 * no bridge: it forks the workers, each of which runs exactly what a single `scim-bridge start`
 * runs, hands them their setup over IPC, restarts one that dies, stops them all on SIGTERM or
 * SIGINT, and aggregates their metrics for GET /metrics (prom-client's AggregatorRegistry.aggregate). The
 * workers log to the shared stdout themselves. Its decisions are the small pure functions at the top; the rest is wiring.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from "prom-client";
import type { Logger } from "../observability/logger.js";
import { type StopSignals, catchStopSignals } from "./stop-signals.js";

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
  /** worker -> primary: it answers metricsCollect from now on. */
  metricsServing: "scim-bridge:metrics-serving",
  /** primary -> worker: `{id}`, send this process's metrics. */
  metricsCollect: "scim-bridge:metrics-collect",
  /** worker -> primary: `{id, metrics}` (prom-client's getMetricsAsJSON) or `{id, error}`. */
  metricsPart: "scim-bridge:metrics-part",
  /** worker -> primary: `{id}`, a GET /metrics wants the cluster's metrics. */
  metricsRequest: "scim-bridge:metrics-request",
  /** primary -> worker: `{id, text}` or `{id, error}`. */
  metricsAnswer: "scim-bridge:metrics-answer",
} as const;

type Message = { type?: unknown; [key: string]: unknown };

function isMessage(value: unknown, type: string): value is Message {
  return value !== null && typeof value === "object" && (value as Message).type === type;
}

/** How long the primary waits for the processes' metrics before the scrape fails. */
export const GATHER_TIMEOUT_MS = 5_000;
/** How long a worker's GET /metrics waits for the primary (longer than its gathering). */
export const METRICS_TIMEOUT_MS = 6_000;

type ProcessMetrics = Array<MetricObjectWithValues<MetricValue<string>>>;

/**
 * Primary: one scrape's gathering of every process's metrics. It waits only for the processes
 * asked (those that said they serve metrics, so not one still loading its code), and stops
 * waiting for one that exits: a scrape while a process is replaced answers with the processes
 * alive. A process that does not answer within the time limit (hung) fails the scrape.
 */
export class MetricsGathering {
  readonly #parts: ProcessMetrics[] = [];
  readonly #waiting: Set<number>;
  readonly #timer: NodeJS.Timeout;
  #settled = false;

  constructor(
    asked: Iterable<number>,
    private readonly settle: (result: { text: string } | { error: string }) => void,
    timeoutMs = GATHER_TIMEOUT_MS,
  ) {
    this.#waiting = new Set(asked);
    this.#timer = setTimeout(
      () =>
        this.#finish({ error: `${this.#waiting.size} process(es) did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    this.#timer.unref();
    this.#check();
  }

  /** A process's answer (its metrics, or why it has none). */
  answer(workerId: number, part: { metrics?: unknown; error?: unknown }): void {
    if (!this.#waiting.delete(workerId)) return;
    if (Array.isArray(part.metrics)) this.#parts.push(part.metrics as ProcessMetrics);
    else this.#finish({ error: `a process could not read its metrics: ${String(part.error)}` });
    this.#check();
  }

  /** A process exited: its metrics are gone with it. */
  gone(workerId: number): void {
    if (this.#waiting.delete(workerId)) this.#check();
  }

  get settled(): boolean {
    return this.#settled;
  }

  #check(): void {
    if (this.#waiting.size > 0 || this.#settled) return;
    AggregatorRegistry.aggregate(this.#parts)
      .metrics()
      .then(
        (text) => this.#finish({ text }),
        (err: unknown) => this.#finish({ error: (err as Error).message }),
      );
  }

  #finish(result: { text: string } | { error: string }): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.settle(result);
  }
}

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
  /** SIGTERM and SIGINT, caught since the process began to start (default: caught from now on). */
  stopSignals?: StopSignals;
}

interface Member {
  worker: Worker;
  pid: number | undefined;
  ready: boolean;
  /** It answers metricsCollect (set up before it loads the bridge). */
  servesMetrics: boolean;
  url?: string;
  adminUrl?: string;
}

/**
 * Runs the cluster primary until it is stopped (SIGTERM or SIGINT) or gives up; resolves with its
 * exit code. It never runs a bridge itself.
 */
export function runClusterPrimary(options: ClusterPrimaryOptions): Promise<number> {
  const { logger, processes, policy = RESTART_POLICY } = options;
  // A worker's metrics request is answered by asking every worker that serves its registry (see
  // serveMetricsToPrimary) and aggregating each metric by its own aggregator.
  let nextGathering = 0;
  const gatherings = new Map<number, MetricsGathering>();
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
      const member: Member = { worker, pid: worker.process.pid, ready: false, servesMetrics: false };
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
      } else if (isMessage(message, MSG.metricsServing)) {
        member.servesMetrics = true;
      } else if (isMessage(message, MSG.metricsRequest)) {
        const id = message.id;
        const gatheringId = nextGathering++;
        const asked = [...members.values()].filter((m) => m.servesMetrics && m.worker.isConnected());
        const gathering = new MetricsGathering(
          asked.map((m) => m.worker.id),
          (result) => {
            gatherings.delete(gatheringId);
            send(worker, { type: MSG.metricsAnswer, id, ...result });
          },
        );
        if (!gathering.settled) gatherings.set(gatheringId, gathering);
        for (const m of asked) send(m.worker, { type: MSG.metricsCollect, id: gatheringId });
      } else if (isMessage(message, MSG.metricsPart) && typeof message.id === "number") {
        gatherings.get(message.id)?.answer(worker.id, { metrics: message.metrics, error: message.error });
      }
    };

    const onExit = (member: Member, code: number | null, signal: string | null) => {
      const { worker } = member;
      members.delete(worker.id);
      for (const gathering of [...gatherings.values()]) gathering.gone(worker.id);
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
    const stopSignals = options.stopSignals ?? catchStopSignals();
    if (stopSignals.received) {
      void stop(stopSignals.received);
      return;
    }
    void stopSignals.next.then((signal) => stop(signal));
    for (let i = 0; i < processes; i++) fork();
  });
}

// ---------------------------------------------------------------------------------------------
// Worker

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/**
 * Worker: answers the primary's requests for this process's metrics with `registry`. Call it first
 * thing, before the bridge starts: the primary asks a process only once it has said it answers.
 */
export function serveMetricsToPrimary(registry: Registry): void {
  process.on("message", (message: unknown) => {
    if (!isMessage(message, MSG.metricsCollect) || typeof message.id !== "number") return;
    const id = message.id;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: MSG.metricsPart, id, metrics }),
      (err: unknown) => process.send?.({ type: MSG.metricsPart, id, error: (err as Error).message }),
    );
  });
  process.send?.({ type: MSG.metricsServing });
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
