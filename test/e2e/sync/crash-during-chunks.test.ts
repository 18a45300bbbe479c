import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHUNK_SIZE } from "../../../src/mapping/plan-types.js";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { type CrashHarness, startCrashHarness } from "./fixtures/crash-harness.js";
import type { ProxiedCall } from "./fixtures/holding-proxy.js";

const USERS = 400;
const PREFIX = "okta-";

interface PatchBody {
  Operations: Array<{ op: string; path?: string; value?: Array<{ value: string }> }>;
}

/**
 * Invariant 2 when a worker process dies (SIGKILL) in the middle of a large group membership
 * change, which the sync writes as several PATCH calls of at most CHUNK_SIZE (100) members: some
 * chunks landed, one is out (held before the platform saw it, or applied with its answer lost),
 * the rest were never sent; the membership changes again while no worker runs. After a restart the
 * platform group's members are exactly the source's, and there is one group of that name.
 * The users are synced once for the file; each test has a group of its own.
 */
describe("crash during a chunked group membership change (SIGKILL)", () => {
  let h: CrashHarness;
  const ids: string[] = new Array(USERS);
  /** Platform user id by store id, and back. */
  const pidOf = new Map<string, string>();
  const idOf = new Map<string, string>();

  beforeAll(async () => {
    h = await startCrashHarness("crash-chunks", { okta: { tokens: ["okta-token"], groupPrefix: PREFIX } });
    const worker = await h.spawnWorker();
    await Promise.all(
      Array.from({ length: 16 }, async (_, lane) => {
        for (let i = lane; i < USERS; i += 16) {
          const rec = await h.directory.createUser("okta", {
            schemas: [SCHEMA_USER],
            userName: `chunk${i}@example.com`,
            active: true,
          });
          ids[i] = rec.resource.id;
        }
      }),
    );
    await h.waitIdle("the users");
    await h.stop(worker);
    const byName = new Map(h.emulator.state().users.map((u) => [String(u["userName"]), String(u.id)]));
    ids.forEach((id, i) => {
      const pid = byName.get(`chunk${i}@example.com`) as string;
      pidOf.set(id, pid);
      idOf.set(pid, id);
    });
    expect(pidOf.size).toBe(USERS);
  });
  afterAll(async () => {
    await h?.close();
  });

  const range = (from: number, to: number) => ids.slice(from, to);
  const platformGroup = (name: string) => {
    const groups = h.emulator.state().groups.filter((g) => g.displayName === `${PREFIX}${name}`);
    expect(groups.length, `groups named ${PREFIX}${name}`).toBeLessThanOrEqual(1);
    return groups[0];
  };
  const setMembers = (groupId: string, name: string, members: string[]) =>
    h.directory.replaceGroup("okta", groupId, { schemas: [SCHEMA_GROUP], displayName: name }, members);
  const patchesOf = (name: string) => {
    const pid = platformGroup(name)?.id;
    return (c: ProxiedCall) => c.method === "PATCH" && c.path === `/api/scim/v2/Groups/${pid}`;
  };
  /** Member platform ids a PATCH adds (empty for a removal chunk). */
  const addedBy = (call: ProxiedCall) =>
    (call.body as PatchBody).Operations.flatMap((op) => (op.op === "add" ? (op.value ?? []) : [])).map(
      (m) => m.value,
    );

  /** Restarts a worker, waits until all is done, and compares the group with its source. */
  async function afterRestart(groupId: string, name: string) {
    const worker = await h.spawnWorker();
    await h.waitIdle("convergence after the restart");
    await h.stop(worker);
    const group = await h.directory.getGroup("okta", groupId, { withMembers: true });
    const want = (group?.members ?? []).map((m) => pidOf.get(m.value)).sort();
    expect(want.length).toBeGreaterThan(CHUNK_SIZE);
    expect(platformGroup(name)?.members.slice().sort()).toEqual(want);
    await h.expectSettled();
  }

  /**
   * 0-199 are members and synced; then 0-149 leave and 200-399 join: 2 remove chunks (100, 50), then
   * 2 add chunks (removals go first: a refused or lost add must not hold back a removal).
   */
  async function bigChange(name: string) {
    const worker = await h.spawnWorker();
    const group = await h.directory.createGroup(
      "okta",
      { schemas: [SCHEMA_GROUP], displayName: name },
      range(0, 200),
    );
    await h.waitIdle(`${name} created`);
    expect(platformGroup(name)?.members).toHaveLength(200);
    return { worker, groupId: group.resource.id, isPatch: patchesOf(name) };
  }

  it("a chunk applied whose answer was lost: the members end exactly as at the source", async () => {
    const { worker, groupId, isPatch } = await bigChange("lost-answer");
    // The third PATCH (the first add chunk): the removal chunks landed and were recorded, this one
    // lands unrecorded.
    const before = h.proxy.calls.filter(isPatch).length;
    const hold = h.proxy.hold(isPatch, { skip: 2, until: "answer" });
    await setMembers(groupId, "lost-answer", range(150, 400));
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    expect(held.status).toBe(204);
    const patches = h.proxy.calls.filter(isPatch).slice(before);
    expect(patches).toHaveLength(3); // the rest never went out
    expect(patches.map((p) => addedBy(p).length)).toEqual([0, 0, CHUNK_SIZE]);
    expect(platformGroup("lost-answer")?.members).toHaveLength(200 - 150 + CHUNK_SIZE); // both removals, one add

    // While no worker runs: those whose add landed unseen leave again; some who were to leave stay.
    const landedUnseen = addedBy(held).map((pid) => idOf.get(pid) as string);
    expect(landedUnseen).toHaveLength(CHUNK_SIZE);
    await setMembers(groupId, "lost-answer", [
      ...range(0, 20),
      ...range(150, 400).filter((id) => !landedUnseen.includes(id)),
    ]);
    await afterRestart(groupId, "lost-answer");
  }, 60_000);

  it("a chunk still on its way when the worker dies: the members end exactly as at the source", async () => {
    const { worker, groupId, isPatch } = await bigChange("on-its-way");
    // The second PATCH (the second removal chunk) never reaches the platform.
    const hold = h.proxy.hold(isPatch, { skip: 1, until: "request" });
    await setMembers(groupId, "on-its-way", range(150, 400));
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    expect(addedBy(held)).toEqual([]); // a removal chunk
    expect(platformGroup("on-its-way")?.members).toHaveLength(200 - CHUNK_SIZE); // one removal, no add

    // While no worker runs: some who were to join leave again.
    await setMembers(groupId, "on-its-way", range(150, 380));
    await afterRestart(groupId, "on-its-way");
  }, 60_000);

  it("a new large group whose create answer was lost is adopted, not made twice, and filled", async () => {
    const worker = await h.spawnWorker();
    const hold = h.proxy.hold((c) => c.method === "POST" && c.path === "/api/scim/v2/Groups");
    const group = await h.directory.createGroup(
      "okta",
      { schemas: [SCHEMA_GROUP], displayName: "new-big" },
      range(0, 350),
    );
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    expect(held.status).toBe(201);
    expect(platformGroup("new-big")?.members).toHaveLength(CHUNK_SIZE); // created with the first chunk only

    await setMembers(group.resource.id, "new-big", range(50, 400));
    await afterRestart(group.resource.id, "new-big");
  }, 60_000);

  // Last in the file: it deletes users the tests above use.
  it("members of a lost chunk deleted or deactivated at the source: deleted ones leave, deactivated ones stay", async () => {
    const { worker, groupId, isPatch } = await bigChange("deleted-members");
    const hold = h.proxy.hold(isPatch, { skip: 2, until: "answer" }); // the first add chunk
    await setMembers(groupId, "deleted-members", range(150, 400));
    const held = await hold.reached;
    await h.kill(worker);
    hold.release();
    const landedUnseen = addedBy(held).map((pid) => idOf.get(pid) as string);
    expect(landedUnseen).toHaveLength(CHUNK_SIZE);

    // While no worker runs: ten of that chunk are deleted (onDelete: deactivate), ten deactivated.
    const deleted = landedUnseen.slice(0, 10);
    const deactivated = landedUnseen.slice(10, 20);
    for (const id of deleted) await h.directory.deleteUser("okta", id);
    for (const id of deactivated) {
      await h.directory.updateUser("okta", id, (c) => ({ ...c.resource, active: false }));
    }
    await afterRestart(groupId, "deleted-members");
    const members = new Set(platformGroup("deleted-members")?.members);
    for (const id of deleted) expect(members.has(pidOf.get(id) as string)).toBe(false);
    for (const id of deactivated) expect(members.has(pidOf.get(id) as string)).toBe(true);
    const active = new Map(h.emulator.state().users.map((u) => [String(u.id), u["active"]]));
    for (const id of [...deleted, ...deactivated]) expect(active.get(pidOf.get(id) as string)).toBe(false);
  }, 60_000);
});
