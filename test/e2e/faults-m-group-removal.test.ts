/**
 * Faults-m: a workspace group's member removal refused for good (400 again after the group is read
 * again). The group's other changes (its adds, its rename) land; the member the platform would not
 * remove stays in, loudly: the group's dead letter says how many could not be removed, and the
 * admin's retry sends only that removal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultProxy } from "../helpers/fault-proxy.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  h = await startTestBridge("faults-m-group-removal", {
    start: false,
    sources: { okta: { tokens: ["okta-token"] } },
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
const groupById = (id: string) =>
  (h.emulator.state().groups as unknown as PlatformGroup[]).find((g) => g.id === id);
const pidOf = (userName: string) => h.platformUsers().get(userName)?.id as string;
const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();
const letters = async () =>
  (await h.admin().get("/dead-letters?limit=100")).body.items as Array<{
    ref: { source: string; kind: string; id: string };
    code: string;
    reason: string;
  }>;

type PatchBody = { Operations?: Array<{ op: string; path?: string; value?: unknown }> };
const opsIn = (body: unknown) => (body as PatchBody | undefined)?.Operations ?? [];

describe("faults-m: a group's member removal refused for good", () => {
  it("the add and the rename land; the member stays in, a dead letter says so; the retry sends only the removal", async () => {
    const okta = h.scim("okta");
    const leaving = await okta.createUser("leaving@removal-m.example");
    const staying = await okta.createUser("staying@removal-m.example");
    const joining = await okta.createUser("joining@removal-m.example");
    const g = await okta.createGroup("held", [leaving.id, staying.id]);
    await h.waitForIdle(60_000);
    const gid = (h.emulator.state().groups as unknown as PlatformGroup[]).find(
      (x) => x.displayName === "held",
    )?.id as string;
    const leavingPid = pidOf("leaving@removal-m.example");

    // The platform refuses (400, for good) any group PATCH removing the member who leaves.
    proxy.rule = (call) =>
      call.method === "PATCH" &&
      call.path.startsWith("/api/scim/v2/Groups/") &&
      opsIn(call.body).some((op) => op.op === "remove" && op.path?.includes(leavingPid))
        ? {
            kind: "answer",
            status: 400,
            body: {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "400",
              detail: "faults-m: refused",
            },
          }
        : undefined;
    const res = await okta.put(`/Groups/${g.id}`, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "held renamed",
      members: [staying, joining].map((u) => ({ value: u.id })),
    });
    expect(res.status).toBe(200);
    await h.waitForIdle(60_000);

    const group = groupById(gid);
    expect(group?.displayName).toBe("held renamed");
    expect(sorted(group?.members)).toEqual(
      sorted([leavingPid, pidOf("staying@removal-m.example"), pidOf("joining@removal-m.example")]),
    );
    const letter = (await letters()).find((l) => l.ref.id === g.id);
    expect(letter?.code).toBe("platform_bad_request");
    expect(letter?.reason).toMatch(/remove 1 member/);
    const metrics = (await h.http.get("/metrics")).text;
    expect(metrics).toMatch(/dead_letters_total\{[^}]*code="platform_bad_request"[^}]*\} [1-9]/);

    // The platform accepts it now; the admin retries: one PATCH, the removal alone.
    proxy.rule = undefined;
    const beforeRetry = proxy.calls.length;
    expect((await h.admin().post("/dead-letters/retry", {})).status).toBe(202);
    await h.waitForIdle(60_000);
    const writes = proxy.calls.slice(beforeRetry).filter((c) => c.method !== "GET");
    expect(writes.map((c) => c.method)).toEqual(["PATCH"]);
    expect(opsIn(writes[0]?.body)).toEqual([{ op: "remove", path: `members[value eq "${leavingPid}"]` }]);
    expect(sorted(groupById(gid)?.members)).toEqual(
      sorted([pidOf("staying@removal-m.example"), pidOf("joining@removal-m.example")]),
    );
    expect((await letters()).map((l) => l.ref.id)).not.toContain(g.id);
  }, 120_000);
});
