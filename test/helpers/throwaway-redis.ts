/**
 * A throwaway redis-server on a spare port and a data directory of its own, for tests that stop,
 * restart or stall Redis without touching the shared one. With `aof: true` it keeps an AOF with an
 * fsync on every write (what a production Redis needs), so it can be killed and started again on
 * the same port and directory with every acknowledged write kept. `DEBUG SLEEP` is enabled so that
 * a test can make it hang.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { waitFor } from "./redis-test-prefix.js";

/** A free TCP port on 127.0.0.1 (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ThrowawayRedisOptions {
  /** AOF with fsync always and noeviction (default false: nothing kept on disk). */
  aof?: boolean;
}

export class ThrowawayRedis {
  private child?: ChildProcess;
  readonly dir = mkdtempSync(join(tmpdir(), "throwaway-redis-"));

  constructor(
    readonly port: number,
    private readonly options: ThrowawayRedisOptions = {},
  ) {}

  /** A server on a free port, started. */
  static async start(options: ThrowawayRedisOptions = {}): Promise<ThrowawayRedis> {
    const redis = new ThrowawayRedis(await freePort(), options);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts redis-server (again) on this port and directory; resolves once it answers PING. */
  async start(): Promise<void> {
    const persistence = this.options.aof
      ? ["--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction"]
      : ["--appendonly", "no"];
    this.child = spawn(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        ...persistence,
        "--dir",
        this.dir,
        "--enable-debug-command",
        "yes",
      ],
      { stdio: "ignore" },
    );
    const probe = new Redis(this.url, {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on("error", () => {});
    try {
      await waitFor(
        async () => {
          try {
            if (probe.status !== "ready") await probe.connect();
            return (await probe.ping()) === "PONG";
          } catch {
            probe.disconnect();
            return false;
          }
        },
        { timeoutMs: 5_000, intervalMs: 20, what: "redis-server to answer PING" },
      );
    } finally {
      probe.disconnect();
    }
  }

  /** Kills the server with SIGKILL (a crash: no final save) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
