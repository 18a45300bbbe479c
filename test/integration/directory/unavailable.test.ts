import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { directoryRedisOptions, RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { ServiceUnavailableError } from "../../../src/errors.js";
import { cmp, group, newPrefix, testMatcher, user } from "./directory-fixture.js";

// A client pointed at a closed port, created the way the SCIM layer must create it.
const redis = new Redis({
  host: "127.0.0.1",
  port: 1,
  ...directoryRedisOptions,
  connectTimeout: 500,
  retryStrategy: () => 1000,
});
redis.on("error", () => {}); // expected: connection refused
const store = new RedisDirectoryStore({
  redis,
  prefix: newPrefix(),
  notify: async () => {},
  matchesFilter: testMatcher,
});
const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const ref = { source: "s", kind: "user" as const, id: ID };

afterAll(() => {
  redis.disconnect();
});

const calls: [string, () => Promise<unknown>][] = [
  ["createUser", () => store.createUser("s", user("a"))],
  ["getUser", () => store.getUser("s", ID)],
  ["replaceUser", () => store.replaceUser("s", ID, user("a"), { ifMatch: 'W/"1"' })],
  ["updateUser", () => store.updateUser("s", ID, (c) => c.resource)],
  ["deleteUser", () => store.deleteUser("s", ID)],
  ["listUsers", () => store.listUsers("s", { startIndex: 1, count: 10 })],
  [
    "listUsers eq",
    () => store.listUsers("s", { filter: cmp("userName", "eq", "a"), startIndex: 1, count: 10 }),
  ],
  [
    "listUsers scan",
    () => store.listUsers("s", { filter: cmp("title", "co", "a"), startIndex: 1, count: 10 }),
  ],
  ["createGroup", () => store.createGroup("s", group("g"), [])],
  ["getGroup", () => store.getGroup("s", ID, { withMembers: true })],
  ["replaceGroup", () => store.replaceGroup("s", ID, group("g"), [])],
  ["updateGroup", () => store.updateGroup("s", ID, (c) => ({ resource: c.resource }))],
  ["deleteGroup", () => store.deleteGroup("s", ID)],
  ["listGroups", () => store.listGroups("s", { startIndex: 1, count: 10 })],
  ["snapshotUser", () => store.snapshotUser("s", ID)],
  ["snapshotGroup", () => store.snapshotGroup("s", ID)],
  ["markClean", () => store.markClean(ref, 1)],
  ["purgeTombstone", () => store.purgeTombstone(ref, 1)],
  ["listDirty", () => store.listDirty(Date.now(), 10)],
  ["countDirty", () => store.countDirty()],
  ["markDirty", () => store.markDirty(ref)],
  [
    "scanIds",
    async () => {
      for await (const _ of store.scanIds("s", "user")) {
        // no page expected
      }
    },
  ],
  ["countEntities", () => store.countEntities("s", "user")],
  ["findUserId", () => store.findUserId("s", { userName: "a" })],
  ["findGroupId", () => store.findGroupId("s", { displayName: "a" })],
];

describe("when Redis is unreachable", () => {
  it.each(calls)("%s answers 503 at once", async (_name, call) => {
    const started = performance.now();
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).status).toBe(503);
    expect((err as ServiceUnavailableError).retryAfter).toBe(1);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
