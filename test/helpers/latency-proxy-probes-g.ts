/**
 * Probes-g: a TCP proxy that delays every chunk by `latencyMs` in each direction, in order (a slow
 * network or a Redis that answers late, not one that is down). The latency may change at any time;
 * chunks never overtake each other.
 */
import { type Server, type Socket, connect, createServer } from "node:net";

export class LatencyProxy {
  latencyMs = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = "127.0.0.1",
  ) {}

  async start(): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.pipe(client, upstream);
      this.pipe(upstream, client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as { port: number }).port;
  }

  /** Forwards `from` to `to`, each chunk `latencyMs` after it arrived, never before the one ahead. */
  private pipe(from: Socket, to: Socket): void {
    const queue: Array<{ at: number; chunk: Buffer }> = [];
    let pumping = false;
    const pump = () => {
      const head = queue[0];
      if (!head) {
        pumping = false;
        return;
      }
      pumping = true;
      const wait = head.at - Date.now();
      if (wait > 0) {
        setTimeout(pump, wait);
        return;
      }
      queue.shift();
      if (!to.destroyed) to.write(head.chunk);
      pump();
    };
    from.on("data", (chunk: Buffer) => {
      queue.push({ at: Date.now() + this.latencyMs, chunk });
      if (!pumping) pump();
    });
    from.on("end", () => {
      const close = () => (queue.length === 0 ? to.end() : setTimeout(close, 10));
      close();
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
