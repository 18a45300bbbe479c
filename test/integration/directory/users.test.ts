import { afterAll, describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../../../src/errors.js";
import { createHarness, user } from "./directory-fixture.js";

const h = createHarness();
const { store } = h;

afterAll(() => h.close());

describe("users in the directory", () => {
  it("creates a user with a bridge id, meta and generation 1, and reads it back", async () => {
    const created = await store.createUser("src-a", user("Alice.Smith@Example.com", { externalId: "ext-1" }));
    expect(created.resource.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.resource.userName).toBe("Alice.Smith@Example.com");
    expect(created.generation).toBe(1);
    expect(created.meta.version).toBe('W/"1"');
    expect(created.meta.resourceType).toBe("User");
    expect(Date.parse(created.meta.created)).not.toBeNaN();
    expect(created.groups).toEqual([]);
    const read = await store.getUser("src-a", created.resource.id);
    expect(read).toEqual(created);
    expect(h.notified.at(-1)).toEqual([{ source: "src-a", kind: "user", id: created.resource.id }]);
  });

  it("drops server-computed and write-only attributes from the stored document", async () => {
    const created = await store.createUser(
      "src-a",
      user("drop.me", {
        id: "client-id",
        password: "s3cret",
        groups: [{ value: "x" }],
        meta: { version: "x" },
      }),
    );
    const read = await store.getUser("src-a", created.resource.id);
    expect(read?.resource.id).toBe(created.resource.id);
    expect(read?.resource).not.toHaveProperty("password");
    expect(read?.resource).not.toHaveProperty("meta");
    expect(read?.groups).toEqual([]);
  });

  it("refuses a userName that differs only in case, and keeps the original case byte for byte", async () => {
    const first = await store.createUser("src-a", user("Bob.ÄRNOLD@x.io"));
    await expect(store.createUser("src-a", user("bob.ärnold@X.IO"))).rejects.toMatchObject({
      status: 409,
      scimType: "uniqueness",
    });
    await expect(store.createUser("src-a", user("BOB.ÄRNOLD@X.IO"))).rejects.toBeInstanceOf(ConflictError);
    expect((await store.getUser("src-a", first.resource.id))?.resource.userName).toBe("Bob.ÄRNOLD@x.io");
    expect(await store.findUserId("src-a", { userName: "BOB.ärnold@x.io" })).toBe(first.resource.id);
  });

  it("lets exactly one of several concurrent creates of the same userName win", async () => {
    const results = await Promise.allSettled(
      ["Race", "RACE", "race", "rAce", "racE"].map((name) => store.createUser("src-r", user(name))),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect(r.reason).toBeInstanceOf(ConflictError);
    }
    expect(await store.countEntities("src-r", "user")).toBe(1);
  });

  it("refuses a duplicate externalId, and a rename onto another user's userName", async () => {
    const carol = await store.createUser("src-a", user("carol", { externalId: "ext-carol" }));
    await expect(
      store.createUser("src-a", user("carol2", { externalId: "ext-carol" })),
    ).rejects.toMatchObject({
      status: 409,
    });
    const dave = await store.createUser("src-a", user("dave"));
    await expect(store.replaceUser("src-a", dave.resource.id, user("CAROL"))).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(
      store.updateUser("src-a", dave.resource.id, (cur) => ({ ...cur.resource, externalId: "ext-carol" })),
    ).rejects.toBeInstanceOf(ConflictError);
    // Dave is unchanged after the refused writes.
    const read = await store.getUser("src-a", dave.resource.id);
    expect(read?.generation).toBe(1);
    expect(read?.resource.userName).toBe("dave");
    // A user may keep its own userName in another case.
    const renamed = await store.replaceUser(
      "src-a",
      carol.resource.id,
      user("Carol", { externalId: "ext-carol" }),
    );
    expect(renamed.resource.userName).toBe("Carol");
  });

  it("bumps generation and version on every write, and frees the old userName on rename", async () => {
    const eve = await store.createUser("src-a", user("eve"));
    const id = eve.resource.id;
    const second = await store.replaceUser("src-a", id, user("eve.new", { displayName: "Eve" }));
    expect(second.generation).toBe(2);
    expect(second.meta.version).toBe('W/"2"');
    expect(second.meta.created).toBe(eve.meta.created);
    const third = await store.updateUser("src-a", id, (cur) => ({ ...cur.resource, active: false }));
    expect(third.generation).toBe(3);
    expect(third.resource.active).toBe(false);
    expect(third.resource.displayName).toBe("Eve");
    expect(await store.findUserId("src-a", { userName: "eve" })).toBeNull();
    const other = await store.createUser("src-a", user("EVE"));
    expect(other.resource.id).not.toBe(id);
  });

  it("honours If-Match on replace, patch and delete", async () => {
    const frank = await store.createUser("src-a", user("frank"));
    const id = frank.resource.id;
    await expect(store.replaceUser("src-a", id, user("frank"), { ifMatch: 'W/"9"' })).rejects.toBeInstanceOf(
      PreconditionFailedError,
    );
    await expect(
      store.updateUser("src-a", id, (cur) => cur.resource, { ifMatch: 'W/"2"' }),
    ).rejects.toMatchObject({ status: 412 });
    const ok = await store.replaceUser("src-a", id, user("frank", { nickName: "f" }), {
      ifMatch: frank.meta.version,
    });
    expect(ok.generation).toBe(2);
    const patched = await store.updateUser("src-a", id, (cur) => ({ ...cur.resource, title: "x" }), {
      ifMatch: `W/"1", ${ok.meta.version}`,
    });
    expect(patched.generation).toBe(3);
    await expect(store.deleteUser("src-a", id, { ifMatch: ok.meta.version })).rejects.toMatchObject({
      status: 412,
    });
    await store.deleteUser("src-a", id, { ifMatch: "*" });
    expect(await store.getUser("src-a", id)).toBeNull();
  });

  it("answers 404 for unknown and deleted users", async () => {
    await expect(store.replaceUser("src-a", "nope", user("x"))).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.updateUser("src-a", "nope", (c) => c.resource)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.deleteUser("src-a", "nope")).rejects.toBeInstanceOf(NotFoundError);
    const gina = await store.createUser("src-a", user("gina"));
    await store.deleteUser("src-a", gina.resource.id);
    await expect(store.deleteUser("src-a", gina.resource.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.replaceUser("src-a", gina.resource.id, user("gina"))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("treats ids that are not store ids as unknown, never as other keys of the layout", async () => {
    await store.createUser("src-k", user("layout"));
    for (const id of ["ids", "idx:userName", "x:groups", "seq"]) {
      expect(await store.getUser("src-k", id)).toBeNull();
      expect(await store.snapshotUser("src-k", id)).toBeNull();
      await expect(store.replaceUser("src-k", id, user("other"))).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.deleteUser("src-k", id)).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.purgeTombstone({ source: "src-k", kind: "user", id }, 1)).toBe(false);
    }
    expect(await store.countEntities("src-k", "user")).toBe(1);
  });

  it("frees a deleted user's userName and externalId at once for a new user with a new id", async () => {
    const hank = await store.createUser("src-a", user("hank", { externalId: "ext-hank" }));
    await store.deleteUser("src-a", hank.resource.id);
    const again = await store.createUser("src-a", user("Hank", { externalId: "ext-hank" }));
    expect(again.resource.id).not.toBe(hank.resource.id);
    expect(await store.findUserId("src-a", { externalId: "ext-hank" })).toBe(again.resource.id);
  });

  it("retries a read-modify-write that loses a race, so no update is lost", async () => {
    const ivan = await store.createUser("src-a", user("ivan", { counter: 0 }));
    const id = ivan.resource.id;
    await Promise.all(
      Array.from({ length: 4 }, () =>
        store.updateUser("src-a", id, (cur) => ({
          ...cur.resource,
          counter: Number(cur.resource.counter) + 1,
        })),
      ),
    );
    const read = await store.getUser("src-a", id);
    expect(read?.resource.counter).toBe(4);
    expect(read?.generation).toBe(5);
  });

  it("keeps two sources apart: same userName in both, no reads across", async () => {
    const a = await store.createUser("iso-a", user("same.name", { externalId: "same-ext" }));
    const b = await store.createUser("iso-b", user("same.name", { externalId: "same-ext" }));
    expect(a.resource.id).not.toBe(b.resource.id);
    expect(await store.getUser("iso-b", a.resource.id)).toBeNull();
    await expect(store.deleteUser("iso-b", a.resource.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.findUserId("iso-a", { externalId: "same-ext" })).toBe(a.resource.id);
    expect(await store.findUserId("iso-b", { userName: "SAME.NAME" })).toBe(b.resource.id);
    expect(await store.countEntities("iso-a", "user")).toBe(1);
    const listed = await store.listUsers("iso-b", { startIndex: 1, count: 10 });
    expect(listed.items.map((u) => u.resource.id)).toEqual([b.resource.id]);
  });

  it("findUserId tries externalId first, then userName", async () => {
    const jo = await store.createUser("src-f", user("jo", { externalId: "ext-jo" }));
    const kim = await store.createUser("src-f", user("kim"));
    expect(await store.findUserId("src-f", { externalId: "ext-jo", userName: "kim" })).toBe(jo.resource.id);
    expect(await store.findUserId("src-f", { externalId: "ext-unknown", userName: "KIM" })).toBe(
      kim.resource.id,
    );
    expect(await store.findUserId("src-f", { externalId: "EXT-JO" })).toBeNull();
    expect(await store.findUserId("src-f", {})).toBeNull();
  });
});
