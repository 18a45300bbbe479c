/**
 * End-to-end harness: the strict platform emulator and a whole bridge (API + workers) in this
 * process, over real HTTP on random ports, with a Redis key prefix of its own.
 */
import supertest from "supertest";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { buildConfig } from "../../src/config/load-config.js";
import { type RunningBridge, startBridge } from "../../src/bridge.js";
import type { DestinationStream } from "pino";
import { createLogger } from "../../src/observability/logger.js";
import {
  type PlatformEmulator,
  createPlatformEmulator,
} from "../../src/platform/emulator/platform-emulator.js";
import type { FaultRule } from "../../src/platform/emulator/fault-injector.js";
import { Redis } from "ioredis";
import { FaultProxy } from "./fault-proxy.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix, waitFor } from "./redis-test-prefix.js";

export const PLATFORM_TOKEN = "platform-token";
export const E2E_ADMIN_TOKEN = "e2e-admin-token";
export const E2E_VIEWER_TOKEN = "e2e-viewer-token";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export interface TestBridgeOptions {
  /** Sources of the config (default: okta and entra, workspace targets). Tokens are `<id>-token`. */
  sources?: ConfigInput["sources"];
  /** Deep-merged over the generated config (top-level keys replace). */
  config?: Partial<ConfigInput>;
  /** Merged over the harness's platform settings (the emulator's URL and token, quick timeouts). */
  platform?: Partial<ConfigInput["platform"]>;
  faults?: FaultRule[];
  /** Start the bridge (default true); false to drive the emulator or directory alone first. */
  start?: boolean;
  seed?: number;
  /** Where the bridge's log lines go, and from which level (default: none, or E2E_LOG_LEVEL to stdout). */
  log?: { level: string; destination: DestinationStream };
}

/**
 * The harness's sync settings (quick batches and sweeps), with `changes` over them: `config.sync`
 * given to startTestBridge replaces the whole key.
 */
export function harnessSync(changes: Partial<NonNullable<ConfigInput["sync"]>> = {}) {
  return {
    concurrency: 8,
    attempts: 8,
    lifecycleBatchWindowMs: 50,
    sweepIntervalMs: 500,
    sweepAfterMs: 1_000,
    ...changes,
  };
}

/** Reconciliation only when a test starts it (the schedule's once a year), orphans reported. */
export const MANUAL_RECONCILE = {
  schedule: "0 0 1 1 *",
  orphans: "report",
  maxDeprovisionShare: 0.5,
  keepRuns: 50,
} as const;

