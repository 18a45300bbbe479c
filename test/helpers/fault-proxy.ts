/**
 * A reverse proxy between an in-process bridge and the platform emulator that decides each call's
 * fate from the call itself (method, path and JSON body), which the emulator's own fault rules
 * cannot: a fault for one source's users only (by userName), a write applied whose answer comes
 * back only after the client gave up on it, a platform that refuses connections for a while, an
 * answer rewritten after the platform applied the call (one the contract allows but the emulator
 * never gives by itself), a call held until the test lets it go. Used by the probes-f and probes-g
 * suites. Every call is recorded with what the client got (0: no answer reached it).
 */
import {
  Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer,
  request,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface FaultProxyCall {
  method: string;
  path: string;
  query: string;
  body: unknown;
  /** What the client got: the platform's status, an injected one, or 0 (no answer). */
  status: number;
  /** The action taken (forward when no rule matched). */
  action: FaultProxyAction["kind"];
  at: number;
}

export type FaultProxyAction =
  /** Passed on as it is. */
  | { kind: "forward" }
  /** Answered by the proxy; the platform never sees the call. */
  | { kind: "answer"; status: number; body?: unknown; headers?: Record<string, string> }
  /** Answered by the proxy with a body as it is (an HTML error page of a gateway, say). */
  | { kind: "answerRaw"; status: number; body: string; headers?: Record<string, string> }
  /** The connection is destroyed before the platform sees the call. */
  | { kind: "drop" }
  /** The platform applies the call, then the connection is destroyed (the answer is lost). */
  | { kind: "ghost" }
  /** The platform applies the call at once; its answer is sent `ms` later (the client may be gone). */
  | { kind: "delayAnswer"; ms: number }
  /** The call reaches the platform `ms` late (held in the network), then is answered as usual. */
  | { kind: "delayRequest"; ms: number }
  /** Forwarded; the platform's JSON answer is replaced by what `rewrite` makes of it. */
  | { kind: "rewrite"; rewrite: (status: number, body: unknown) => { status: number; body: unknown } }
  /**
   * Held until `until` resolves, then forwarded as usual (not at all if the client gave up
   * meanwhile); with `ghost`, the platform applies it and the answer is lost.
   */
  | { kind: "hold"; until: Promise<unknown>; ghost?: boolean };

export type FaultProxyRule = (call: {
  method: string;
  path: string;
  query: string;
  body: unknown;
}) => FaultProxyAction | undefined;

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"]);

function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class FaultProxy {
  readonly calls: FaultProxyCall[] = [];
  /** Where calls go; settable after start (the emulator may be started after the proxy). */
  upstream?: string;
  /** Decides each call's fate; undefined (or a rule answering undefined) forwards. */
  rule?: FaultProxyRule;
  private readonly agent = new Agent({ keepAlive: true });
  private readonly sockets = new Set<Socket>();
  private server?: Server;

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      void this.handle(req, res).catch(() => res.socket?.destroy());
    });
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readAll(req);
    const text = raw.toString("utf8");
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const url = req.url ?? "/";
    const [path = url, query = ""] = url.split("?");
    const method = req.method ?? "GET";
    const action = this.rule?.({ method, path, query, body }) ?? { kind: "forward" };
    const call: FaultProxyCall = {
      method,
      path,
      query,
      body,
      status: 0,
      action: action.kind,
      at: Date.now(),
    };
    this.calls.push(call);
    if (action.kind === "drop") {
      req.socket.destroy();
      return;
    }
    if (action.kind === "answer") {
      call.status = action.status;
      res.writeHead(action.status, { "Content-Type": "application/json", ...action.headers });
      res.end(
        JSON.stringify(
          action.body ?? { error: { code: "INJECTED", message: "injected by the test's fault proxy" } },
        ),
      );
      return;
    }
    if (action.kind === "answerRaw") {
      call.status = action.status;
      res.writeHead(action.status, { "Content-Type": "text/html; charset=utf-8", ...action.headers });
      res.end(action.body);
      return;
    }
    if (action.kind === "delayRequest") await new Promise((r) => setTimeout(r, action.ms));
    if (action.kind === "hold") {
      await action.until;
      if (req.socket.destroyed) return;
    }
    if (!this.upstream) throw new Error("fault proxy: no upstream");
    const upstream = request(new URL(url, this.upstream), {
      method,
      // The body's length goes on: without it (or chunking, which Node does not use for a DELETE
      // by default) the platform would read a DELETE's body (embed members out) as none.
      headers: {
        ...forwardHeaders(req.headers),
        ...(raw.length > 0 ? { "content-length": raw.length } : {}),
      },
      agent: this.agent,
    });
    const answer = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        upstream.on("error", reject);
        upstream.on("response", (up) => {
          readAll(up).then(
            (b) => resolve({ status: up.statusCode ?? 502, headers: up.headers, body: b }),
            reject,
          );
        });
        upstream.end(raw);
      },
    ).catch(() => null);
    if (!answer || action.kind === "ghost" || (action.kind === "hold" && action.ghost)) {
      res.socket?.destroy();
      return;
    }
    if (action.kind === "delayAnswer") await new Promise((r) => setTimeout(r, action.ms));
    if (res.destroyed || req.socket.destroyed) return;
    if (action.kind === "rewrite") {
      let parsed: unknown;
      try {
        parsed = answer.body.length > 0 ? JSON.parse(answer.body.toString("utf8")) : undefined;
      } catch {
        parsed = undefined;
      }
      const out = action.rewrite(answer.status, parsed);
      call.status = out.status;
      res.writeHead(out.status, { "Content-Type": "application/json" });
      res.end(out.body === undefined ? "" : JSON.stringify(out.body));
      return;
    }
    call.status = answer.status;
    res.writeHead(answer.status, forwardHeaders(answer.headers));
    res.end(answer.body);
  }
}
