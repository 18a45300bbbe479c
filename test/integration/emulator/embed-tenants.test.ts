import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

const base = "/api/v1/embed-tenants";

/** Follows endCursor until hasNextPage is false. */
async function collect(path: string, first: number): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let after: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await h.call(
      "GET",
      `${path}${sep}first=${first}${after ? `&after=${encodeURIComponent(after)}` : ""}`,
    );
    expect(res.status).toBe(200);
    items.push(...res.body.items);
    if (!res.body.pageInfo.hasNextPage) return items;
    after = res.body.pageInfo.endCursor;
  }
  throw new Error("too many pages");
}

describe("emulator: embed tenants", () => {
  it("creates the tenant with its first group and lists tenants and groups by cursor", async () => {
    expect((await h.call("GET", `${base}/`)).body).toEqual({
      items: [],
      pageInfo: { hasNextPage: false, endCursor: null },
    });
    const g = await h.call("POST", `${base}/acme/groups`, { name: "analysts", description: "read only" });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ name: "analysts", description: "read only", memberCount: 0 });
    for (const name of ["b", "c", "d", "e"]) await h.call("POST", `${base}/acme/groups`, { name });
    await h.call("POST", `${base}/globex/groups`, { name: "x" });
    expect((await collect(`${base}/`, 1)).map((t) => t.name)).toEqual(["acme", "globex"]);
    const groups = await collect(`${base}/acme/groups`, 2);
    expect(groups.map((x) => x.name)).toEqual(["analysts", "b", "c", "d", "e"]);
  });

  it("answers 409 for a group name taken in the tenant, but not in another tenant", async () => {
    await h.call("POST", `${base}/acme/groups`, { name: "admins" });
    expect((await h.call("POST", `${base}/acme/groups`, { name: "admins" })).status).toBe(409);
    expect((await h.call("POST", `${base}/other/groups`, { name: "admins" })).status).toBe(201);
    const b = await h.call("POST", `${base}/acme/groups`, { name: "b" });
    expect((await h.call("PATCH", `${base}/acme/groups/${b.body.id}`, { name: "admins" })).status).toBe(409);
  });

  it("gets, renames and deletes a group", async () => {
    const { body } = await h.call("POST", `${base}/acme/groups`, { name: "old" });
    const renamed = await h.call("PATCH", `${base}/acme/groups/${body.id}`, {
      name: "new",
      description: "d",
    });
    expect(renamed.body).toMatchObject({ id: body.id, name: "new", description: "d" });
    expect((await h.call("GET", `${base}/acme/groups/${body.id}`)).body.name).toBe("new");
    expect((await h.call("DELETE", `${base}/acme/groups/${body.id}`)).status).toBe(204);
    expect((await h.call("GET", `${base}/acme/groups/${body.id}`)).status).toBe(404);
    expect((await h.call("DELETE", `${base}/acme/groups/${body.id}`)).status).toBe(404);
    expect((await h.call("GET", `${base}/nope/groups`)).status).toBe(404);
  });

  it("adds members by externalId (creating embed users once), removes them, and pages members", async () => {
    const { body } = await h.call("POST", `${base}/acme/groups`, { name: "g" });
    const path = `${base}/acme/groups/${body.id}/users`;
    const users = Array.from({ length: 7 }, (_, i) => ({ externalId: `e${i}`, email: `e${i}@example.com` }));
    const added = await h.call("POST", path, { users });
    expect(added.body).toEqual({ memberCount: 7 });
    expect((await h.call("POST", path, { users: users.slice(0, 2) })).body).toEqual({ memberCount: 7 });
    const removed = await h.call("DELETE", path, { externalIds: ["e1", "not-a-member"] });
    expect(removed.status).toBe(204);
    const members = await collect(path, 3);
    expect(members.map((m) => m.externalId)).toEqual(["e0", "e2", "e3", "e4", "e5", "e6"]);
    expect(members[0]).toMatchObject({ id: expect.any(String), email: "e0@example.com" });
    const embedUsers = await collect(`${base}/acme/users`, 100);
    expect(embedUsers).toHaveLength(7);
    expect((await h.call("GET", `${base}/acme/groups/${body.id}`)).body.memberCount).toBe(6);
  });

  it("refuses more than 100 members a call", async () => {
    const { body } = await h.call("POST", `${base}/acme/groups`, { name: "g" });
    const users = Array.from({ length: 101 }, (_, i) => ({ externalId: `e${i}` }));
    const res = await h.call("POST", `${base}/acme/groups/${body.id}/users`, { users });
    expect(res.status).toBe(400);
    const ids = users.map((u) => u.externalId);
    expect(
      (await h.call("DELETE", `${base}/acme/groups/${body.id}/users`, { externalIds: ids })).status,
    ).toBe(400);
  });

  it("deletes a tenant without a trailing slash; with one it is a contract violation", async () => {
    await h.call("POST", `${base}/acme/groups`, { name: "g" });
    const slashed = await h.call("DELETE", `${base}/acme/`);
    expect(slashed.status).toBe(404);
    expect(h.emulator.violations()[0]?.reason).toContain("trailing slash");
    expect((await h.call("DELETE", `${base}/acme`)).status).toBe(204);
    expect((await h.call("DELETE", `${base}/acme`)).status).toBe(404);
    expect((await h.call("GET", `${base}/`)).body.items).toEqual([]);
  });

  it("rejects a cursor it never gave out and a tenant name outside the contract's pattern", async () => {
    expect((await h.call("GET", `${base}/?after=bogus`)).status).toBe(400);
    expect((await h.call("POST", `${base}/Bad_Name/groups`, { name: "g" })).status).toBe(400);
    expect(h.emulator.violations().map((v) => v.operation)).toEqual(["listEmbedTenants", "createEmbedGroup"]);
  });
});
