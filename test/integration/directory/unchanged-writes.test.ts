import { afterAll, describe, expect, it } from "vitest";
import { storedGroup } from "../../../src/directory/directory-codec.js";
import { dirtyKey, sourceBase } from "../../../src/directory/directory-keys.js";
import { DirectoryWriter } from "../../../src/directory/directory-writer.js";
import { refKey } from "../../../src/scim/scim-types.js";
import { createHarness, group, user } from "./directory-fixture.js";

/**
 * The store's one "no change" rule (redis-directory-store.ts, unchangedAt): a group write whose
 * document is the stored one and whose membership change keeps the members is not applied, and
 * that is decided atomically with the member set, so a concurrent writer is never lost.
 */
const h = createHarness();
const { store } = h;

afterAll(() => h.close());

async function users(source: string, names: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) ids.push((await store.createUser(source, user(name))).resource.id);
  return ids;
}

const dirtyScore = (source: string, id: string) =>
  h.redis.zscore(dirtyKey(h.prefix), refKey({ source, kind: "group", id }));

describe("writes that change nothing", () => {
  it("updateGroup: a membership change that keeps the members writes nothing and notifies no one", async () => {
    const [u1, u2, u3] = await users("n1", ["a", "b", "c"]);
    const g = await store.createGroup("n1", group("Same"), [u1!, u2!]);
    const gid = g.resource.id;
    const score = await dirtyScore("n1", gid);
    const notified = h.notified.length;
    const changes = [
      { add: [u1!] },
      { remove: [u3!] },
      { add: [u2!], remove: [u3!] },
      { add: [u3!], remove: [u3!] },
      { replace: [u2!, u1!, u1!] },
      { replace: [u1!, u3!], add: [u2!], remove: [u3!] },
    ];
    for (const members of changes) {
      const out = await store.updateGroup("n1", gid, (cur) => ({ resource: cur.resource, members }));
      expect(out.generation, JSON.stringify(members)).toBe(1);
      expect(out.meta).toEqual(g.meta);
      expect(out.memberCount).toBe(2);
    }
    const read = await store.getGroup("n1", gid, { withMembers: true });
    expect(read?.meta).toEqual(g.meta);
    expect(read?.members?.map((m) => m.value)).toEqual([u1!, u2!].sort());
    expect(h.notified.length).toBe(notified);
    expect(await dirtyScore("n1", gid)).toBe(score);

    // The same change with a document change is a write.
    const renamed = await store.updateGroup("n1", gid, () => ({
      resource: group("Renamed"),
      members: { add: [u1!] },
    }));
    expect(renamed.generation).toBe(2);
    expect(h.notified.length).toBe(notified + 1);
  });

  it("replaceGroup: the same document and members keep the version; another member list is a write", async () => {
    const [u1, u2] = await users("n2", ["a", "b"]);
    const g = await store.createGroup("n2", group("Put", { externalId: "e-1" }), [u1!]);
    const gid = g.resource.id;
    const notified = h.notified.length;
    const same = await store.replaceGroup("n2", gid, { externalId: "e-1", ...group("Put") }, [u1!]);
    expect(same.generation).toBe(1);
    expect(same.meta).toEqual(g.meta);
    expect(same.members?.map((m) => m.value)).toEqual([u1!]);
    expect(same.resource).toEqual(g.resource);
    expect(h.notified.length).toBe(notified);
    await expect(
      store.replaceGroup("n2", gid, group("Put", { externalId: "e-1" }), [u1!], { ifMatch: 'W/"7"' }),
    ).rejects.toMatchObject({ status: 412 });
    await expect(
      store.replaceGroup("n2", "00000000-0000-4000-8000-000000000000", group("Put"), []),
    ).rejects.toMatchObject({ status: 404 });
    const more = await store.replaceGroup("n2", gid, group("Put", { externalId: "e-1" }), [u1!, u2!]);
    expect(more.generation).toBe(2);
    expect(h.notified.length).toBe(notified + 1);
  });

  it("the script decides at the generation the document was compared at: a write in between is not lost", async () => {
    const [u1, u2] = await users("n3", ["a", "b"]);
    const g = await store.createGroup("n3", group("Race"), [u1!, u2!]);
    const gid = g.resource.id;
    const writer = new DirectoryWriter(h.redis, h.prefix);
    const put = (expected: string, sameAt: number, add: string[]) =>
      writer.put({
        kind: "group",
        source: "n3",
        base: sourceBase(h.prefix, "n3"),
        id: gid,
        mode: "update",
        expected,
        sameAt,
        stored: storedGroup(group("Race")),
        members: { add },
      });
    // As read at generation 1, re-adding u1 changes nothing.
    expect(await put("1", 1, [u1!])).toMatchObject({ unchanged: true, raced: false, generation: 1 });
    // Another writer removes u1 (generation 2) before the re-add lands.
    await store.updateGroup("n3", gid, (cur) => ({ resource: cur.resource, members: { remove: [u1!] } }));
    // With the generation expected (PATCH): a race, so the caller reads again and decides again.
    expect(await put("1", 1, [u1!])).toMatchObject({ raced: true, unchanged: false });
    // Without it (PUT without If-Match): the document was compared at generation 1, not the
    // current one, so the write applies and u1 is a member again.
    expect(await put("", 1, [u1!])).toMatchObject({ raced: false, unchanged: false, generation: 3 });
    const read = await store.getGroup("n3", gid, { withMembers: true });
    expect(read?.members?.map((m) => m.value)).toEqual([u1!, u2!].sort());
    expect(read?.generation).toBe(3);
  });

  it("a guarded write that changes nothing neither checks nor applies its guard", async () => {
    const [u1] = await users("n4", ["a"]);
    const g = await store.createGroup("n4", group("Guarded"), [u1!]);
    const guardKey = `${h.prefix}:test-guard`;
    const out = await store.updateGroup(
      "n4",
      g.resource.id,
      (cur) => ({ resource: cur.resource, members: { add: [u1!] } }),
      { guard: { key: guardKey, expected: "5", fields: { seen: "x" }, ttlSeconds: 60 } },
    );
    expect(out.generation).toBe(1);
    expect(await h.redis.exists(guardKey)).toBe(0);
  });
});
