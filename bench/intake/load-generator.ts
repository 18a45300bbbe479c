import { Agent, request } from "node:http";

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
 * Closed-loop load: `concurrency` workers, each sending its next request as soon as the previous
 * answer arrived, over keep-alive connections, until the time or the request budget runs out.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = assertLocal(options.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies = new Float64Array(options.maxRequests);
  let issued = 0;
  let ok = 0;
  let errors = 0;
  const errorKinds: Record<string, number> = {};
  const fail = (kind: string) => {
    errors += 1;
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  };
  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async () => {
    while (issued < options.maxRequests && performance.now() < deadline) {
      const i = issued;
      issued += 1;
      const t0 = performance.now();
      try {
        const answer = await send(agent, url, options.token, options.next(i));
        const ms = performance.now() - t0;
        if (answer.status !== options.okStatus) fail(String(answer.status));
        else if (options.check && !options.check(answer.body)) fail("check");
        else {
          latencies[ok] = ms;
          ok += 1;
        }
      } catch {
        fail("network");
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsedMs = performance.now() - started;
  agent.destroy();
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
  };
}
