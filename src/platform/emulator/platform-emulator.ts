/**
 * The platform emulator: the contract (platform-api.yaml) implemented strictly and in memory,
 * over HTTP or HTTPS, with fault injection and inspection for tests, demos and benchmarks.
 *
 * Per request: inspection (/_emulator, no token) -> bearer token (401) -> exact route match
 * (404/405 + violation) -> faults (slow, 429/500/503, drop, rate limit) -> body and parameter
 * validation against the contract (400 + violation) -> handler -> answer (or, for a ghost write,
 * the socket is destroyed after the change is applied; for a cut-off one, after part of its answer).
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type AnswerVariations, variationsProblem, varyBody } from "./answer-variations.js";
import {
  contractOperations,
  matchRoute,
  parseParameters,
  responseProblem,
  validateBody,
} from "./contract-operations.js";
import { EmulatorError } from "./emulator-error.js";
import { EmulatorState, type Handler } from "./emulator-state.js";
import { faultError, unknownRoute } from "./fault-answers.js";
import { FaultInjector, type FaultRule } from "./fault-injector.js";
import { errorBody, parseJsonBody, readRawBody, sendCutOff, sendJson } from "./http-io.js";
import { handleInspection } from "./inspection-routes.js";
import { RequestRecorder } from "./request-recorder.js";
import { scimHandlers } from "./scim-handlers.js";
import { selfSignedCertificate } from "./self-signed-cert.js";
import { type DriftAction, drift, type SeedData, type SeedResult, seed, snapshot } from "./state-control.js";
import { v1Handlers } from "./v1-handlers.js";

export interface PlatformEmulatorOptions {
  /** The bearer token every /api request must carry. */
  token: string;
  /** Serve HTTPS with a self-signed certificate made at start (default false). */
  tls?: boolean;
  /** Fault rules active from the start (default none). */
  faults?: FaultRule[];
  /** Seed for ids and fault draws (default: time-based, not repeatable). */
  seed?: number;
  /** Request log ring size (default 10,000); counters stay exact. */
  logSize?: number;
  /**
   * Check every success answer against the contract's response schema and answer 500
   * EMULATOR_BUG when it does not match (default false; the emulator's own tests turn it on).
   */
  checkResponses?: boolean;
  /**
   * Answers the contract allows that differ from the defaults (README "Variations"): a smaller
   * page limit, another list order, optional fields left out, unknown fields added, the other PATCH
   * answers, 400 noTarget for a missing member, empty lists of a missing tenant. Default none.
   */
  variations?: AnswerVariations;
}

const HANDLERS: Record<string, Handler> = { ...scimHandlers, ...v1Handlers };

export class PlatformEmulator {
  readonly data: EmulatorState;
  readonly recorder: RequestRecorder;
  readonly injector: FaultInjector;
  /** PEM of the certificate when started with tls (clients trust it as their CA). */
  certificatePem?: string;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private url?: string;

  constructor(private readonly options: PlatformEmulatorOptions) {
    if (!options.token) throw new Error("platform emulator: a token is required");
    contractOperations(); // compile the contract now, not on the first request
    this.data = new EmulatorState(options.seed);
    this.recorder = new RequestRecorder(options.logSize);
    this.injector = new FaultInjector(() => this.data.random, options.faults);
    if (options.variations) this.setVariations(options.variations);
  }

