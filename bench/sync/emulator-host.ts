/**
 * Benchmark child process: the strict platform emulator on 127.0.0.1, behind a thin wrapper that
 * timestamps every write call (arrival and answer, epoch ms with sub-ms precision) so the bench
 * can tell when a change reached the platform. Bodies are kept only while recording is on.
 *
 *   node --import tsx bench/sync/emulator-host.ts --token T [--port 0]
 *
 * Prints one JSON line `{"url": ...}` on stdout. Besides the emulator's own /_emulator/... it serves:
 *   GET  /_bench/timeline           writes per second and operation, last write time
 *   POST /_bench/record {"on": b}   keep write bodies from now on (or stop)
 *   GET  /_bench/writes             the recorded writes [{t, tDone, status, method, path, body}]
 */
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { matchRoute } from "../../src/platform/emulator/contract-operations.js";
import { createPlatformEmulator } from "../../src/platform/emulator/platform-emulator.js";

export interface RecordedWrite {
  /** Epoch ms when the whole request had arrived. */
  t: number;
  /** Epoch ms when the answer was sent (0 if it never was). */
  tDone: number;
  status: number;
  method: string;
  path: string;
  operation: string;
  body: string;
}

const nowMs = () => performance.timeOrigin + performance.now();

const { values } = parseArgs({
  options: { token: { type: "string" }, port: { type: "string", default: "0" } },
});
if (!values.token) {
  process.stderr.write("emulator-host: --token is required\n");
  process.exit(2);
}

const emulator = createPlatformEmulator({ token: values.token, seed: 1, logSize: 2_000 });
let recording = false;
const writes: RecordedWrite[] = [];
const perSecond = new Map<number, Record<string, number>>();
let lastWriteAt = 0;
let firstWriteAt = 0;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function benchRoute(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const body = await readBody(req);
  if (req.method === "GET" && path === "/_bench/timeline") {
    return json(res, 200, { firstWriteAt, lastWriteAt, perSecond: Object.fromEntries(perSecond) });
  }
  if (req.method === "POST" && path === "/_bench/record") {
    recording = (JSON.parse(body.toString() || "{}") as { on?: boolean }).on === true;
    return json(res, 200, { recording });
  }
  if (req.method === "GET" && path === "/_bench/writes") return json(res, 200, { writes });
  return json(res, 404, { error: "unknown bench route" });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? "GET";
  const path = new URL(req.url ?? "/", "http://emulator.invalid").pathname;
  if (path.startsWith("/_bench/")) return benchRoute(req, res, path);
  if (method === "GET" || path.startsWith("/_emulator")) return emulator.handler(req, res);
  const body = await readBody(req);
  const t = nowMs();
  const match = matchRoute(method, path);
  const operation = match.kind === "operation" ? match.operation.name : "unknown";
  lastWriteAt = t;
  if (firstWriteAt === 0) firstWriteAt = t;
  const second = Math.floor(t / 1000);
  const bucket = perSecond.get(second) ?? {};
  bucket[operation] = (bucket[operation] ?? 0) + 1;
  perSecond.set(second, bucket);
  if (recording) {
    const entry: RecordedWrite = { t, tDone: 0, status: 0, method, path, operation, body: body.toString() };
    writes.push(entry);
    res.on("finish", () => {
      entry.tDone = nowMs();
      entry.status = res.statusCode;
    });
  }
  // The emulator reads the body itself: hand it a stream that replays what was read here.
  const replay = Object.assign(Readable.from(body.length > 0 ? [body] : []), {
    method,
    url: req.url,
    headers: req.headers,
    socket: req.socket,
  }) as unknown as IncomingMessage;
  emulator.handler(replay, res);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    if (!res.headersSent) json(res, 500, { error: String(err) });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
