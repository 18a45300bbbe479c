import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, type Harness, startHarness } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${h.url}/_emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe("emulator: inspection and control", () => {
  it("seeds users, groups, attributes and embed groups over HTTP without a token", async () => {
    const seeded = await control("POST", "seed", {
      users: [
        { userName: "a@example.com", externalId: "A" },
        { userName: "b@example.com", active: false },
      ],
      groups: [{ displayName: "G", members: ["a@example.com"] }],
      attributes: [{ name: "level", type: "number" }],
      attributeValues: [{ userId: "b@example.com", name: "level", value: 1 }],
      embedGroups: [{ tenant: "acme", name: "viewers", members: [{ externalId: "A" }] }],
    });
    expect(seeded.status).toBe(200);
    expect(seeded.body.users).toHaveLength(2);
    const state = (await control("GET", "state")).body;
    expect(state.users.map((u: { userName: string }) => u.userName)).toEqual([
      "a@example.com",
      "b@example.com",
    ]);
    expect(state.groups[0]).toMatchObject({ displayName: "G", members: [seeded.body.users[0]] });
    expect(state.attributes).toEqual([{ id: 1, name: "level", type: "number" }]);
    expect(state.attributeValues).toEqual([
      { userId: seeded.body.users[1], attributeId: 1, name: "level", type: "number", value: 1 },
    ]);
    expect(state.embedTenants[0]).toMatchObject({
      name: "acme",
      groups: [{ name: "viewers", members: ["A"] }],
    });
    // Seeded data is visible through the contract API too.
    const listed = await h.call("GET", "/api/scim/v2/Users");
    expect(listed.body.totalResults).toBe(2);
  });

  it("logs requests with operation names, counts per operation and write calls", async () => {
    const id = await createUser(h, "a@example.com");
    await h.call("GET", `/api/scim/v2/Users/${id}`);
    await h.call("POST", "/api/v1/users/bulk", { action: "DEACTIVATE", userIds: [id] });
    const { body } = await control("GET", "requests");
    expect(body.requests.map((r: { operation: string }) => r.operation)).toEqual([
      "createUser",
      "getUser",
      "bulkUsers",
    ]);
    expect(body.requests[0]).toMatchObject({ method: "POST", path: "/api/scim/v2/Users", status: 201 });
    expect(body.counters.writes).toBe(2);
    expect(body.counters.total).toBe(3);
    expect(body.counters.byOperation.bulkUsers).toEqual({ calls: 1, byStatus: { "200": 1 } });
    expect(h.emulator.count("getUser")).toBe(1);
  });

  it("keeps the request log bounded while counters stay exact", async () => {
    const small = await startHarness({ logSize: 5 });
    for (let i = 0; i < 12; i++) await small.call("GET", "/api/v1/user-attributes/");
    expect(small.emulator.requests()).toHaveLength(5);
    expect(small.emulator.requests()[4]?.seq).toBe(12);
    expect(small.emulator.count("listUserAttributes")).toBe(12);
    await small.close();
  });

  it("changes state behind the bridge's back for drift tests", async () => {
    const { body } = await control("POST", "seed", {
      users: [{ userName: "a@example.com" }, { userName: "b@example.com" }],
      groups: [{ displayName: "G", members: ["a@example.com", "b@example.com"] }, { displayName: "H" }],
      attributes: [{ name: "level", type: "number" }],
    });
    const [a, b] = body.users;
    const [g, gh] = body.groups;
    expect(
      (await control("POST", "drift", { action: "setUserActive", userId: a, active: false })).status,
    ).toBe(200);
    await control("POST", "drift", { action: "removeGroupMember", groupId: g, userId: b });
    await control("POST", "drift", { action: "setAttributeValue", userId: a, attributeId: 1, value: 9 });
    await control("POST", "drift", { action: "deleteGroup", groupId: gh });
    const orphan = await control("POST", "drift", {
      action: "addOrphanUser",
      user: { userName: "orphan@example.com" },
    });
    expect(orphan.body.id).toEqual(expect.any(String));
    const state = h.emulator.state();
    expect(state.users.find((u) => u.id === a)?.active).toBe(false);
    expect(state.groups).toEqual([expect.objectContaining({ id: g, members: [a] })]);
    expect(state.attributeValues).toEqual([expect.objectContaining({ userId: a, value: 9 })]);
    expect(state.users).toHaveLength(3);
    expect((await control("POST", "drift", { action: "deleteGroup", groupId: "nope" })).status).toBe(404);
    // Drift does not count as traffic.
    expect(h.emulator.counters().total).toBe(0);
  });

  it("lists violations and resets everything", async () => {
    await h.call("GET", "/api/v1/oops");
    expect((await control("GET", "violations")).body.violations).toHaveLength(1);
    expect((await control("POST", "reset")).status).toBe(204);
    expect((await control("GET", "violations")).body.violations).toEqual([]);
    expect((await control("GET", "requests")).body.requests).toEqual([]);
    expect((await control("GET", "nothing")).status).toBe(404);
  });

  it("repeats ids for the same seed after a reset", async () => {
    const first = await createUser(h, "a@example.com");
    h.emulator.reset();
    expect(await createUser(h, "a@example.com")).toBe(first);
  });
});
