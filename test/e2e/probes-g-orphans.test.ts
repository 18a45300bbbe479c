/**
 * Probes-g: a reconciliation with `orphans: deactivate` whose bulk DEACTIVATE of an orphan is on
 * the wire (held at a proxy) while the identity provider pushes a user of that userName, whose sync
 * adopts the platform user (ARCHITECTURE "Mapping": a platform user with the same userName is
 * adopted). The orphan was checked just before the call (no owner, no source holding its
 * userName), so the deactivation is right when sent and wrong when it lands: the person the
 * identity admin just provisioned is locked out. Judge: once idle, that user is active.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

type PlatformUser = { id: string; userName: string; active: boolean };

describe("probes-g: an orphan deactivation landing after a source adopted the user", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = new FaultProxy();
    const proxyUrl = await proxy.start();
    h = await startTestBridge("probes-g-orphans", {
      start: false,
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        platform: {
          baseUrl: proxyUrl,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 5_000,
          maxRetries: 4,
        },
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 1 },
      },
    });
    proxy.upstream = h.platformUrl;
    await h.start();
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  const named = (userName: string) =>
    (h.emulator.state().users as unknown as PlatformUser[]).filter((u) => u.userName === userName);

  it("the adopted user ends active", async () => {
    const okta = h.scim("okta");
    await okta.createUser("orph.owned@example.com");
    await h.waitForIdle();
    const orphanId = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "orph.late@example.com", active: true },
    }) as string;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = 0;
    proxy.rule = (call) =>
      call.method === "POST" &&
      call.path === "/api/v1/users/bulk" &&
      (call.body as { userIds?: string[] }).userIds?.includes(orphanId) &&
      holding++ === 0
        ? { kind: "hold", until: held }
        : undefined;
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    await waitFor(() => holding >= 1, { what: "the orphan's deactivation on the wire" });

    // The identity admin provisions the person; the bridge adopts the platform user.
    const u = await okta.createUser("orph.late@example.com");
    await waitFor(async () => (await h.admin().get(`/sources/okta/users/${u.id}`)).body.state === "synced", {
      what: "the adoption",
    });
    expect(named("orph.late@example.com").map((x) => x.id)).toEqual([orphanId]);
    release();
    await waitFor(
      async () => {
        const res = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(res.body.state) ? undefined : res.body;
      },
      { timeoutMs: 30_000, what: "the run to end" },
    );
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(named("orph.late@example.com").map((x) => ({ id: x.id, active: x.active }))).toEqual([
      { id: orphanId, active: true },
    ]);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 60_000);

  it("also when the deactivation lands but its answer never comes (the run fails): the adopted user ends active", async () => {
    const okta = h.scim("okta");
    const orphanId = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "orph.lost@example.com", active: true },
    }) as string;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let calls = 0;
    proxy.rule = (call) => {
      if (
        call.method !== "POST" ||
        call.path !== "/api/v1/users/bulk" ||
        !(call.body as { userIds?: string[] }).userIds?.includes(orphanId)
      ) {
        return undefined;
      }
      // The first call lands after the adoption and its answer is lost; the retries meet a 503.
      return calls++ === 0 ? { kind: "hold", until: held, ghost: true } : { kind: "answer", status: 503 };
    };
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    await waitFor(() => calls >= 1, { what: "the orphan's deactivation on the wire" });
    const u = await okta.createUser("orph.lost@example.com");
    await waitFor(async () => (await h.admin().get(`/sources/okta/users/${u.id}`)).body.state === "synced", {
      what: "the adoption",
    });
    release();
    await waitFor(
      async () => {
        const res = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(res.body.state) ? undefined : res.body;
      },
      { timeoutMs: 30_000, what: "the run to end" },
    );
    proxy.rule = undefined;
    await h.waitForIdle(30_000);
    expect(named("orph.lost@example.com").map((x) => ({ id: x.id, active: x.active }))).toEqual([
      { id: orphanId, active: true },
    ]);
  }, 60_000);
});
