import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ServerChild {
  url: string;
  child: ChildProcess;
  /** Sends a message and waits for the answer that carries `reply` (seeding in the baseline). */
  request<T>(message: object, reply: string, timeoutMs: number): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Forks a server script under tsx (its stdout to /dev/null, as a production process would log to a
 * file or a collector, not to the benchmark's terminal) and waits for its `{ready: url}`.
 */
export async function startServerChild(
  script: string,
  env: Record<string, string>,
  execArgv: string[] = [],
): Promise<ServerChild> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = fork(path, [], {
    env: { ...process.env, ...env },
    execArgv: ["--import", "tsx", ...execArgv],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 30 s`)), 30_000);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    child.on("message", (m: { ready?: string }) => {
      if (m?.ready) {
        clearTimeout(timer);
        resolve(m.ready);
      }
    });
  });
  return {
    url,
    child,
    request<T>(message: object, reply: string, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${reply} within ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (m: Record<string, unknown>) => {
          if (m && reply in m) {
            clearTimeout(timer);
            child.off("message", onMessage);
            resolve(m[reply] as T);
          }
        };
        child.on("message", onMessage);
        child.send(message);
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.send({ stop: true });
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
