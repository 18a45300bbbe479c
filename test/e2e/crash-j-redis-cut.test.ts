/**
 * Crash-j: Redis goes away under a large group's sync. A group of 1,000 members is synced in member
 * chunks (PATCHes of 100, each slowed on the platform) while the source changes its membership,
 * and meanwhile every connection to Redis is cut (a TCP proxy in front of a throwaway redis-server
 * destroys them: a failover, a network blip), then Redis itself is killed and started again on its
 * AOF (a restart). Invariant 2: once Redis is back and the queues drain, the platform group holds
 * exactly the directory's members, each user exists once, nothing is dead-lettered or left dirty.
 */
import { type Server, type Socket, connect, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { ThrowawayRedis } from "../helpers/throwaway-redis.js";

/** A TCP proxy whose connections can all be cut at once (new ones are let through). */
class CuttingProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  constructor(private readonly targetPort: number) {}

  async start(): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, "127.0.0.1");
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as { port: number }).port;
  }

  /** Destroys every open connection, both ways. */
  cut(): number {
    const n = this.sockets.size;
    for (const s of this.sockets) s.destroy();
    return n;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    this.cut();
    await closed;
  }
}

describe("crash-j: Redis connections cut, then Redis restarted, during a 1,000-member group sync", () => {
  let redis: ThrowawayRedis;
  let proxy: CuttingProxy;
  let h: TestBridge;
  beforeAll(async () => {
    redis = await ThrowawayRedis.start({ aof: true });
    proxy = new CuttingProxy(redis.port);
    const port = await proxy.start();
    h = await startTestBridge("crash-j-redis-cut", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { redis: { url: `redis://127.0.0.1:${port}`, prefix: "{crash-j-cut}" } },
    });
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
    await redis?.dispose();
  });

  it("the group ends with exactly the directory's members", async () => {
    const scim = h.scim("okta");
    const users: Array<{ id: string; userName: string }> = [];
    for (let i = 0; i < 1_100; i += 50) {
      users.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, j) => scim.createUser(`cj.cut${i + j}@example.com`)),
        )),
      );
    }
    await h.waitForIdle(120_000);

    h.emulator.addFault({ type: "slow", delayMs: 150, match: { operation: "patchGroup" } });
    const group = await scim.createGroup("cj-cut-team", []);
    await h.waitForIdle(30_000);
    const patchGroupCalls = () => h.emulator.requests().filter((r) => r.operation === "patchGroup").length;
    const before = patchGroupCalls();
    const add = (ids: string[]) =>
      scim.patchGroup(group.id, [{ op: "add", path: "members", value: ids.map((value) => ({ value })) }]);
    const remove = (ids: string[]) =>
      scim.patchGroup(
        group.id,
        ids.map((id) => ({ op: "remove", path: `members[value eq "${id}"]` })),
      );
    expect((await add(users.slice(0, 1_000).map((u) => u.id))).status).toBeLessThan(300);

    // A few chunks in: every Redis connection is cut, twice, while the source changes members.
    await waitFor(() => patchGroupCalls() - before >= 3, { timeoutMs: 20_000, what: "three chunks" });
    expect(proxy.cut()).toBeGreaterThan(0);
    expect(patchGroupCalls() - before).toBeLessThan(10); // the first sync's chunks are still going out
    await new Promise((r) => setTimeout(r, 200));
    await waitForAnswer(() => remove(users.slice(0, 150).map((u) => u.id)));
    proxy.cut();
    await waitForAnswer(() => add(users.slice(1_000, 1_100).map((u) => u.id)));

    // Then Redis is killed and started again on its AOF, a few chunks later.
    const mid = patchGroupCalls();
    await waitFor(() => patchGroupCalls() - mid >= 2, { timeoutMs: 20_000, what: "two more chunks" });
    const restartAt = patchGroupCalls();
    await redis.stop();
    await new Promise((r) => setTimeout(r, 1_500));
    await redis.start();
    await waitForAnswer(() => remove(users.slice(500, 520).map((u) => u.id)));

    h.emulator.clearFaults();
    await h.waitForIdle(120_000);
    expect(patchGroupCalls()).toBeGreaterThan(restartAt); // chunks went on after the restart
    const want = new Set(
      [...users.slice(150, 500), ...users.slice(520, 1_100)].map((u) => u.userName.toLowerCase()),
    );
    const byId = new Map([...h.platformUsers().values()].map((u) => [u.id, u.userName.toLowerCase()]));
    const groups = h.emulator.state().groups.filter((g) => g.displayName === "cj-cut-team");
    expect(groups).toHaveLength(1);
    const members = [...(groups[0]?.members ?? [])].map((id) => byId.get(id) ?? `unknown ${id}`);
    expect(members.length).toBe(want.size);
    expect(new Set(members)).toEqual(want);
    expect(h.platformUsers().size).toBe(1_100);
    expect(h.emulator.violations()).toEqual([]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 240_000);
});

/** Sends a SCIM change until it is answered 2xx (a 503 while Redis is away is sent again, as IdPs do). */
async function waitForAnswer(send: () => PromiseLike<{ status: number }>): Promise<void> {
  await waitFor(
    async () => {
      const res = await send();
      return res.status >= 200 && res.status < 300;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: "the change to be answered 2xx" },
  );
}
