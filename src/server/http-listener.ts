/**
 * The HTTP(S) listener of a bridge process and its graceful close. Knows nothing of routes: it
 * serves whatever request handler it is given.
 */
import { readFileSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface ListenOptions {
  port: number;
  host: string;
  /** PEM file paths: serve HTTPS in the process. */
  tls?: { cert: string; key: string };
}

export interface Listener {
  server: Server;
  /** Base URL (a wildcard host is given as 127.0.0.1). */
  url: string;
}

export async function listen(handler: RequestListener, options: ListenOptions): Promise<Listener> {
  const { tls } = options;
  const server = tls
    ? createHttpsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, handler)
    : createServer(handler);
  // Longer than the usual load balancer idle timeout (60 s), so the balancer closes first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return { server, url: `${tls ? "https" : "http"}://${shownHost}:${port}` };
}

/**
 * Stops taking connections, closes idle keep-alive connections, and waits for the requests in
 * flight to finish; after `timeoutMs` the connections still open are cut. Resolves true when every
 * request finished in time. Pair it with `connectionCloseWhen` so that busy keep-alive
 * connections are closed after their answer instead of being reused.
 */
export async function closeGracefully(server: Server, timeoutMs: number): Promise<boolean> {
  if (!server.listening) return true;
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<true>((resolve) => server.close(() => resolve(true)));
  server.closeIdleConnections();
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const finished = await Promise.race([closed, timedOut]);
  clearTimeout(timer);
  if (!finished) {
    server.closeAllConnections();
    await closed;
  }
  return finished;
}

/**
 * Middleware: once `closing()` is true, every answer carries `Connection: close`, so the client
 * opens no further request on that connection and none is cut off when the server closes.
 */
export function connectionCloseWhen(closing: () => boolean) {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (closing()) res.setHeader("Connection", "close");
    next();
  };
}
