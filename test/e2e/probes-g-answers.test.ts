/**
 * Probes-g: a platform that answers 2xx with a body the contract allows but the emulator never
 * gives: a created user that the platform made inactive (its answer says `active: false`), a bulk
 * call whose answer names a user in neither `succeeded` nor `failed`, a created group whose answer
 * holds fewer members than were sent. The judge is the platform's state: exactly the directory's,
 * nobody wrongly left active or locked out, and whatever cannot be done visible.
 *
 * The answers are rewritten by a proxy between the in-process bridge and the emulator
 * (test/helpers/fault-proxy.ts); where the answer says the platform did something other
 * than asked, the test makes the emulator's state say so too (drift), as that platform would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

type PlatformUser = { id: string; userName: string; active: boolean; displayName?: string };
type PlatformGroup = { id: string; displayName: string; members: string[] };

const users = (h: TestBridge) => h.emulator.state().users as unknown as PlatformUser[];
const usersNamed = (h: TestBridge, userName: string) =>
  users(h).filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
const groupsNamed = (h: TestBridge, displayName: string) =>
  (h.emulator.state().groups as PlatformGroup[]).filter((g) => g.displayName === displayName);
const status = async (h: TestBridge) =>
  (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
const ok = (res: { status: number }, what: string) =>
  expect([200, 204], `${what}: ${res.status}`).toContain(res.status);

describe("probes-g: 2xx answers the contract allows but the emulator never gives", () => {
  let h: TestBridge;
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = new FaultProxy();
    const proxyUrl = await proxy.start();
    h = await startTestBridge("probes-g-answers", {
      start: false,
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        platform: {
          baseUrl: proxyUrl,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 2_000,
          maxRetries: 4,
        },
        sync: {
          concurrency: 8,
          attempts: 8,
          lifecycleBatchWindowMs: 50,
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

  /**
   * RFC 7644 §3.3: the 201 answer is the resource as the service provider stored it, which may
   * differ from the request. A platform that creates users inactive (an invitation to accept, say)
   * answers `active: false`. The identity admin pushed an active user and expects it able to log
   * in: the bridge must not take its own request for the platform's state.
   */
  it("a create answered with active: false (the platform made the user inactive): the user ends active", async () => {
    proxy.rule = (call) =>
      call.method === "POST" &&
      call.path === "/api/scim/v2/Users" &&
      (call.body as { userName?: string }).userName === "ans.inactive@example.com"
        ? {
            kind: "rewrite",
            rewrite: (status, body) => {
              const created = body as PlatformUser;
              if (status === 201)
                h.emulator.drift({ action: "setUserActive", userId: created.id, active: false });
              return { status, body: { ...created, active: false } };
            },
          }
        : undefined;
    await h.scim("okta").createUser("ans.inactive@example.com");
    await waitFor(() => usersNamed(h, "ans.inactive@example.com").length === 1, { what: "the create" });
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(usersNamed(h, "ans.inactive@example.com").map((u) => u.active)).toEqual([true]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * The bulk answer is a per-user outcome; one that names a user in neither list has not said
   * the user was changed. The admin deactivated the user at the source and expects it inactive on
   * the platform (never left active while the bridge says it is synced), or a visible failure.
   */
  it("a bulk DEACTIVATE answered 200 naming the user in neither list, not applied: the user ends inactive", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("ans.bulk@example.com");
    await h.waitForIdle();
    const platformId = usersNamed(h, "ans.bulk@example.com")[0]?.id as string;
    let swallowed = 0;
    proxy.rule = (call) =>
      call.method === "POST" &&
      call.path === "/api/v1/users/bulk" &&
      (call.body as { userIds?: string[] }).userIds?.includes(platformId) &&
      swallowed++ === 0
        ? { kind: "answer", status: 200, body: { succeeded: [], failed: [] } }
        : undefined;
    ok(await okta.patchUser(u.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    await waitFor(() => swallowed >= 1, { what: "the bulk call" });
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    expect(usersNamed(h, "ans.bulk@example.com").map((u) => u.active)).toEqual([false]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * The same, while the platform cannot be read for that user either (every GET of it answers
   * 500): the flush cannot confirm the change, so the user is retried as its own failure and ends
   * a visible dead letter; the users deactivated with it, and after it, land. Before, the failed
   * read failed the whole flush each time: the user was neither settled nor dead-lettered, and the
   * bridge never went idle.
   */
  it("a bulk DEACTIVATE naming a user in neither list, whose read fails too: that user is a dead letter, the others land", async () => {
    const okta = h.scim("okta");
    const stuck = await okta.createUser("ans.unread@example.com");
    const other = await okta.createUser("ans.unread.other@example.com");
    await h.waitForIdle();
    const stuckId = usersNamed(h, "ans.unread@example.com")[0]?.id as string;
    proxy.rule = (call) => {
      if (call.method === "GET" && call.path === `/api/scim/v2/Users/${stuckId}`) {
        return { kind: "answer", status: 500 };
      }
      if (call.method === "POST" && call.path === "/api/v1/users/bulk") {
        const ids = (call.body as { userIds?: string[] }).userIds ?? [];
        if (!ids.includes(stuckId)) return undefined;
        return {
          kind: "rewrite",
          rewrite: (status, body) => {
            const answer = body as { succeeded: string[]; failed: unknown[] };
            return {
              status,
              body: { ...answer, succeeded: answer.succeeded.filter((id) => id !== stuckId) },
            };
          },
        };
      }
      return undefined;
    };
    ok(await okta.patchUser(stuck.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    ok(await okta.patchUser(other.id, [{ op: "replace", path: "active", value: false }]), "deactivate other");
    await h.waitForIdle(60_000);
    expect(usersNamed(h, "ans.unread.other@example.com").map((u) => u.active)).toEqual([false]);
    const letters = (await h.admin().get("/dead-letters?source=okta")).body.items as Array<{
      ref: { id: string };
      code: string;
    }>;
    expect(letters.map((l) => [l.ref.id, l.code])).toEqual([[stuck.id, "platform_bulk_unconfirmed"]]);
    // Once the platform answers as it should, a retry of the dead letter lands the deactivation.
    proxy.rule = undefined;
    expect((await h.admin().post(`/dead-letters/okta/user/${stuck.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle(30_000);
    expect(usersNamed(h, "ans.unread@example.com").map((u) => u.active)).toEqual([false]);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);

  /**
   * A group created with members, answered 201 with fewer members than sent (the platform kept
   * only some: the answer is the group as stored). The admin expects the platform group to hold
   * every member of the directory's group.
   */
  it("a group create answered with fewer members than sent (the platform kept only some): every member ends in the group", async () => {
    const okta = h.scim("okta");
    const [a, b] = await Promise.all([
      okta.createUser("ans.m1@example.com"),
      okta.createUser("ans.m2@example.com"),
    ]);
    await h.waitForIdle();
    const dropped = usersNamed(h, "ans.m2@example.com")[0]?.id as string;
    proxy.rule = (call) =>
      call.method === "POST" &&
      call.path === "/api/scim/v2/Groups" &&
      (call.body as { displayName?: string }).displayName === "ans-team"
        ? {
            kind: "rewrite",
            rewrite: (status, body) => {
              const created = body as { id: string; members?: Array<{ value: string }> };
              if (status !== 201) return { status, body };
              h.emulator.drift({ action: "removeGroupMember", groupId: created.id, userId: dropped });
              return {
                status,
                body: { ...created, members: (created.members ?? []).filter((m) => m.value !== dropped) },
              };
            },
          }
        : undefined;
    await okta.createGroup("ans-team", [a.id, b.id]);
    await waitFor(() => groupsNamed(h, "ans-team").length === 1, { what: "the group create" });
    await h.waitForIdle(30_000);
    proxy.rule = undefined;
    const want = ["ans.m1@example.com", "ans.m2@example.com"].map((n) => usersNamed(h, n)[0]?.id).sort();
    expect([...(groupsNamed(h, "ans-team")[0]?.members ?? [])].sort()).toEqual(want);
    expect(await status(h)).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);
});