  /** The request handler (usable with supertest or any node:http server). */
  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    void this.handle(req, res);
  };

  /** Starts listening; returns the base URL, e.g. http://127.0.0.1:43123. */
  async start(options: { port?: number; host?: string } = {}): Promise<string> {
    if (this.server) throw new Error("platform emulator already started");
    const host = options.host ?? "127.0.0.1";
    let server: Server;
    if (this.options.tls) {
      const { keyPem, certPem } = selfSignedCertificate({
        commonName: "platform-emulator",
        hosts: [host, "localhost", "127.0.0.1"],
      });
      this.certificatePem = certPem;
      server = createHttpsServer({ key: keyPem, cert: certPem }, this.handler);
    } else {
      server = createHttpServer(this.handler);
    }
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("secureConnection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const shownHost = host.includes(":") ? `[${host}]` : host;
    this.url = `${this.options.tls ? "https" : "http"}://${shownHost}:${port}`;
    return this.url;
  }

  /** Stops listening and destroys open sockets; safe to call twice. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  get baseUrl(): string | undefined {
    return this.url;
  }

  // Inspection and control (also over HTTP under /_emulator/).
  state() {
    return snapshot(this.data);
  }
  requests() {
    return this.recorder.requests();
  }
  counters() {
    return this.recorder.counters();
  }
  /** Calls of one operation, e.g. count("createUser"). */
  count(operation: string): number {
    return this.recorder.count(operation);
  }
  violations() {
    return this.recorder.violations();
  }
  /** Forgets all data, the request log, violations and faults. */
  reset(): void {
    this.data.reset();
    this.recorder.clear();
    this.injector.clear();
  }
  seed(data: SeedData): SeedResult {
    return seed(this.data, data);
  }
  drift(change: DriftAction): string | undefined {
    return drift(this.data, change);
  }
  faults(): FaultRule[] {
    return this.injector.list();
  }
  addFault(rule: FaultRule): void {
    this.injector.add(rule);
  }
  setFaults(rules: FaultRule[]): void {
    this.injector.set(rules);
  }
  clearFaults(): void {
    this.injector.clear();
  }
  /** The answer variations in force. */
  variations(): AnswerVariations {
    return { ...this.data.variations };
  }
  /** Replaces the answer variations ({} = the defaults); throws on one it cannot apply. */
  setVariations(variations: AnswerVariations): void {
    const problem = variationsProblem(variations);
    if (problem) throw new Error(`answer variations: ${problem}`);
    this.data.variations = { ...variations };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://emulator.invalid");
    const path = url.pathname;
    if (path === "/_emulator" || path.startsWith("/_emulator/")) {
      await handleInspection(this, req, res, path);
      return;
    }
    const scim = path.startsWith("/api/scim/v2");
    const match = matchRoute(method, path);
    const operation = match.kind === "operation" ? match.operation.name : null;
    let fault: string | undefined;
    const record = (status: number, retryAfter?: string) =>
      this.recorder.record({
        time: new Date().toISOString(),
        method,
        path,
        operation,
        status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        ...(fault ? { fault } : {}),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    const fail = (err: EmulatorError) => {
      if (err.violation) this.recorder.violation({ method, path, operation, reason: err.message });
      sendJson(res, err.status, errorBody(err, scim), { scim, headers: err.headers });
      record(err.status, err.headers["Retry-After"]);
    };
    try {
      if (req.headers.authorization !== `Bearer ${this.options.token}`) {
        throw new EmulatorError(401, "UNAUTHORIZED", "missing or wrong bearer token", {
          headers: { "WWW-Authenticate": 'Bearer realm="platform"' },
        });
      }
      if (match.kind !== "operation") throw unknownRoute(method, path, match.kind === "method-not-allowed");
      const decision = this.injector.decide({ operation, method, path });
      if (decision.delayMs > 0) {
        fault = "slow";
        await sleep(decision.delayMs);
      }
      const terminal = decision.terminal;
      if (terminal && terminal.type !== "ghost" && terminal.type !== "cutOff" && terminal.type !== "late") {
        fault = terminal.type;
        if (terminal.type === "drop") {
          req.socket.destroy();
          record(0);
          return;
        }
        throw faultError(terminal);
      }
      const raw = await readRawBody(req);
      if (terminal?.type === "late") {
        // Held, then applied whether or not the client still waits (it may have timed out).
        fault = "late";
        await sleep(terminal.delayMs);
      }
      const body = parseJsonBody(raw, req.headers["content-type"], match.operation.scim);
      const { params, query } = parseParameters(match.operation, match.params, url.searchParams);
      validateBody(match.operation, body);
      const handler = HANDLERS[match.operation.name];
      if (!handler)
        throw new EmulatorError(501, "NOT_IMPLEMENTED", `${match.operation.name} is not implemented`);
      let result: ReturnType<Handler> | undefined;
      let error: unknown;
      try {
        result = varied(handler({ params, query, body, state: this.data }), this.data.variations);
      } catch (err) {
        error = err;
      }
      if (terminal?.type === "ghost") {
        fault = "ghost";
        req.socket.destroy();
        record(0);
        return;
      }
      if (error !== undefined) throw error;
      const problem =
        result && this.options.checkResponses
          ? responseProblem(match.operation, result.status, result.body)
          : undefined;
      if (problem) throw new EmulatorError(500, "EMULATOR_BUG", problem);
      if (result && terminal?.type === "cutOff") {
        const contentLength = terminal.contentLength ?? true;
        if (
          await sendCutOff(res, result.status, result.body, { scim, headers: result.headers, contentLength })
        ) {
          fault = "cutOff";
        }
        record(result.status);
      } else if (result) {
        sendJson(res, result.status, result.body, { scim, headers: result.headers });
        record(result.status);
      }
    } catch (err) {
      if (err instanceof EmulatorError) fail(err);
      else fail(new EmulatorError(500, "INTERNAL", err instanceof Error ? err.message : String(err)));
    }
  }
}

/** A success answer with the answer variations applied (body fields, an ETag on a resource). */
function varied(result: ReturnType<Handler>, variations: AnswerVariations): ReturnType<Handler> {
  if (result.body === undefined || result.status < 200 || result.status > 299) return result;
  const body = varyBody(variations, result.body);
  const version = (body as { meta?: { version?: unknown } } | null)?.meta?.version;
  const headers =
    variations.extraFields && typeof version === "string"
      ? { ...result.headers, ETag: version }
      : result.headers;
  return { ...result, body, ...(headers ? { headers } : {}) };
}

/** Creates an emulator; call `start()` to listen. */
export function createPlatformEmulator(options: PlatformEmulatorOptions): PlatformEmulator {
  return new PlatformEmulator(options);
}
