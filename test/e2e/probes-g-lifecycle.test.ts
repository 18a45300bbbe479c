/**
 * Probes-g: lifecycle batches (bulk ACTIVATE / DEACTIVATE / DELETE) interleaved with profile and
 * group membership changes of the same users while the platform answers 429 with a long
 * Retry-After (capped by `platform.retryAfterCapMs`) and 503s; and users deleted at the source
 * while their bulk call is on the wire (held at a proxy until the deletion is stored).
 *
 * Judge: once the bridge is idle, every user is exactly as the directory says (active or not,
 * displayName, membership: a deactivated user stays in its workspace groups, a deleted one
 * leaves), nobody wrongly active or locked out, no dead letter (every fault here is transient).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { type FaultProxyRule, FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };
type PlatformGroup = { id: string; displayName: string; members: string[] };

describe("probes-g: lifecycle batches racing profile and membership changes under 429 and 503", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = new FaultProxy();
    const proxyUrl = await proxy.start();
    h = await startTestBridge("probes-g-lifecycle", {
      start: false,
      sources: {
        okta: { tokens: ["okta-token"] },
        hr: { tokens: ["hr-token"], onDelete: "delete" },
      },
      config: {
        platform: {
          baseUrl: proxyUrl,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 2_000,
          maxRetries: 4,
          // A Retry-After of two minutes pauses every worker 1.5 s (the cap), then the platform is asked again.
          retryAfterCapMs: 1_500,
        },
        sync: {
          concurrency: 8,
          attempts: 8,
          lifecycleBatchWindowMs: 200,
          sweepIntervalMs: 500,
          sweepAfterMs: 1_000,
        },
      },
    });
    proxy.upstream = h.platformUrl;
    await h.start();
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  const users = () => h.emulator.state().users as unknown as PlatformUser[];
  const named = (userName: string) => users().filter((u) => u.userName === userName);
  const group = (name: string) =>
    (h.emulator.state().groups as PlatformGroup[]).filter((g) => g.displayName === name);
  const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
  const ok = (res: { status: number }, what: string) =>
    expect([200, 204], `${what}: ${res.status}`).toContain(res.status);

  /**
   * Bulk calls get 429 with Retry-After: 120 (three times), user PATCHes and group PATCHes a 503
   * every other call, while at the source: three users deactivated (one also renamed, one also
   * taken out of the group), one deactivated and reactivated, one added to the group and then
   * deactivated, one deleted (onDelete: delete) and one of okta deleted (onDelete: deactivate).
   */
  it("every user ends as the directory says; no dead letter", async () => {
    const okta = h.scim("okta");
    const hr = h.scim("hr");
    const u = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6].map((i) => okta.createUser(`lc.o${i}@example.com`, { displayName: `O${i}` })),
    );
    const v = await hr.createUser("lc.h0@example.com");
    const g = await okta.createGroup(
      "lc-team",
      u.slice(0, 5).map((x) => x.id),
    );
    await h.waitForIdle();
    const pidOf = (name: string) => named(name)[0]?.id as string;

    let limited = 0;
    let patches = 0;
    const rule: FaultProxyRule = (call) => {
      if (call.method === "POST" && call.path === "/api/v1/users/bulk" && limited < 3) {
        limited++;
        return { kind: "answer", status: 429, headers: { "Retry-After": "120" } };
      }
      if (call.method === "PATCH" && patches++ % 2 === 0) return { kind: "answer", status: 503 };
      return undefined;
    };
    proxy.rule = rule;
    const off = (i: number) => okta.patchUser(u[i]!.id, [{ op: "replace", path: "active", value: false }]);
    const on = (i: number) => okta.patchUser(u[i]!.id, [{ op: "replace", path: "active", value: true }]);
    ok(await off(0), "off 0");
    ok(await off(1), "off 1");
    ok(await off(2), "off 2");
    ok(await off(3), "off 3");
    ok(
      await okta.patchUser(u[0]!.id, [{ op: "replace", path: "displayName", value: "O0 renamed" }]),
      "rename 0",
    );
    ok(
      await okta.patchGroup(g.id, [
        { op: "remove", path: `members[value eq "${u[1]!.id}"]` },
        { op: "add", path: "members", value: [{ value: u[5]!.id }] },
      ]),
      "membership",
    );
    ok(await hr.patchUser(v.id, [{ op: "replace", path: "active", value: false }]), "off h0");
    await waitFor(() => limited >= 1, { what: "the first 429" });
    ok(await on(3), "on 3");
    ok(await off(5), "off 5");
    expect((await hr.deleteUser(v.id)).status).toBe(204);
    expect((await okta.deleteUser(u[6]!.id)).status).toBe(204);
    ok(
      await okta.patchUser(u[2]!.id, [{ op: "replace", path: "displayName", value: "O2 renamed" }]),
      "rename 2",
    );
    await h.waitForIdle(60_000);
    proxy.rule = undefined;

    expect(limited).toBe(3);
    const want: Record<string, { active: boolean; displayName: string }> = {
      "lc.o0@example.com": { active: false, displayName: "O0 renamed" },
      "lc.o1@example.com": { active: false, displayName: "O1" },
      "lc.o2@example.com": { active: false, displayName: "O2 renamed" },
      "lc.o3@example.com": { active: true, displayName: "O3" },
      "lc.o4@example.com": { active: true, displayName: "O4" },
      "lc.o5@example.com": { active: false, displayName: "O5" },
      "lc.o6@example.com": { active: false, displayName: "O6" },
    };
    for (const [name, expected] of Object.entries(want)) {
      expect(
        named(name).map((x) => ({ active: x.active, displayName: x.displayName })),
        name,
      ).toEqual([expected]);
    }
    expect(named("lc.h0@example.com")).toEqual([]);
    const members = [0, 2, 3, 4, 5].map((i) => pidOf(`lc.o${i}@example.com`)).sort();
    expect(group("lc-team").map((x) => [...x.members].sort())).toEqual([members]);
    expect(h.emulator.violations()).toEqual([]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);

  /**
   * The bulk call of a deactivation is held on the wire; meanwhile the user is deleted at the
   * source (hr: onDelete delete; okta: deactivate, after a reactivation). The admin expects the hr
   * user gone and the okta user inactive once the call lands, and no record of either left.
   */
  it("users deleted while their bulk call is in flight are deprovisioned by policy", async () => {
    const okta = h.scim("okta");
    const hr = h.scim("hr");
    const a = await okta.createUser("lcf.okta@example.com");
    const b = await hr.createUser("lcf.hr@example.com");
    await h.waitForIdle();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = 0;
    proxy.rule = (call) =>
      call.method === "POST" && call.path === "/api/v1/users/bulk" && holding++ === 0
        ? { kind: "hold", until: held }
        : undefined;
    ok(await okta.patchUser(a.id, [{ op: "replace", path: "active", value: false }]), "off okta");
    ok(await hr.patchUser(b.id, [{ op: "replace", path: "active", value: false }]), "off hr");
    await waitFor(() => holding >= 1, { what: "the bulk call on the wire" });
    ok(await okta.patchUser(a.id, [{ op: "replace", path: "active", value: true }]), "on okta");
    expect((await okta.deleteUser(a.id)).status).toBe(204);
    expect((await hr.deleteUser(b.id)).status).toBe(204);
    // The deletions' syncs run while the call is held (it lands after them).
    await new Promise((r) => setTimeout(r, 500));
    release();
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(named("lcf.okta@example.com").map((x) => x.active)).toEqual([false]);
    expect(named("lcf.hr@example.com")).toEqual([]);
    expect((await h.admin().get(`/sources/okta/users/${a.id}`)).status).toBe(404);
    expect((await h.admin().get(`/sources/hr/users/${b.id}`)).status).toBe(404);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);
});
