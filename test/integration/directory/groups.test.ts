import { afterAll, describe, expect, it } from "vitest";
import { BadRequestError, ConflictError } from "../../../src/errors.js";
import { createHarness, group, user } from "./directory-fixture.js";

const h = createHarness();
const { store } = h;

afterAll(() => h.close());

async function users(source: string, names: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) ids.push((await store.createUser(source, user(name))).resource.id);
  return ids;
}

describe("groups and membership", () => {
  it("keeps membership in both directions", async () => {
    const [u1, u2, u3] = await users("g1", ["m1", "m2", "m3"]);
    const g = await store.createGroup("g1", group("Engineering", { externalId: "grp-eng" }), [u1!, u2!, u1!]);
    expect(g.generation).toBe(1);
    expect(g.memberCount).toBe(2);
    expect(g.meta.resourceType).toBe("Group");
    const gid = g.resource.id;
    const read = await store.getGroup("g1", gid, { withMembers: true });
    expect(read?.members).toEqual([u1!, u2!].sort().map((value) => ({ value, type: "User" })));
    expect((await store.getGroup("g1", gid))?.members).toBeUndefined();
    expect((await store.getUser("g1", u1!))?.groups).toEqual([gid]);
    expect((await store.getUser("g1", u3!))?.groups).toEqual([]);

    // replace, then add, then remove (the documented order)
    const patched = await store.updateGroup("g1", gid, (cur) => ({
      resource: { ...cur.resource, displayName: "Eng" },
      members: { replace: [u2!], add: [u3!, u1!], remove: [u1!] },
    }));
    expect(patched.generation).toBe(2);
    expect(patched.memberCount).toBe(2);
    expect(patched.resource.displayName).toBe("Eng");
    const after = await store.getGroup("g1", gid, { withMembers: true });
    expect(after?.members?.map((m) => m.value)).toEqual([u2!, u3!].sort());
    expect((await store.getUser("g1", u1!))?.groups).toEqual([]);
    expect((await store.getUser("g1", u3!))?.groups).toEqual([gid]);

    const replaced = await store.replaceGroup("g1", gid, group("Eng"), []);
    expect(replaced.memberCount).toBe(0);
    expect((await store.getUser("g1", u2!))?.groups).toEqual([]);
    expect(await store.findGroupId("g1", { externalId: "grp-eng" })).toBeNull();
    expect(await store.findGroupId("g1", { displayName: "ENG" })).toBe(gid);
  });

  it("refuses unknown member ids, names them, and stores nothing", async () => {
    const [u1] = await users("g2", ["n1"]);
    const err = await store.createGroup("g2", group("Bad"), [u1!, "missing-1", "missing-2"]).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.scimType).toBe("invalidValue");
    expect(err.message).toContain("missing-1");
    expect(err.message).toContain("missing-2");
    expect(await store.countEntities("g2", "group")).toBe(0);
    expect(await store.findGroupId("g2", { displayName: "Bad" })).toBeNull();
    expect((await store.getUser("g2", u1!))?.groups).toEqual([]);

    const ok = await store.createGroup("g2", group("Good"), [u1!]);
    await expect(
      store.updateGroup("g2", ok.resource.id, (cur) => ({
        resource: { ...cur.resource, displayName: "Renamed" },
        members: { add: ["ghost"] },
      })),
    ).rejects.toMatchObject({ status: 400, scimType: "invalidValue" });
    const read = await store.getGroup("g2", ok.resource.id, { withMembers: true });
    expect(read?.resource.displayName).toBe("Good");
    expect(read?.generation).toBe(1);
    expect(read?.memberCount).toBe(1);
  });

  it("updateGroup hands mutate the members only when asked (withMembers)", async () => {
    const [u1, u2] = await users("g2m", ["w1", "w2"]);
    const g = await store.createGroup("g2m", group("Readers"), [u1!, u2!]);
    const seen: unknown[] = [];
    await store.updateGroup("g2m", g.resource.id, (cur) => {
      seen.push(cur.members);
      return { resource: cur.resource };
    });
    const updated = await store.updateGroup(
      "g2m",
      g.resource.id,
      (cur) => {
        seen.push(cur.members);
        return { resource: cur.resource, members: { remove: [u2!] } };
      },
      { withMembers: true },
    );
    expect(seen).toEqual([undefined, [u1!, u2!].sort().map((value) => ({ value, type: "User" }))]);
    expect(updated.memberCount).toBe(1);
    expect((await store.getUser("g2m", u2!))?.groups).toEqual([]);
  });

  it("keeps displayName unique per source, case-insensitively", async () => {
    await store.createGroup("g3", group("Sales"), []);
    await expect(store.createGroup("g3", group("SALES"), [])).rejects.toBeInstanceOf(ConflictError);
    const other = await store.createGroup("g3-other", group("sales"), []);
    expect(other.resource.displayName).toBe("sales");
    // A refused rename changes nothing, not even the membership sent with it.
    const [u1] = await users("g3", ["s1"]);
    const support = await store.createGroup("g3", group("Support"), []);
    await expect(
      store.updateGroup("g3", support.resource.id, (cur) => ({
        resource: { ...cur.resource, displayName: "sales" },
        members: { add: [u1!] },
      })),
    ).rejects.toMatchObject({ status: 409, scimType: "uniqueness" });
    const read = await store.getGroup("g3", support.resource.id, { withMembers: true });
    expect(read?.resource.displayName).toBe("Support");
    expect(read?.members).toEqual([]);
    expect((await store.getUser("g3", u1!))?.groups).toEqual([]);
  });

  it("deleting a user removes it from its groups, bumps and dirties them, and leaves a tombstone", async () => {
    const [u1, u2] = await users("g4", ["d1", "d2"]);
    const ga = await store.createGroup("g4", group("A"), [u1!, u2!]);
    const gb = await store.createGroup("g4", group("B"), [u1!]);
    for (const ref of [
      { source: "g4", kind: "group" as const, id: ga.resource.id },
      { source: "g4", kind: "group" as const, id: gb.resource.id },
    ]) {
      await store.markClean(ref, 1);
    }
    h.notified.length = 0;
    await store.deleteUser("g4", u1!);

    const a = await store.getGroup("g4", ga.resource.id, { withMembers: true });
    expect(a?.members?.map((m) => m.value)).toEqual([u2!]);
    expect(a?.generation).toBe(2);
    const b = await store.getGroup("g4", gb.resource.id, { withMembers: true });
    expect(b?.members).toEqual([]);
    expect(b?.generation).toBe(2);

    const dirty = (await store.listDirty(Date.now() + 1000, 1000)).map((d) => `${d.ref.kind}:${d.ref.id}`);
    expect(dirty).toEqual(
      expect.arrayContaining([`group:${ga.resource.id}`, `group:${gb.resource.id}`, `user:${u1}`]),
    );
    const refs = h.notified.flat().map((r) => r.id);
    expect(refs).toEqual(expect.arrayContaining([u1!, ga.resource.id, gb.resource.id]));

    expect(await store.getUser("g4", u1!)).toBeNull();
    const snap = await store.snapshotUser("g4", u1!);
    expect(snap).toEqual({ ref: { source: "g4", kind: "user", id: u1 }, desired: null, generation: 2 });
    expect(await store.countEntities("g4", "user")).toBe(1);
  });

  it("deleting a group removes it from its members' group lists and leaves a tombstone", async () => {
    const [u1] = await users("g5", ["e1"]);
    const g = await store.createGroup("g5", group("Gone"), [u1!]);
    await store.deleteGroup("g5", g.resource.id);
    expect((await store.getUser("g5", u1!))?.groups).toEqual([]);
    expect(await store.getGroup("g5", g.resource.id)).toBeNull();
    expect(await store.snapshotGroup("g5", g.resource.id)).toMatchObject({ desired: null, generation: 2 });
    const fresh = await store.createGroup("g5", group("GONE"), []);
    expect(fresh.resource.id).not.toBe(g.resource.id);
    const live = await store.snapshotGroup("g5", fresh.resource.id);
    expect(live?.desired?.resource.displayName).toBe("GONE");
    expect(live?.desired?.members).toEqual([]);
  });

  it("purging tombstones leaves no keys of deleted entities behind", async () => {
    const source = "g6";
    const [u1, u2] = await users(source, ["p1", "p2"]);
    await store.updateUser(source, u1!, (cur) => ({
      ...cur.resource,
      externalId: "ext-p1",
      emails: [{ value: "P1@Example.com", type: "work" }],
    }));
    const g = await store.createGroup(source, group("Purge", { externalId: "ext-g" }), [u1!, u2!]);
    await store.deleteUser(source, u1!);
    await store.deleteUser(source, u2!);
    await store.deleteGroup(source, g.resource.id);

    const userRef = { source, kind: "user" as const, id: u1! };
    const snap = await store.snapshotUser(source, u1!);
    expect(await store.purgeTombstone(userRef, (snap?.generation ?? 0) - 1)).toBe(false);
    for (const [kind, id] of [
      ["user", u1!],
      ["user", u2!],
      ["group", g.resource.id],
    ] as const) {
      const s =
        kind === "user" ? await store.snapshotUser(source, id) : await store.snapshotGroup(source, id);
      expect(s?.desired).toBeNull();
      expect(await store.purgeTombstone({ source, kind, id }, s!.generation)).toBe(true);
      expect(
        kind === "user" ? await store.snapshotUser(source, id) : await store.snapshotGroup(source, id),
      ).toBeNull();
    }
    // Only the creation counter may remain for the source.
    const keys = await h.keysUnder(`${h.prefix}:src:${source}:*`);
    expect(keys).toEqual([`${h.prefix}:src:${source}:seq`]);
    const dirty = await store.listDirty(Date.now() + 1000, 1000);
    expect(dirty.filter((d) => d.ref.source === source)).toEqual([]);
    // A live entity is never purged.
    const live = await store.createUser(source, user("alive"));
    expect(await store.purgeTombstone({ source, kind: "user", id: live.resource.id }, 1)).toBe(false);
  });

  it("patches a group of 5,000 members quickly (timing printed)", async () => {
    const source = "big";
    const ids: string[] = [];
    const batch = 250;
    for (let i = 0; i < 5001; i += batch) {
      const created = await Promise.all(
        Array.from({ length: Math.min(batch, 5001 - i) }, (_, j) =>
          store.createUser(source, user(`big-${i + j}`)),
        ),
      );
      ids.push(...created.map((c) => c.resource.id));
    }
    const last = ids.pop()!;
    const t0 = performance.now();
    const g = await store.createGroup(source, group("Everyone"), ids);
    const createMs = performance.now() - t0;
    expect(g.memberCount).toBe(5000);

    const t1 = performance.now();
    const patched = await store.updateGroup(source, g.resource.id, (cur) => ({
      resource: cur.resource,
      members: { add: [last], remove: [ids[0]!] },
    }));
    const patchMs = performance.now() - t1;
    expect(patched.memberCount).toBe(5000);

    const t2 = performance.now();
    await store.updateGroup(source, g.resource.id, (cur) => ({
      resource: cur.resource,
      members: { replace: [...ids.slice(1), last] },
    }));
    const replaceMs = performance.now() - t2;
    console.log(
      `5,000-member group: create ${createMs.toFixed(1)} ms, PATCH add+remove ${patchMs.toFixed(1)} ms, ` +
        `PATCH replace-all ${replaceMs.toFixed(1)} ms`,
    );
    expect((await store.getUser(source, last))?.groups).toEqual([g.resource.id]);
    expect((await store.getUser(source, ids[0]!))?.groups).toEqual([]);
  });
});
