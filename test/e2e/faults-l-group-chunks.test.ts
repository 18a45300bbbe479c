/**
 * Faults-l: a workspace group's membership PATCH refused for good (400/422) for one chunk of its
 * members, every one of them a platform user. The refusal is the platform's word on those members
 * only: the group's other changes of the same sync (its removals, its later add chunks, its rename)
 * land; the refused members are the group's visible dead letter with the reason; and the admin's
 * retry sends only what is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  h = await startTestBridge("faults-l-group-chunks", {
    start: false,
    sources: {
      okta: { tokens: ["okta-token"] },
      acme: { tokens: ["acme-token"], target: { embedTenant: "acme-l" } },
    },
    // No scheduled reconciliation during the test: what repairs the group is the sync.
    config: {
      reconcile: { schedule: "0 0 1 1 *" },
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
        timeoutMs: 2_000,
        maxRetries: 4,
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

type PlatformGroup = { id: string; displayName: string; members: string[] };
const groups = () => h.emulator.state().groups as unknown as PlatformGroup[];
const groupById = (id: string) => groups().find((g) => g.id === id);
const pidOf = (userName: string) => h.platformUsers().get(userName)?.id as string;
const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();
const entity = async (id: string) =>
  (await h.admin().get(`/sources/okta/groups/${id}`)).body as {
    state: string;
    lastError: { code?: string; message?: string } | null;
  };
const letters = async () =>
  (await h.admin().get("/dead-letters?limit=100")).body.items as Array<{
    ref: { source: string; kind: string; id: string };
    code: string;
    reason: string;
  }>;

type PatchBody = { Operations?: Array<{ op: string; path?: string; value?: unknown }> };
const addedIn = (body: unknown): string[] =>
  ((body as PatchBody | undefined)?.Operations ?? []).flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );

async function createUsers(prefix: string, n: number): Promise<Array<{ id: string; userName: string }>> {
  const okta = h.scim("okta");
  const made: Array<{ id: string; userName: string }> = [];
  for (let i = 0; i < n; i += 20) {
    const slice = Array.from({ length: Math.min(20, n - i) }, (_, j) => `${prefix}${i + j}@chunks.example`);
    made.push(...(await Promise.all(slice.map((userName) => okta.createUser(userName)))));
  }
  return made;
}

describe("faults-l: one chunk of a group's membership add refused for good", () => {
  it("the removal, the other add chunk and the rename land; the refused members are a dead letter; the retry adds only them", async () => {
    const okta = h.scim("okta");
    const leaving = await okta.createUser("leaving@chunks.example");
    const staying = await okta.createUser("staying@chunks.example");
    const newcomers = await createUsers("new", 105);
    const g = await okta.createGroup("chunky", [leaving.id, staying.id]);
    await h.waitForIdle(60_000);
    const gid = groups().find((x) => x.displayName === "chunky")?.id as string;
    expect(sorted(groupById(gid)?.members)).toEqual(
      sorted([pidOf("leaving@chunks.example"), pidOf("staying@chunks.example")]),
    );

    // The platform refuses (422, for good) any group PATCH adding the first newcomer: the whole
    // chunk that names them, although every one of its members is a platform user.
    const marked = pidOf("new0@chunks.example");
    proxy.rule = (call) =>
      call.method === "PATCH" &&
      call.path.startsWith("/api/scim/v2/Groups/") &&
      addedIn(call.body).includes(marked)
        ? {
            kind: "answer",
            status: 422,
            body: {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "422",
              detail: "faults-l: refused",
            },
          }
        : undefined;
    const before = proxy.calls.length;
    const res = await okta.put(`/Groups/${g.id}`, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "chunky renamed",
      members: [staying, ...newcomers].map((u) => ({ value: u.id })),
    });
    expect(res.status).toBe(200);
    await h.waitForIdle(60_000);

    // The chunk naming them is refused, then narrowed (review m2): sent again in halves, each
    // refused half halved again, so only the first newcomer is refused (at most 2·ceil(log2 100)
    // calls more), and the other 99 of the chunk get in.
    const refusedCalls = proxy.calls.slice(before).filter((c) => c.status === 422);
    expect(addedIn(refusedCalls[0]?.body).length).toBeGreaterThan(1);
    expect(refusedCalls.length).toBeLessThanOrEqual(1 + 2 * 7);
    for (const call of refusedCalls) expect(addedIn(call.body)).toContain(marked);
    expect(addedIn(refusedCalls.at(-1)?.body)).toEqual([marked]);
    const refused = new Set([marked]);
    const everyone = [staying, ...newcomers].map((u) => pidOf(u.userName));
    const group = groupById(gid);
    // The rename and the member who left (access taken away) landed ...
    expect(group?.displayName).toBe("chunky renamed");
    expect(group?.members).not.toContain(pidOf("leaving@chunks.example"));
    // ... and so did every member the refusal did not name.
    expect(sorted(group?.members)).toEqual(sorted(everyone.filter((p) => !refused.has(p))));
    // The refusal is visible: the group's dead letter with its reason, and its status.
    const letter = (await letters()).find((l) => l.ref.id === g.id);
    expect(letter?.code).toBe("platform_bad_request");
    expect(letter?.reason).toMatch(new RegExp(`${refused.size} member`));
    expect(await entity(g.id)).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });

    // The platform accepts them now; the admin retries: one PATCH adds the refused members only.
    proxy.rule = undefined;
    const beforeRetry = proxy.calls.length;
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBe(202);
    await h.waitForIdle(60_000);
    const writes = proxy.calls.slice(beforeRetry).filter((c) => c.method !== "GET");
    expect(writes.map((c) => c.method)).toEqual(["PATCH"]);
    expect(sorted(addedIn(writes[0]?.body))).toEqual(sorted([...refused]));
    expect(sorted(groupById(gid)?.members)).toEqual(sorted(everyone));
    expect(await entity(g.id)).toMatchObject({ state: "synced" });
    expect((await letters()).map((l) => l.ref.id)).not.toContain(g.id);
  }, 120_000);
});

type Tenant = { name: string; groups: Array<{ id: string; name: string; members: string[] }> };
const embedGroup = (name: string) =>
  (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants
    .find((t) => t.name === "acme-l")
    ?.groups.find((g) => g.name === name);
const embedAdded = (body: unknown): string[] =>
  ((body as { users?: Array<{ externalId: string }> } | undefined)?.users ?? []).map((u) => u.externalId);

describe("faults-l: an embed group's member add refused for good", () => {
  it("the removal and the rename land; the refused members are a dead letter; the retry adds only them", async () => {
    const acme = h.scim("acme");
    const leaving = await acme.createUser("leaving@embed-l.example");
    const staying = await acme.createUser("staying@embed-l.example");
    const newcomers = await Promise.all([0, 1, 2].map((i) => acme.createUser(`new${i}@embed-l.example`)));
    const g = await acme.createGroup("Embed L", [leaving.id, staying.id]);
    await h.waitForIdle();
    const gid = embedGroup("Embed L")?.id as string;
    expect(sorted(embedGroup("Embed L")?.members)).toEqual([
      "leaving@embed-l.example",
      "staying@embed-l.example",
    ]);

    proxy.rule = (call) =>
      call.method === "POST" && call.path.endsWith(`/groups/${gid}/users`)
        ? { kind: "answer", status: 400, body: { error: { code: "INVALID", message: "faults-l: refused" } } }
        : undefined;
    const before = proxy.calls.length;
    const res = await acme.put(`/Groups/${g.id}`, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Embed L renamed",
      members: [staying, ...newcomers].map((u) => ({ value: u.id })),
    });
    expect(res.status).toBe(200);
    await h.waitForIdle();

    // The chunk is refused, then narrowed as a workspace group's is (review n): its halves are sent
    // again, and here every piece is refused (the refusal is the group's, not a member's), down to
    // each member alone: [3], its halves [2] and [1], then [1] and [1].
    const refused = proxy.calls.slice(before).filter((c) => c.status === 400);
    expect(refused).toHaveLength(5);
    expect(sorted(embedAdded(refused[0]?.body))).toEqual(sorted(newcomers.map((u) => u.userName)));
    for (const call of refused.slice(1)) {
      expect(newcomers.map((u) => u.userName)).toEqual(expect.arrayContaining(embedAdded(call.body)));
    }
    expect(refused.slice(1).map((call) => embedAdded(call.body).length)).toEqual([2, 1, 1, 1]);
    // The rename and the member who left (access taken away) landed, the refused ones wait.
    expect(embedGroup("Embed L")).toBeUndefined();
    expect(embedGroup("Embed L renamed")?.members).toEqual(["staying@embed-l.example"]);
    const letter = (await letters()).find((l) => l.ref.id === g.id);
    expect(letter?.code).toBe("platform_bad_request");
    expect(letter?.reason).toMatch(/3 member/);

    proxy.rule = undefined;
    const beforeRetry = proxy.calls.length;
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBe(202);
    await h.waitForIdle();
    const writes = proxy.calls.slice(beforeRetry).filter((c) => c.method !== "GET");
    expect(writes.map((c) => c.method)).toEqual(["POST"]);
    expect(sorted(embedAdded(writes[0]?.body))).toEqual(sorted(newcomers.map((u) => u.userName)));
    expect(sorted(embedGroup("Embed L renamed")?.members)).toEqual(
      sorted([staying, ...newcomers].map((u) => u.userName)),
    );
    expect((await letters()).map((l) => l.ref.id)).not.toContain(g.id);
  }, 60_000);
});
