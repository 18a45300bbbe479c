import { afterAll, describe, expect, it } from "vitest";
import type { DirtyEntry } from "../../../src/directory/directory-types.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { createHarness, user } from "./directory-fixture.js";

const h = createHarness();
const { store } = h;

afterAll(() => h.close());

const FAR_FUTURE = Date.now() + 3_600_000;

async function dirtyOf(source: string): Promise<DirtyEntry[]> {
  return (await store.listDirty(FAR_FUTURE, 10_000)).filter((entry) => entry.ref.source === source);
}

describe("the dirty set", () => {
  it("marks every accepted write dirty and keeps the oldest time", async () => {
    const before = Date.now();
    const u = await store.createUser("d1", user("dirty.one"));
    const ref: EntityRef = { source: "d1", kind: "user", id: u.resource.id };
    const [first] = await dirtyOf("d1");
    expect(first?.ref).toEqual(ref);
    expect(first!.since).toBeGreaterThanOrEqual(before);
    // Make sure a later write has a later clock, then check the score did not move.
    const deadline = Date.now() + 1000;
    while (Date.now() <= first!.since && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    await store.updateUser("d1", u.resource.id, (cur) => ({ ...cur.resource, title: "x" }));
    await store.markDirty(ref);
    expect(await dirtyOf("d1")).toEqual([first]);
  });

  it("markClean with a stale generation keeps the marker; with the current one clears it", async () => {
    const u = await store.createUser("d2", user("dirty.two"));
    const ref: EntityRef = { source: "d2", kind: "user", id: u.resource.id };
    const second = await store.replaceUser("d2", u.resource.id, user("dirty.two", { title: "t" }));
    expect(await store.markClean(ref, 1)).toBe(false);
    expect((await dirtyOf("d2")).map((d) => d.ref)).toEqual([ref]);
    expect(await store.markClean(ref, second.generation)).toBe(true);
    expect(await dirtyOf("d2")).toEqual([]);
    // A write after the clean marks it dirty again.
    await store.updateUser("d2", u.resource.id, (cur) => ({ ...cur.resource, title: "u" }));
    expect((await dirtyOf("d2")).map((d) => d.ref)).toEqual([ref]);
  });

  it("a tombstone stays dirty until its deletion generation is synced", async () => {
    const u = await store.createUser("d3", user("dirty.three"));
    const ref: EntityRef = { source: "d3", kind: "user", id: u.resource.id };
    await store.markClean(ref, 1);
    await store.deleteUser("d3", u.resource.id);
    expect(await store.markClean(ref, 1)).toBe(false);
    const snap = await store.snapshotUser("d3", u.resource.id);
    expect(snap?.desired).toBeNull();
    expect(await store.markClean(ref, snap!.generation)).toBe(true);
  });

  it("lists dirty entries oldest first, only those before the cut-off, up to the limit", async () => {
    const count0 = await store.countDirty();
    const ids: string[] = [];
    for (const name of ["l1", "l2", "l3"]) ids.push((await store.createUser("d4", user(name))).resource.id);
    expect(await store.countDirty()).toBe(count0 + 3);
    const entries = await dirtyOf("d4");
    expect(entries.map((e) => e.ref.id).sort()).toEqual([...ids].sort()); // same-ms ties: any order
    const sinces = entries.map((e) => e.since);
    expect([...sinces].sort((a, b) => a - b)).toEqual(sinces);
    expect(await store.listDirty(Math.min(...sinces), 100)).not.toContainEqual(entries[0]);
    expect(await store.listDirty(FAR_FUTURE, 1)).toHaveLength(1);
  });

  it("markDirty marks without changing the entity and calls notify", async () => {
    const u = await store.createUser("d5", user("dirty.five"));
    const ref: EntityRef = { source: "d5", kind: "user", id: u.resource.id };
    await store.markClean(ref, 1);
    h.notified.length = 0;
    await store.markDirty(ref);
    expect((await dirtyOf("d5")).map((d) => d.ref)).toEqual([ref]);
    expect(h.notified).toEqual([[ref]]);
    expect((await store.getUser("d5", u.resource.id))?.generation).toBe(1);
  });

  it("a failing notify does not fail the write: the change and its dirty marker are durable", async () => {
    let calls = 0;
    h.setNotify(async () => {
      calls += 1;
      throw new Error("queue is down");
    });
    try {
      const u = await store.createUser("d6", user("durable"));
      const updated = await store.updateUser("d6", u.resource.id, (cur) => ({ ...cur.resource, title: "t" }));
      expect(updated.generation).toBe(2);
      await store.deleteUser("d6", u.resource.id);
      expect(calls).toBe(3);
      const dirty = await dirtyOf("d6");
      expect(dirty.map((d) => d.ref)).toEqual([{ source: "d6", kind: "user", id: u.resource.id }]);
      expect((await store.snapshotUser("d6", u.resource.id))?.generation).toBe(3);
    } finally {
      h.setNotify(async (refs) => {
        h.notified.push(refs);
      });
    }
  });
});