export async function startTestBridge(name: string, options: TestBridgeOptions = {}) {
  const emulator: PlatformEmulator = createPlatformEmulator({
    token: PLATFORM_TOKEN,
    faults: options.faults,
    seed: options.seed ?? 1,
  });
  const platformUrl = await emulator.start({ port: 0 });
  const prefix = testPrefix(name);
  const sources = options.sources ?? { okta: { tokens: ["okta-token"] }, entra: { tokens: ["entra-token"] } };
  const config = buildConfig({
    platform: {
      baseUrl: platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      requestsPerSecond: 2000,
      timeoutMs: 2_000,
      maxRetries: 4,
      ...options.platform,
    },
    admin: { tokens: [E2E_ADMIN_TOKEN, { token: E2E_VIEWER_TOKEN, role: "viewer" }] },
    redis: { url: TEST_REDIS_URL, prefix },
    server: { port: 0, host: "127.0.0.1", bodyLimit: "5mb", shutdownTimeoutMs: 5_000 },
    sync: harnessSync(),
    logLevel: "silent",
    sources,
    ...options.config,
  });
  const logger = options.log
    ? createLogger(options.log.level, {}, options.log.destination)
    : createLogger(process.env.E2E_LOG_LEVEL ?? "silent");
  const cleaner = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  await cleaner.connect();

  let bridge: RunningBridge | undefined;
  const harness = {
    emulator,
    config,
    prefix,
    platformUrl,
    get bridge(): RunningBridge {
      if (!bridge) throw new Error("bridge not started");
      return bridge;
    },
    get http() {
      return supertest(harness.bridge.url!);
    },
    async start(): Promise<RunningBridge> {
      bridge = await startBridge(config, { role: "all", logger });
      return bridge;
    },
    /** Stops the bridge (not the emulator or the Redis data): for restart tests. */
    async stop(): Promise<void> {
      await bridge?.close();
      bridge = undefined;
    },
    scim(source: string) {
      const token = { Authorization: `Bearer ${source}-token`, "Content-Type": "application/scim+json" };
      const base = `/scim/v2/${source}`;
      const http = () => harness.http;
      return {
        createUser: async (userName: string, extra: Record<string, unknown> = {}) => {
          const res = await http()
            .post(`${base}/Users`)
            .set(token)
            .send({ schemas: [USER_SCHEMA], userName, active: true, ...extra });
          if (res.status !== 201) throw new Error(`create user ${res.status}: ${JSON.stringify(res.body)}`);
          return res.body as { id: string; userName: string };
        },
        createGroup: async (
          displayName: string,
          members: string[] = [],
          extra: Record<string, unknown> = {},
        ) => {
          const res = await http()
            .post(`${base}/Groups`)
            .set(token)
            .send({
              schemas: [GROUP_SCHEMA],
              displayName,
              members: members.map((value) => ({ value })),
              ...extra,
            });
          if (res.status !== 201) throw new Error(`create group ${res.status}: ${JSON.stringify(res.body)}`);
          return res.body as { id: string; displayName: string };
        },
        patchUser: (id: string, Operations: unknown[]) =>
          http()
            .patch(`${base}/Users/${id}`)
            .set(token)
            .send({ schemas: [PATCH_SCHEMA], Operations }),
        patchGroup: (id: string, Operations: unknown[]) =>
          http()
            .patch(`${base}/Groups/${id}`)
            .set(token)
            .send({ schemas: [PATCH_SCHEMA], Operations }),
        deleteUser: (id: string) => http().delete(`${base}/Users/${id}`).set(token),
        deleteGroup: (id: string) => http().delete(`${base}/Groups/${id}`).set(token),
        put: (path: string, body: unknown) =>
          http()
            .put(`${base}${path}`)
            .set(token)
            .send(body as object),
        get: (path: string) => http().get(`${base}${path}`).set(token),
      };
    },
    admin(token = E2E_ADMIN_TOKEN) {
      const auth = { Authorization: `Bearer ${token}` };
      return {
        get: (path: string) => harness.http.get(`/admin/v1${path}`).set(auth),
        post: (path: string, body: unknown = {}) =>
          harness.http
            .post(`/admin/v1${path}`)
            .set(auth)
            .send(body as object),
        delete: (path: string) => harness.http.delete(`/admin/v1${path}`).set(auth),
      };
    },
    /** Waits until no entity is dirty and no job waits, runs or is delayed. */
    async waitForIdle(timeoutMs = 30_000): Promise<void> {
      // Idle must hold twice in a row: a job finishing can enqueue a follow-up.
      await waitFor(
        async () =>
          (await harness.bridge.isIdle()) &&
          (await new Promise((r) => setTimeout(r, 30))) === undefined &&
          (await harness.bridge.isIdle()),
        {
          timeoutMs,
          what: "the bridge to be idle",
        },
      );
    },
    /** Platform users of the emulator, by lower-case userName. */
    platformUsers() {
      const state = emulator.state() as unknown as {
        users: Array<{ id: string; userName: string; active: boolean } & Record<string, unknown>>;
      };
      return new Map(state.users.map((u) => [u.userName.toLowerCase(), u]));
    },
    async close(): Promise<void> {
      await bridge?.close();
      await emulator.close();
      await deleteKeys(cleaner, prefix);
      await cleaner.quit();
    },
  };
  if (options.start ?? true) await harness.start();
  return harness;
}

export type TestBridge = Awaited<ReturnType<typeof startTestBridge>>;

/**
 * A bridge whose platform calls go through a FaultProxy to its emulator (the proxy passes
 * everything on and records the calls unless the test sets a rule), with the platform client's
 * `timeoutMs` and `maxRetries`. Whatever was started is closed if the start fails.
 */
export async function startProxiedBridge(
  name: string,
  options: { sources: ConfigInput["sources"]; timeoutMs: number; maxRetries: number },
): Promise<{ h: TestBridge; proxy: FaultProxy }> {
  const proxy = new FaultProxy();
  let h: TestBridge | undefined;
  try {
    const proxyUrl = await proxy.start();
    h = await startTestBridge(name, {
      sources: options.sources,
      config: {
        platform: {
          baseUrl: proxyUrl,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: options.timeoutMs,
          maxRetries: options.maxRetries,
        },
      },
      start: false,
    });
    proxy.upstream = h.platformUrl;
    await h.start();
    return { h, proxy };
  } catch (err) {
    await h?.close();
    await proxy.close();
    throw err;
  }
}

/**
 * A write in doubt: the next call of `operation` is applied by the platform but its answer is lost,
 * and every later call of it answers 503 (until the test clears the faults).
 */
export function applyThenFail(emulator: Pick<PlatformEmulator, "addFault">, operation: string): void {
  const rules: FaultRule[] = [
    { type: "ghost", count: 1, match: { operation } },
    { type: "error", status: 503, match: { operation } },
  ];
  for (const rule of rules) emulator.addFault(rule);
}

/**
 * A user of `source` whose create the platform refuses for good (one 403): its id, once it is the
 * bridge's only dead letter and the bridge is idle again. `timeoutMs` bounds the wait for the letter.
 */
export async function deadLetteredUser(
  h: TestBridge,
  source: string,
  userName: string,
  timeoutMs?: number,
): Promise<string> {
  h.emulator.addFault({ type: "error", status: 403, count: 1, match: { operation: "createUser" } });
  const id = (await h.scim(source).createUser(userName)).id;
  await waitFor(async () => (await h.admin().get("/status")).body.deadLetters === 1, {
    timeoutMs,
    what: "the dead letter",
  });
  await h.waitForIdle();
  return id;
}
