import { afterAll, describe, expect, it } from "vitest";
import { entityKey, sourceBase } from "../../../src/directory/directory-keys.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { PreconditionFailedError, ServiceUnavailableError } from "../../../src/errors.js";
import { applyGroupPatch, groupPatchNeedsMembers } from "../../../src/scim/patch.js";
import type { PatchOperation } from "../../../src/scim/scim-types.js";
import { createHarness, group, testMatcher, user } from "./directory-fixture.js";

/**
 * Many writers of one entity at once (Entra provisions a group's memberships in parallel): every
 * read-modify-write that loses the generation race runs again on the latest state, after a short
 * random backoff, so all of them are applied; none answers 503 under realistic contention. A write
 * with If-Match is never retried (412), and the 503 stays for contention that never lets up.
 */
const h = createHarness();
const { store } = h;

afterAll(() => h.close());

const N = 40;

async function users(source: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await store.createUser(source, user(`c${i}`))).resource.id);
  return ids;
}

/** The operations of an Entra membership PATCH adding one user. */
function addMember(userId: string): PatchOperation[] {
  return [{ op: "add", path: "members", value: [{ value: userId }] }];
}

describe("concurrent writes to one entity", () => {
  it(`${N} concurrent group PATCHes, each adding a different member, all apply`, async () => {
    const ids = await users("cw1", N);
    const g = await store.createGroup("cw1", group("Parallel"), []);
    const gid = g.resource.id;
    let mutations = 0;
    const results = await Promise.allSettled(
      ids.map((uid) => {
        const operations = addMember(uid);
        // As routes/scim/group-handlers.ts calls it for a PATCH.
        return store.updateGroup(
          "cw1",
          gid,
          (current) => {
            mutations += 1;
            return applyGroupPatch(current.resource, current.members, operations);
          },
          { withMembers: groupPatchNeedsMembers(operations) },
        );
      }),
    );
    const failed = results.filter((r) => r.status === "rejected");
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect(mutations).toBeGreaterThan(N); // the writers did race

    const after = await store.getGroup("cw1", gid, { withMembers: true });
    expect(after?.members?.map((m) => m.value).sort()).toEqual([...ids].sort());
    expect(after?.memberCount).toBe(N);
    expect(after?.generation).toBe(g.generation + N);
    const generations = results.map(
      (r) => (r as PromiseFulfilledResult<{ generation: number }>).value.generation,
    );
    expect(new Set(generations).size).toBe(N); // each write had a generation of its own
    for (const uid of ids) expect((await store.getUser("cw1", uid))?.groups).toEqual([gid]);
  });

  it(`${N} concurrent user updates, each setting a different attribute, all apply`, async () => {
    const created = await store.createUser("cw2", user("busy.user"));
    const id = created.resource.id;
    const results = await Promise.allSettled(
      Array.from({ length: N }, (_, i) =>
        store.updateUser("cw2", id, (current) => ({ ...current.resource, [`attr${i}`]: `value${i}` })),
      ),
    );
    const failed = results.filter((r) => r.status === "rejected");
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);

    const after = await store.getUser("cw2", id);
    for (let i = 0; i < N; i++) expect(after?.resource[`attr${i}`]).toBe(`value${i}`);
    expect(after?.resource.userName).toBe("busy.user");
    expect(after?.generation).toBe(created.generation + N);
  });

  it("never retries a write with If-Match: one wins, the others answer 412, each mutate runs once", async () => {
    const created = await store.createUser("cw3", user("guarded.user"));
    const id = created.resource.id;
    let mutations = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        store.updateUser(
          "cw3",
          id,
          (current) => {
            mutations += 1;
            return { ...current.resource, [`attr${i}`]: i };
          },
          { ifMatch: created.meta.version },
        ),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    expect(rejected).toHaveLength(9);
    for (const r of rejected) expect(r.reason).toBeInstanceOf(PreconditionFailedError);
    expect(mutations).toBe(10);
    expect((await store.getUser("cw3", id))?.generation).toBe(created.generation + 1);
  });

  it("still answers 503 when every attempt loses the race, after the attempt budget, writing nothing", async () => {
    const starved = new RedisDirectoryStore({
      redis: h.redis,
      prefix: h.prefix,
      notify: async () => {},
      matchesFilter: testMatcher,
      maxAttempts: 4,
    });
    const created = await store.createUser("cw4", user("starved.user"));
    const id = created.resource.id;
    const key = entityKey(sourceBase(h.prefix, "cw4"), "user", id);
    let mutations = 0;
    const err = await starved
      .updateUser("cw4", id, (current) => {
        mutations += 1;
        // Another writer bumps the generation between this attempt's read and its write
        // (same connection, so it reaches Redis first).
        void h.redis.hincrby(key, "gen", 1);
        return { ...current.resource, nickName: "never" };
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).message).toBe("Too many concurrent writes to this user; retry");
    expect(mutations).toBe(4);
    const after = await store.getUser("cw4", id);
    expect(after?.resource.nickName).toBeUndefined();
    expect(after?.generation).toBe(created.generation + 4);
  });
});
