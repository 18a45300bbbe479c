import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, GROUP_SCHEMA, type Harness, patch, startHarness } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

const group = (displayName: string, members: string[] = [], extra: Record<string, unknown> = {}) => ({
  schemas: [GROUP_SCHEMA],
  displayName,
  members: members.map((value) => ({ value })),
  ...extra,
});

const memberIds = (body: { members?: Array<{ value: string }> }) => (body.members ?? []).map((m) => m.value);

describe("emulator: SCIM groups", () => {
  it("creates a group with members, reads it, and lists it with and without members", async () => {
    const a = await createUser(h, "a@example.com");
    const b = await createUser(h, "b@example.com");
    const created = await h.call(
      "POST",
      "/api/scim/v2/Groups",
      group("Engineering", [a, b], { externalId: "G1" }),
    );
    expect(created.status).toBe(201);
    const got = await h.call("GET", `/api/scim/v2/Groups/${created.body.id}`);
    expect(got.body).toMatchObject({ displayName: "Engineering", externalId: "G1" });
    expect(memberIds(got.body)).toEqual([a, b]);
    expect(got.body.members[0].display).toBe("a@example.com");

    const listed = await h.call(
      "GET",
      `/api/scim/v2/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}`,
    );
    expect(listed.body.totalResults).toBe(1);
    expect(memberIds(listed.body.Resources[0])).toEqual([a, b]);
    const slim = await h.call("GET", "/api/scim/v2/Groups?excludedAttributes=members");
    expect(slim.body.Resources[0].members).toBeUndefined();
    const byExt = await h.call(
      "GET",
      `/api/scim/v2/Groups?filter=${encodeURIComponent('externalId eq "G1"')}`,
    );
    expect(byExt.body.Resources[0].id).toBe(created.body.id);
  });

  it("answers 409 uniqueness for a taken displayName", async () => {
    await h.call("POST", "/api/scim/v2/Groups", group("Sales"));
    const res = await h.call("POST", "/api/scim/v2/Groups", group("Sales"));
    expect(res.status).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
  });

  it("answers 400 when a member is not a platform user", async () => {
    const res = await h.call("POST", "/api/scim/v2/Groups", group("Ghosts", ["no-such-user"]));
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidValue");
    const g = await h.call("POST", "/api/scim/v2/Groups", group("Real"));
    const p = await h.call(
      "PATCH",
      `/api/scim/v2/Groups/${g.body.id}`,
      patch({ op: "add", path: "members", value: [{ value: "no-such-user" }] }),
    );
    expect(p.status).toBe(400);
  });

  it("adds members with path members and removes with members[value eq ...]", async () => {
    const a = await createUser(h, "a@example.com");
    const b = await createUser(h, "b@example.com");
    const g = await h.call("POST", "/api/scim/v2/Groups", group("Team"));
    const id = g.body.id;
    const add = await h.call(
      "PATCH",
      `/api/scim/v2/Groups/${id}`,
      patch({ op: "add", path: "members", value: [{ value: a }, { value: b }] }),
    );
    expect([200, 204]).toContain(add.status);
    const remove = await h.call(
      "PATCH",
      `/api/scim/v2/Groups/${id}`,
      patch(
        { op: "remove", path: `members[value eq "${a}"]` },
        { op: "replace", path: "displayName", value: "Team 2" },
      ),
    );
    expect([200, 204]).toContain(remove.status);
    const got = await h.call("GET", `/api/scim/v2/Groups/${id}`);
    expect(got.body.displayName).toBe("Team 2");
    expect(memberIds(got.body)).toEqual([b]);
  });

  it("replaces a group with PUT and drops a deleted user from every group", async () => {
    const a = await createUser(h, "a@example.com");
    const b = await createUser(h, "b@example.com");
    const g1 = (await h.call("POST", "/api/scim/v2/Groups", group("One", [a]))).body.id;
    const g2 = (await h.call("POST", "/api/scim/v2/Groups", group("Two", [a, b]))).body.id;
    const put = await h.call("PUT", `/api/scim/v2/Groups/${g1}`, group("One", [b]));
    expect(put.status).toBe(200);
    expect(memberIds(put.body)).toEqual([b]);
    await h.call("DELETE", `/api/scim/v2/Users/${b}`);
    expect(memberIds((await h.call("GET", `/api/scim/v2/Groups/${g1}`)).body)).toEqual([]);
    expect(memberIds((await h.call("GET", `/api/scim/v2/Groups/${g2}`)).body)).toEqual([a]);
  });

  it("deletes with 204 and then answers 404", async () => {
    const g = (await h.call("POST", "/api/scim/v2/Groups", group("Temp"))).body.id;
    expect((await h.call("DELETE", `/api/scim/v2/Groups/${g}`)).status).toBe(204);
    expect((await h.call("DELETE", `/api/scim/v2/Groups/${g}`)).status).toBe(404);
    expect((await h.call("GET", `/api/scim/v2/Groups/${g}`)).status).toBe(404);
  });

  it("replaces members with op replace and removes listed or all members with path members", async () => {
    const [a, b, c] = [
      await createUser(h, "a@example.com"),
      await createUser(h, "b@example.com"),
      await createUser(h, "c@example.com"),
    ];
    const id = (await h.call("POST", "/api/scim/v2/Groups", group("Team", [a]))).body.id;
    const url = `/api/scim/v2/Groups/${id}`;
    await h.call(
      "PATCH",
      url,
      patch({ op: "replace", path: "members", value: [{ value: b }, { value: c }] }),
    );
    expect(memberIds((await h.call("GET", url)).body)).toEqual([b, c]);
    await h.call("PATCH", url, patch({ op: "remove", path: "members", value: [{ value: b }] }));
    expect(memberIds((await h.call("GET", url)).body)).toEqual([c]);
    await h.call("PATCH", url, patch({ op: "remove", path: "members" }));
    expect(memberIds((await h.call("GET", url)).body)).toEqual([]);
  });
});
