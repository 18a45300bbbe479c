/**
 * One HTTP exchange with the platform over keep-alive node:http(s) agents: no cookie jar, no
 * redirects, a deadline on the whole exchange (AbortSignal.timeout). Knows nothing of retries.
 */
import http from "node:http";
import https from "node:https";

export interface TransportOptions {
  baseUrl: URL;
  /** Parallel sockets per agent (default 32). */
  maxSockets?: number;
  /** Extra trusted CA (PEM), e.g. a private CA or the emulator's self-signed certificate. */
  ca?: string | Buffer;
  /** false only for a local emulator (the client allows it only with allowInsecureHttp). */
  rejectUnauthorized?: boolean;
  /** Largest answer body read, in bytes (default 16 MiB). */
  maxBodyBytes?: number;
}

export interface TransportRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path and query, already encoded, e.g. `/api/scim/v2/Users?startIndex=1`. */
  pathAndQuery: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface TransportResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Why an exchange got no (usable) answer: timed out, connection failed, or an answer too large to read. */
export type TransportFailure = "timeout" | "network" | "too_large";

export class TransportError extends Error {
  readonly kind: TransportFailure;
  constructor(kind: TransportFailure, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "TransportError";
    this.kind = kind;
  }
}

export class HttpTransport {
  readonly #baseUrl: URL;
  readonly #agent: http.Agent;
  readonly #secure: boolean;
  readonly #maxBodyBytes: number;

  constructor(options: TransportOptions) {
    this.#baseUrl = options.baseUrl;
    this.#secure = options.baseUrl.protocol === "https:";
    this.#maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 32 };
    this.#agent = this.#secure
      ? new https.Agent({
          ...agentOptions,
          ...(options.ca === undefined ? {} : { ca: options.ca }),
          rejectUnauthorized: options.rejectUnauthorized ?? true,
        })
      : new http.Agent(agentOptions);
  }

  send(request: TransportRequest): Promise<TransportResponse> {
    const url = new URL(joinPath(this.#baseUrl, request.pathAndQuery));
    const signal = AbortSignal.timeout(request.timeoutMs);
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined) headers["content-length"] = String(Buffer.byteLength(request.body));
    const requestFn = this.#secure ? https.request : http.request;

    return new Promise<TransportResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        reject(toTransportError(err, signal, request.timeoutMs));
      };
      const req = requestFn(url, { method: request.method, headers, agent: this.#agent, signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.#maxBodyBytes) {
            fail(new TransportError("too_large", `answer body larger than ${this.#maxBodyBytes} bytes`));
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          if (settled) return;
          if (!res.complete) {
            fail(new Error("connection closed before the answer was complete"));
            return;
          }
          settled = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          });
        });
        res.on("error", fail);
        res.on("aborted", () => fail(new Error("answer aborted")));
      });
      req.on("error", fail);
      req.end(request.body);
    });
  }

  /** Closes idle sockets; safe to call twice. */
  close(): void {
    this.#agent.destroy();
  }
}

/** Appends `pathAndQuery` to the base URL's own path (a base of https://h/prefix keeps /prefix). */
export function joinPath(baseUrl: URL, pathAndQuery: string): string {
  const basePath = baseUrl.pathname.replace(/\/+$/, "");
  return `${baseUrl.origin}${basePath}${pathAndQuery}`;
}

function toTransportError(err: unknown, signal: AbortSignal, timeoutMs: number): TransportError {
  if (err instanceof TransportError) return err;
  if (signal.aborted) {
    return new TransportError("timeout", `no complete answer within ${timeoutMs} ms`, err);
  }
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return new TransportError("network", typeof code === "string" ? `${code}: ${message}` : message, err);
}
