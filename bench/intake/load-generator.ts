import { Agent, request } from "node:http";
import { type Socket, connect } from "node:net";

/** One request of a closed-loop load: method, path, headers and an optional JSON body. */
export interface LoadRequest {
  method: string;
  path: string;
  body?: string;
}

export interface LoadOptions {
  /** Base URL of the server; only http://127.0.0.1 is accepted. */
  baseUrl: string;
  token: string;
  /** Requests in flight at any time (keep-alive connections, one request each). */
  concurrency: number;
  /** Stop after this many ms ... */
  durationMs: number;
  /** ... or after this many requests, whichever comes first. */
  maxRequests: number;
  /** The i-th request (0-based). */
  next: (i: number) => LoadRequest;
  /** The status that counts as a success (201 for creates, 200 for reads). */
  okStatus: number;
  /** Optional check of a successful answer's body (e.g. totalResults 1); a false counts as an error. */
  check?: (body: string) => boolean;
}

export interface LoadResult {
  ok: number;
  errors: number;
  /** Status code (or "network" / "check") -> count, for the non-successes. */
  errorKinds: Record<string, number>;
  elapsedMs: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** This process's CPU time (user + system) per answer: what the load itself cost. */
  generatorCpuMsPerRequest: number;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function assertLocal(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" || url.hostname !== "127.0.0.1") {
    throw new Error(`the benchmark only talks to http://127.0.0.1, not ${baseUrl}`);
  }
  return url;
}

interface Answer {
  status: number;
  body: string;
}

function send(agent: Agent, url: URL, token: string, req: LoadRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${token}`,
      accept: "application/scim+json",
    };
    if (req.body !== undefined) {
      headers["content-type"] = "application/scim+json";
      headers["content-length"] = Buffer.byteLength(req.body);
    }
    const r = request(
      { agent, host: url.hostname, port: url.port, method: req.method, path: req.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    r.setTimeout(10_000, () => r.destroy(new Error("timeout")));
    r.on("error", reject);
    if (req.body !== undefined) r.end(req.body);
    else r.end();
  });
}

/**
 * One keep-alive HTTP/1.1 connection of the load generator, on a bare socket: a request is one
 * prebuilt string written at once, an answer is framed by Content-Length or chunked encoding.
 * node:http's client (an Agent, a ClientRequest and an IncomingMessage per request) cost this
 * process 0.057-0.074 ms of CPU per create (2026-11-25), and the load generator shares the cores
 * with the servers it measures; this one costs 0.027-0.035 ms, with the same requests for every
 * server.
 */
class RawConnection {
  private readonly socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private waiting?: { resolve: (a: Answer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
  private failed?: Error;

  constructor(url: URL) {
    this.socket = connect({ host: url.hostname, port: Number(url.port) });
    this.socket.setNoDelay(true);
    this.socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    const fail = (error: Error) => {
      this.failed = error;
      this.settle(undefined, error);
    };
    this.socket.on("error", fail);
    this.socket.on("close", () => fail(new Error("connection closed")));
  }

  send(head: string, body: string | undefined): Promise<Answer> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle(undefined, new Error("timeout")), 10_000);
      this.waiting = { resolve, reject, timer };
      this.socket.write(body === undefined ? head : head + body);
    });
  }

  close() {
    this.socket.destroy();
  }

  private settle(answer: Answer | undefined, error?: Error) {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    clearTimeout(waiting.timer);
    if (answer) waiting.resolve(answer);
    else waiting.reject(error ?? new Error("no answer"));
  }

  /** Takes one complete answer off the buffer, if there is one. */
  private drain() {
    const buffer = this.buffer;
    const headEnd = buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) return;
    const head = buffer.toString("latin1", 0, headEnd);
    const status = Number(head.slice(9, 12));
    const bodyStart = headEnd + 4;
    let body: Buffer;
    let end: number;
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (length) {
      end = bodyStart + Number(length[1]);
      if (buffer.length < end) return;
      body = buffer.subarray(bodyStart, end);
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const chunks: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = buffer.indexOf("\r\n", at);
        if (lineEnd < 0) return;
        const size = Number.parseInt(buffer.toString("latin1", at, lineEnd), 16);
        if (size === 0) {
          const trailerEnd = buffer.indexOf("\r\n", lineEnd + 2);
          if (trailerEnd < 0) return;
          end = trailerEnd + 2;
          break;
        }
        if (buffer.length < lineEnd + 2 + size + 2) return;
        chunks.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(chunks);
    } else {
      end = bodyStart; // 204, 304: no body
      body = Buffer.alloc(0);
    }
    this.buffer = buffer.subarray(end);
    this.settle({ status, body: body.toString() });
    if (/\r\nconnection:\s*close/i.test(head)) this.socket.destroy();
  }
}

function requestHead(url: URL, token: string, req: LoadRequest): string {
  const lines = [
    `${req.method} ${req.path} HTTP/1.1`,
    `host: ${url.host}`,
    `authorization: Bearer ${token}`,
    "accept: application/scim+json",
  ];
  if (req.body !== undefined) {
    lines.push("content-type: application/scim+json", `content-length: ${Buffer.byteLength(req.body)}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** One request, outside a load run (setup steps, single timed requests). */
export async function sendOnce(
  baseUrl: string,
  token: string,
  req: LoadRequest,
): Promise<Answer & { ms: number }> {
  const url = assertLocal(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const started = performance.now();
    const answer = await send(agent, url, token, req);
    return { ...answer, ms: performance.now() - started };
  } finally {
    agent.destroy();
  }
}

/** A reusable keep-alive client for sequential timed requests. */
export function createClient(baseUrl: string, token: string) {
  const url = assertLocal(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    async send(req: LoadRequest): Promise<Answer & { ms: number }> {
      const started = performance.now();
      const answer = await send(agent, url, token, req);
      return { ...answer, ms: performance.now() - started };
    },
    close: () => agent.destroy(),
  };
}

/**
 * Closed-loop load: `concurrency` workers, each on its own keep-alive connection and sending its
 * next request as soon as the previous answer arrived, until the time or the request budget runs
 * out. A connection that fails counts a "network" error and is replaced.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = assertLocal(options.baseUrl);
  const latencies = new Float64Array(options.maxRequests);
  let issued = 0;
  let ok = 0;
  let errors = 0;
  const errorKinds: Record<string, number> = {};
  const fail = (kind: string) => {
    errors += 1;
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async () => {
    let connection = new RawConnection(url);
    while (issued < options.maxRequests && performance.now() < deadline) {
      const i = issued;
      issued += 1;
      const t0 = performance.now();
      try {
        const req = options.next(i);
        const answer = await connection.send(requestHead(url, options.token, req), req.body);
        const ms = performance.now() - t0;
        if (answer.status !== options.okStatus) fail(String(answer.status));
        else if (options.check && !options.check(answer.body)) fail("check");
        else {
          latencies[ok] = ms;
          ok += 1;
        }
      } catch {
        fail("network");
        connection.close();
        connection = new RawConnection(url);
      }
    }
    connection.close();
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = latencies.subarray(0, ok).sort();
  return {
    ok,
    errors,
    errorKinds,
    elapsedMs,
    perSecond: (ok * 1000) / elapsedMs,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    generatorCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, ok + errors),
  };
}
