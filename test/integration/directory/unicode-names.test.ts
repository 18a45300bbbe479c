import { afterAll, describe, expect, it } from "vitest";
import { deletedUserKeys, sourceBase, uniqueIndexKey } from "../../../src/directory/directory-keys.js";
import { ConflictError } from "../../../src/errors.js";
import { cmp, createHarness, user } from "./directory-fixture.js";

/**
 * userName and group displayName are case-insensitive (RFC 7643 §4.1.1, §4.2): the directory keys
 * them case-folded and in NFC (case-fold.ts), so a name sent composed and one sent decomposed are
 * one name. Entries indexed before folding (plain lower case) are still found and still unique.
 */
const h = createHarness();
const { store } = h;
afterAll(() => h.close());

const composed = "Fran\u00e7ois.L\u00e9ger@example.com";
const decomposed = composed.normalize("NFD");

/** Moves a user's index entry to the key it had before folding (plain lower case), as old data has it. */
async function indexAsBefore(source: string, id: string, userName: string): Promise<void> {
  const base = sourceBase(h.prefix, source);
  const index = uniqueIndexKey(base, "user", "name");
  const folded = userName.toLowerCase().normalize("NFC");
  expect(await h.redis.hget(index, folded)).toBe(id);
  await h.redis.hdel(index, folded);
  await h.redis.hset(index, userName.toLowerCase(), id);
  await h.redis.hset(`${base}:user:${id}`, "iu", userName.toLowerCase());
}

describe("names that differ only in Unicode normalisation", () => {
  it("are one name for uniqueness, lookups and deletion records; the name is kept as sent", async () => {
    const created = await store.createUser("uni", user(decomposed));
    expect(created.resource.userName).toBe(decomposed);
    await expect(store.createUser("uni", user(composed.toUpperCase()))).rejects.toBeInstanceOf(ConflictError);
    expect(await store.findUserId("uni", { userName: composed })).toBe(created.resource.id);
    const listed = await store.listUsers("uni", {
      filter: cmp("userName", "eq", composed),
      startIndex: 1,
      count: 10,
    });
    expect(listed.items.map((u) => u.resource.id)).toEqual([created.resource.id]);

    await store.deleteUser("uni", created.resource.id, { deletedAt: 1_000 });
    const keys = deletedUserKeys(h.prefix, "uni", { userName: composed });
    expect((await h.redis.mget(...keys)).filter((v) => v !== null)).toEqual(["1000"]);
  });

  it("a user indexed before folding is still found and still unique, and moves to the folded key on its next write", async () => {
    const created = await store.createUser("legacy", user(decomposed, { displayName: "Before" }));
    const id = created.resource.id;
    await indexAsBefore("legacy", id, decomposed);
    // As sent before: the same form finds it and is refused as a duplicate.
    expect(await store.findUserId("legacy", { userName: decomposed })).toBe(id);
    const listed = await store.listUsers("legacy", {
      filter: cmp("userName", "eq", decomposed),
      startIndex: 1,
      count: 10,
    });
    expect(listed.items.map((u) => u.resource.id)).toEqual([id]);
    await expect(store.createUser("legacy", user(decomposed))).rejects.toBeInstanceOf(ConflictError);
    // Its next write re-indexes it: then every form is the one name.
    await store.updateUser("legacy", id, (current) => ({ ...current.resource, displayName: "After" }));
    await expect(store.createUser("legacy", user(composed))).rejects.toBeInstanceOf(ConflictError);
    expect(await store.findUserId("legacy", { userName: composed.toUpperCase() })).toBe(id);
    const index = uniqueIndexKey(sourceBase(h.prefix, "legacy"), "user", "name");
    expect(await h.redis.hget(index, decomposed.toLowerCase())).toBeNull();
  });
});
