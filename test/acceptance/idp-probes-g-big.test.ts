/**
 * Acceptance probe (round g), end to end: a big group built the way identity providers push one
 * (Entra ID and Okta send memberships in several PATCHes of a few hundred members; JumpCloud and
 * Keycloak replace the list with a full PUT), with duplicates, members already present, removals
 * and member deletions mixed in before the queues drain. Checked on the emulated platform.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GROUP_SCHEMA, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-idp-probes-g-big", {
    sources: { entra: { tokens: ["entra-token"] } },
  });
});
afterAll(async () => {
  await h?.close();
});

type Snapshot = {
  users: Array<{ id: string; userName: string; active: boolean }>;
  groups: Array<{ id: string; displayName: string; members: string[] }>;
};
const snap = () => h.emulator.state() as unknown as Snapshot;

async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size)
    out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

describe("a group of 1,500 members", () => {
  it("built by several PATCHes with duplicates and removals, members deleted meanwhile, then replaced by a PUT", async () => {
    const entra = h.scim("entra");
    const N = 1_500;
    const users = await inBatches(
      Array.from({ length: N }, (_, i) => i),
      40,
      (i) => entra.createUser(`big.${i}@example.com`, { externalId: `aad-big-${i}` }),
    );
    const g = await entra.createGroup("Big group", []);

    // Five PATCHes of 300 members; each repeats the last 20 of the one before and a value twice.
    for (let p = 0; p < 5; p++) {
      const slice = users.slice(Math.max(0, p * 300 - 20), (p + 1) * 300);
      const value = [...slice.map((u) => ({ value: u.id })), { value: slice[0]!.id }];
      const res = await entra.patchGroup(g.id, [{ op: "Add", path: "members", value }]);
      expect(res.status, JSON.stringify(res.body)).toBe(204);
    }
    // Entra removes 300 by value list, one by filter, and 40 members are deleted at the source.
    const removed = users.slice(100, 400);
    expect(
      (
        await entra.patchGroup(g.id, [
          { op: "Remove", path: "members", value: removed.map((u) => ({ value: u.id })) },
        ])
      ).status,
    ).toBe(204);
    expect(
      (await entra.patchGroup(g.id, [{ op: "Remove", path: `members[value eq "${users[5]!.id}"]` }])).status,
    ).toBe(204);
    const deleted = users.slice(800, 840);
    for (const u of deleted) expect((await entra.deleteUser(u.id)).status).toBe(204);

    const gone = new Set([...removed, users[5]!, ...deleted].map((u) => u.id));
    const expected = users.filter((u) => !gone.has(u.id));
    const here = await entra.get(`/Groups/${g.id}`);
    expect(here.body.members).toHaveLength(expected.length);

    await h.waitForIdle(60_000);
    const byName = new Map(snap().users.map((u) => [u.userName, u]));
    const platformGroup = snap().groups.filter((x) => x.displayName === "Big group");
    expect(platformGroup).toHaveLength(1);
    expect(new Set(platformGroup[0]!.members)).toEqual(
      new Set(expected.map((u) => byName.get(u.userName)!.id)),
    );
    expect(platformGroup[0]!.members).toHaveLength(expected.length);
    // never created, or deactivated (onDelete: deactivate)
    for (const u of deleted) expect(byName.get(u.userName)?.active ?? false).toBe(false);

    // JumpCloud/Keycloak style: a full PUT with 800 of them (some that were removed, some kept).
    const kept = [...users.slice(200, 600), ...users.slice(1_000, 1_400)];
    const put = await entra.put(`/Groups/${g.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Big group",
      members: kept.map((u) => ({ value: u.id, display: u.userName })),
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await h.waitForIdle(60_000);
    const after = snap().groups.find((x) => x.displayName === "Big group")!;
    expect(new Set(after.members)).toEqual(new Set(kept.map((u) => byName.get(u.userName)!.id)));
    expect(after.members).toHaveLength(800);

    expect(h.emulator.count("replaceGroup")).toBe(0);
    expect(h.emulator.violations()).toEqual([]);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  }, 85_000);
});
