/**
 * Probes-g: a reverse proxy between an in-process bridge and the platform emulator whose rule may
 * also rewrite the platform's answer after the platform applied the call (an answer the contract
 * allows but the emulator never gives by itself), or hold a call until the test lets it go. Every
 * call is recorded with the status the client got (0: no answer reached it).
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

export interface ProxyCall {
  method: string;
  path: string;
  query: string;
  body: unknown;
  status: number;
  action: ProxyAction["kind"];
  at: number;
}

export type ProxyAction =
  | { kind: "forward" }
  /** Answered by the proxy; the platform never sees the call. */
  | { kind: "answer"; status: number; body?: unknown; headers?: Record<string, string> }
  /** Forwarded; the platform's JSON answer is replaced by what `rewrite` makes of it. */
  | { kind: "rewrite"; rewrite: (status: number, body: unknown) => { status: number; body: unknown } }
  /** Held until `until` resolves, then forwarded as usual. */
  | { kind: "hold"; until: Promise<unknown> };

export type ProxyRule = (call: {
  method: string;
  path: string;
  query: string;
  body: unknown;
}) => ProxyAction | undefined;

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"]);

function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class RewritingProxy {
  readonly calls: ProxyCall[] = [];
  upstream?: string;
  rule?: ProxyRule;
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
    const call: ProxyCall = { method, path, query, body, status: 0, action: action.kind, at: Date.now() };
    this.calls.push(call);
    if (action.kind === "answer") {
      call.status = action.status;
      res.writeHead(action.status, { "Content-Type": "application/json", ...action.headers });
      res.end(JSON.stringify(action.body ?? { error: { code: "INJECTED", message: "probes-g fault" } }));
      return;
    }
    if (action.kind === "hold") await action.until;
    if (req.socket.destroyed) return;
    if (!this.upstream) throw new Error("proxy: no upstream");
    const upstream = request(new URL(url, this.upstream), {
      method,
      headers: forwardHeaders(req.headers),
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
    if (!answer) {
      res.socket?.destroy();
      return;
    }
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
