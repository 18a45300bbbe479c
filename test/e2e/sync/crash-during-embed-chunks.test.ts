import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHUNK_SIZE } from "../../../src/mapping/plan-types.js";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { type CrashHarness, startCrashHarness } from "./fixtures/crash-harness.js";
import type { ProxiedCall } from "./fixtures/holding-proxy.js";

const USERS = 400;
const TENANT = "acme";
const externalId = (i: number) => `ext-${i}`;

/**
 * Invariant 2 for an embed-tenant source when a worker process dies (SIGKILL) while a large
 * group's members are being added to its embed group in chunks of at most CHUNK_SIZE (100): some
 * chunks landed, one is out (applied with its answer lost, or not yet seen by the platform).
 * While no worker runs, members of that very chunk are deactivated, deleted or taken out of the
 * group, and others join. After a restart the embed group's members are exactly the group's
 * active users (by externalId), and the tenant has one group of that name.
 */
describe("crash during chunked embed-group member adds (SIGKILL)", () => {
  let h: CrashHarness;
  let ids: string[];
  beforeEach(async () => {
    h = await startCrashHarness("crash-embed", {
      acme: { tokens: ["acme-token"], target: { embedTenant: TENANT } },
    });
  });
  afterEach(async () => {
    await h?.close();
  });

  const isMemberAdd = (c: ProxiedCall) =>
    c.method === "POST" && /^\/api\/v1\/embed-tenants\/acme\/groups\/[^/]+\/users$/.test(c.path);
  const embedGroups = () => h.emulator.state().embedTenants.find((t) => t.name === TENANT)?.groups ?? [];
  const platformMembers = () => {
    const staff = embedGroups().filter((g) => g.name === "staff");
    expect(staff.length, "embed groups named staff").toBeLessThanOrEqual(1);
    return (staff[0]?.members ?? []).slice().sort();
  };
  const index = (ext: string) => Number(ext.slice("ext-".length));

  /** 400 users synced, then a group of 0-349 is pushed: its members go out in 4 chunks. */
  async function pushLargeGroup() {
    const worker = await h.spawnWorker();
    ids = new Array(USERS);
    await Promise.all(
      Array.from({ length: 16 }, async (_, lane) => {
        for (let i = lane; i < USERS; i += 16) {
          const rec = await h.directory.createUser("acme", {
            schemas: [SCHEMA_USER],
            userName: `embed${i}@acme.example`,
            externalId: externalId(i),
            active: true,
          });
          ids[i] = rec.resource.id;
        }
      }),
    );
    await h.waitIdle("the users");
    return worker;
  }

  const createStaff = () =>
    h.directory.createGroup("acme", { schemas: [SCHEMA_GROUP], displayName: "staff" }, ids.slice(0, 350));

  /** The active users of the group at the source, by externalId. */
  async function wanted(groupId: string): Promise<string[]> {
    const group = await h.directory.getGroup("acme", groupId, { withMembers: true });
    const out: string[] = [];
    for (const m of group?.members ?? []) {
      const user = await h.directory.getUser("acme", m.value);
      if (user && user.resource.active !== false) out.push(String(user.resource.externalId));
    }
    return out.sort();
  }

  /** While no worker runs: members of the lost chunk leave in three ways, and 350-399 join. */
  async function changesWhileDead(groupId: string, lostChunk: string[]) {
    const lost = lostChunk.map(index);
    for (const i of lost.slice(0, 10)) {
      await h.directory.updateUser("acme", ids[i] as string, (c) => ({ ...c.resource, active: false }));
    }
    for (const i of lost.slice(10, 20)) await h.directory.deleteUser("acme", ids[i] as string);
    const out = lost.slice(20, 30).map((i) => ids[i] as string);
    await h.directory.updateGroup("acme", groupId, (current) => ({
      resource: current.resource,
      members: { add: ids.slice(350, 400), remove: out },
    }));
  }

  async function afterRestart(groupId: string) {
    const worker = await h.spawnWorker();
    await h.waitIdle("convergence after the restart");
    await h.stop(worker);
    const want = await wanted(groupId);
    expect(want.length).toBeGreaterThan(CHUNK_SIZE);
    expect(platformMembers()).toEqual(want);
    expect(embedGroups()).toHaveLength(1);
    expect(h.emulator.state().users).toEqual([]); // embed users never become workspace users
    await h.expectSettled();
  }

  it("a member chunk applied whose answer was lost", async () => {
    const worker = await pushLargeGroup();
    const hold = h.proxy.hold(isMemberAdd, { skip: 1, until: "answer" });
    const group = await createStaff();
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    expect(held.status).toBe(200);
    expect(platformMembers()).toHaveLength(2 * CHUNK_SIZE); // two of four chunks landed
    const lostChunk = (held.body as { users: Array<{ externalId: string }> }).users.map((u) => u.externalId);
    expect(lostChunk).toHaveLength(CHUNK_SIZE);

    await changesWhileDead(group.resource.id, lostChunk);
    await afterRestart(group.resource.id);
  }, 60_000);

  it("a member chunk still on its way when the worker dies", async () => {
    const worker = await pushLargeGroup();
    const hold = h.proxy.hold(isMemberAdd, { skip: 1, until: "request" });
    const group = await createStaff();
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    expect(platformMembers()).toHaveLength(CHUNK_SIZE); // one chunk landed, the second never did
    const lostChunk = (held.body as { users: Array<{ externalId: string }> }).users.map((u) => u.externalId);

    await changesWhileDead(group.resource.id, lostChunk);
    await afterRestart(group.resource.id);
  }, 60_000);

  it("a removal chunk applied whose answer was lost, then some of it join again", async () => {
    const worker = await pushLargeGroup();
    const group = await createStaff();
    await h.waitIdle("staff synced");
    expect(platformMembers()).toHaveLength(350);
    const isRemoval = (c: ProxiedCall) =>
      c.method === "DELETE" && /^\/api\/v1\/embed-tenants\/acme\/groups\/[^/]+\/users$/.test(c.path);
    const hold = h.proxy.hold(isRemoval, { skip: 1, until: "answer" });
    // 0-249 leave (three removal chunks) and 350-399 join.
    await h.directory.updateGroup("acme", group.resource.id, (current) => ({
      resource: current.resource,
      members: { add: ids.slice(350, 400), remove: ids.slice(0, 250) },
    }));
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    const lostChunk = (held.body as { externalIds: string[] }).externalIds;
    expect(lostChunk).toHaveLength(CHUNK_SIZE);
    const onPlatform = new Set(platformMembers());
    for (const ext of lostChunk) expect(onPlatform.has(ext)).toBe(false); // applied

    // While no worker runs: half of the chunk that left unseen joins again.
    const back = lostChunk.slice(0, 50).map((ext) => ids[index(ext)] as string);
    await h.directory.updateGroup("acme", group.resource.id, (current) => ({
      resource: current.resource,
      members: { add: back },
    }));
    await afterRestart(group.resource.id);
  }, 60_000);
});
