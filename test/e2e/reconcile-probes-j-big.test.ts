/**
 * Probes-j (reconciliation of a source of 5,000 users): the platform's listing is read page by
 * page (100 a page), so drift deep in it, in a group of 1,500 members and at its very end is found
 * like drift on the first page; the dry run reports the plan the real run applies; the repairs
 * land once and a second run finds nothing; the deprovisioning guard counts against all 5,000.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GROUP_SCHEMA,
  PLATFORM_TOKEN,
  USER_SCHEMA,
  type TestBridge,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const USERS = 5_000;
const ids: string[] = [];
let groupId: string;

const ZERO = {
  missing: 0,
  changed: 0,
  activeMismatch: 0,
  membership: 0,
  attributeValues: 0,
  deletedBehind: 0,
  orphans: 0,
};

async function reconcile(dryRun: boolean) {
  const res = await h.admin().post("/sources/okta/reconcile", { dryRun });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const run = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
      return ["queued", "running"].includes(run.body.state) ? null : run.body;
    },
    { what: "the run to settle", timeoutMs: 120_000, intervalMs: 200 },
  );
}
const platformUser = (i: number) => h.platformUsers().get(`big.j${i}@example.com`);

beforeAll(async () => {
  h = await startTestBridge("reconcile-probes-j-big", { sources: { okta: { tokens: ["okta-token"] } } });
  for (let i = 0; i < USERS; i++) {
    const user = await h.bridge.directory.createUser("okta", {
      schemas: [USER_SCHEMA],
      userName: `big.j${i}@example.com`,
      displayName: `Big ${i}`,
      active: true,
    } as never);
    ids.push(user.resource.id);
  }
  const group = await h.bridge.directory.createGroup(
    "okta",
    { schemas: [GROUP_SCHEMA], displayName: "Big J" } as never,
    ids.slice(1_000, 2_500),
  );
  groupId = group.resource.id;
  await h.waitForIdle(240_000);
}, 300_000);
afterAll(async () => {
  await h?.close();
});

describe("a source of 5,000 users", () => {
  it("converged: a run finds nothing, and owns all 5,000", async () => {
    const run = await reconcile(true);
    expect(run.counts).toEqual(ZERO);
    expect(run.guard).toMatchObject({ plannedDeprovisions: 0, ownedUsers: USERS });
    expect(h.emulator.state().groups.find((g) => g.displayName === "Big J")?.members).toHaveLength(1_500);
  }, 120_000);

  it("drift on the first page, deep in the listing, in the big group and at the end is found and repaired once", async () => {
    h.emulator.drift({ action: "setUserActive", userId: platformUser(0)?.id as string, active: false });
    h.emulator.drift({ action: "setUserActive", userId: platformUser(3_333)?.id as string, active: false });
    const group = h.emulator.state().groups.find((g) => g.displayName === "Big J");
    h.emulator.drift({
      action: "removeGroupMember",
      groupId: group?.id as string,
      userId: platformUser(2_222)?.id as string,
    });
    const res = await fetch(`${h.platformUrl}/api/scim/v2/Users/${platformUser(USERS - 1)?.id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
    });
    expect(res.status).toBe(204);
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "big.orphan.j@example.com" } });
    const expected = { ...ZERO, activeMismatch: 2, membership: 1, deletedBehind: 1, orphans: 1 };

    const dry = await reconcile(true);
    expect(dry.counts).toEqual(expected);
    const run = await reconcile(false);
    expect(run.state, JSON.stringify(run.repairs)).toBe("succeeded");
    expect(run.counts).toEqual(expected);
    expect(run.repairs.entities).toBe(dry.repairs.entities);
    expect(run.repairs.outcome).toMatchObject({ synced: 4, failed: 0, pending: 0 });
    await h.waitForIdle(60_000);
    expect(platformUser(0)?.active).toBe(true);
    expect(platformUser(3_333)?.active).toBe(true);
    expect(platformUser(USERS - 1)).toBeDefined();
    const pid2222 = (await h.admin().get(`/sources/okta/users/${ids[2_222]}`)).body.platformId;
    expect(h.emulator.state().groups.find((g) => g.displayName === "Big J")?.members).toContain(pid2222);
    const after = await reconcile(true);
    expect(after.counts).toEqual({ ...ZERO, orphans: 1 });
    expect(after.guard).toMatchObject({ ownedUsers: USERS });
    expect((await h.admin().get(`/sources/okta/groups/${groupId}`)).body.state).toBe("synced");
  }, 180_000);

  it("the guard: 500 of 5,000 turned off at the source and on again behind the bridge's back is at the share, 501 above it", async () => {
    const scim = h.scim("okta");
    for (const id of ids.slice(4_000, 4_501)) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    await h.waitForIdle(120_000);
    for (let i = 4_000; i < 4_501; i++) {
      h.emulator.drift({ action: "setUserActive", userId: platformUser(i)?.id as string, active: true });
    }
    const above = await reconcile(true);
    expect(above.guard).toMatchObject({ plannedDeprovisions: 501, ownedUsers: USERS, tripped: true });
    // One of them deactivated again behind the bridge's back: 500 of 5,000 is exactly the share.
    h.emulator.drift({ action: "setUserActive", userId: platformUser(4_500)?.id as string, active: false });
    const at = await reconcile(false);
    expect(at.guard).toMatchObject({ plannedDeprovisions: 500, ownedUsers: USERS, tripped: false });
    expect(at.state).toBe("succeeded");
    await h.waitForIdle(120_000);
    expect(h.platformUsers().get("big.j4000@example.com")?.active).toBe(false);
  }, 240_000);
});
