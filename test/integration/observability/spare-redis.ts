import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

/** A free TCP port on 127.0.0.1 (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` until it holds or the deadline passes. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A throwaway redis-server on a spare port, for tests that stop, restart or stall Redis without
 * touching the shared one. `DEBUG SLEEP` is enabled so that a test can make it hang.
 */
export class SpareRedis {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), "spare-redis-"));

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        this.dir,
        "--enable-debug-command",
        "yes",
      ],
      { stdio: "ignore" },
    );
    this.child = child;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on("error", () => {});
    try {
      await waitFor(async () => {
        try {
          if (probe.status !== "ready") await probe.connect();
          return (await probe.ping()) === "PONG";
        } catch {
          probe.disconnect();
          return false;
        }
      });
    } finally {
      probe.disconnect();
    }
  }

  /** Stops the server (SIGKILL, like a crash) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
