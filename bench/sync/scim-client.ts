/**
 * A small SCIM client for the benchmarks: node:http with a keep-alive agent of a fixed number of
 * sockets, timestamps (epoch ms, sub-ms) on send and on the whole answer, and a fixed-concurrency
 * runner.
 */
import { Agent, request } from "node:http";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export const nowMs = () => performance.timeOrigin + performance.now();

export interface Answer {
  status: number;
  body: unknown;
  tSent: number;
  tAnswer: number;
}

export class HttpClient {
  private readonly agent: Agent;
  private readonly base: URL;

  constructor(
    baseUrl: string,
    private readonly token: string,
    sockets: number,
  ) {
    this.base = new URL(baseUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  send(method: string, path: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const tSent = nowMs();
      const req = request(
        {
          host: this.base.hostname,
          port: this.base.port,
          method,
          path,
          agent: this.agent,
          headers: {
            Authorization: `Bearer ${this.token}`,
            Accept: "application/scim+json",
            ...(payload ? { "Content-Type": "application/scim+json", "Content-Length": payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const tAnswer = nowMs();
            const text = Buffer.concat(chunks).toString();
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, tSent, tAnswer });
          });
          res.on("error", reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on("error", reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight; stops at the first error. */
export async function runPool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

export interface IdleProbe {
  /** "GET /admin/v1/status" or "isIdle() hook". */
  via: string;
  read(): Promise<{ idle: boolean; status?: Record<string, unknown> } | undefined>;
}

/**
 * The admin API's `GET /admin/v1/status` when the bridge serves it, otherwise the bench hook on
 * the bridge process that answers its `isIdle()`.
 */
export async function idleProbe(admin: HttpClient, controlUrl: string): Promise<IdleProbe> {
  const first = await admin.send("GET", "/admin/v1/status").catch(() => undefined);
  if (first?.status === 200 && typeof (first.body as { idle?: unknown }).idle === "boolean") {
    return {
      via: "GET /admin/v1/status",
      read: async () => {
        const a = await admin.send("GET", "/admin/v1/status").catch(() => undefined);
        if (a?.status !== 200) return undefined;
        const status = a.body as Record<string, unknown>;
        return { idle: status["idle"] === true, status };
      },
    };
  }
  return {
    via: "isIdle() hook in the bridge process",
    read: async () => {
      const res = await fetch(`${controlUrl}/idle`).catch(() => undefined);
      if (res?.status !== 200) return undefined;
      return (await res.json()) as { idle: boolean };
    },
  };
}

/** Polls until idle holds on two reads in a row (100 ms apart); returns when it first held. */
export async function waitForIdle(
  probe: IdleProbe,
  deadlineMs: number,
  onSample?: (status: Record<string, unknown>) => void,
): Promise<{ idleAt: number } | undefined> {
  let firstIdleAt: number | undefined;
  for (;;) {
    const t = nowMs();
    const read = await probe.read();
    if (read?.status) onSample?.(read.status);
    if (read?.idle === true) {
      if (firstIdleAt !== undefined) return { idleAt: firstIdleAt };
      firstIdleAt = t;
    } else {
      firstIdleAt = undefined;
    }
    if (Date.now() > deadlineMs) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
}
