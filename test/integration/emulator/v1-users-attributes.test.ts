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

describe("emulator: bulk user actions", () => {
  it("deactivates, activates and deletes, reporting unknown ids as NOT_FOUND", async () => {
    const a = await createUser(h, "a@example.com");
    const b = await createUser(h, "b@example.com");
    const g = await h.call("POST", "/api/scim/v2/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "G",
      members: [{ value: a }, { value: b }],
    });
    const off = await h.call("POST", "/api/v1/users/bulk", { action: "DEACTIVATE", userIds: [a, "ghost"] });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({
      succeeded: [a],
      failed: [{ userId: "ghost", code: "NOT_FOUND", message: expect.any(String) }],
    });
    expect((await h.call("GET", `/api/scim/v2/Users/${a}`)).body.active).toBe(false);
    await h.call("POST", "/api/v1/users/bulk", { action: "ACTIVATE", userIds: [a] });
    expect((await h.call("GET", `/api/scim/v2/Users/${a}`)).body.active).toBe(true);
    const del = await h.call("POST", "/api/v1/users/bulk", { action: "DELETE", userIds: [b] });
    expect(del.body.succeeded).toEqual([b]);
    expect((await h.call("GET", `/api/scim/v2/Users/${b}`)).status).toBe(404);
    const members = (await h.call("GET", `/api/scim/v2/Groups/${g.body.id}`)).body.members;
    expect(members.map((m: { value: string }) => m.value)).toEqual([a]);
  });

  it("reports injected per-user failures", async () => {
    const a = await createUser(h, "a@example.com");
    h.emulator.drift({ action: "failBulkFor", userId: a, code: "FORBIDDEN" });
    const res = await h.call("POST", "/api/v1/users/bulk", { action: "DELETE", userIds: [a] });
    expect(res.body.failed).toEqual([{ userId: a, code: "FORBIDDEN", message: expect.any(String) }]);
    expect((await h.call("GET", `/api/scim/v2/Users/${a}`)).status).toBe(200);
  });

  it("answers 400 for more than 100 ids, an empty list or an unknown action", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `id-${i}`);
    for (const body of [
      { action: "DELETE", userIds: ids },
      { action: "DELETE", userIds: [] },
      { action: "SUSPEND", userIds: ["x"] },
    ]) {
      const res = await h.call("POST", "/api/v1/users/bulk", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("CONTRACT_VIOLATION");
    }
    expect(h.emulator.violations().filter((v) => v.operation === "bulkUsers")).toHaveLength(3);
  });
});

describe("emulator: user attributes", () => {
  it("creates definitions with integer ids, lists them by type, and refuses duplicates", async () => {
    const dept = await h.call("POST", "/api/v1/user-attributes/", { name: "department", type: "string" });
    expect(dept.status).toBe(201);
    expect(dept.body).toEqual({ id: 1, name: "department", type: "string" });
    await h.call("POST", "/api/v1/user-attributes/", {
      name: "regions",
      type: "string_array",
      displayName: "Regions",
    });
    const dup = await h.call("POST", "/api/v1/user-attributes/", { name: "department", type: "number" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("CONFLICT");
    const arrays = await h.call("GET", "/api/v1/user-attributes/?type=string_array");
    expect(arrays.body.items.map((a: { name: string }) => a.name)).toEqual(["regions"]);
    expect((await h.call("GET", "/api/v1/user-attributes/")).body.items).toHaveLength(2);
  });

  it("updates the displayName and refuses a type change", async () => {
    const { body } = await h.call("POST", "/api/v1/user-attributes/", { name: "level", type: "number" });
    const ok = await h.call("PUT", `/api/v1/user-attributes/${body.id}`, { displayName: "Level" });
    expect(ok.body).toEqual({ id: body.id, name: "level", type: "number", displayName: "Level" });
    const bad = await h.call("PUT", `/api/v1/user-attributes/${body.id}`, {
      displayName: "L",
      type: "string",
    });
    expect(bad.status).toBe(400);
    expect((await h.call("PUT", "/api/v1/user-attributes/999", { displayName: "x" })).status).toBe(404);
  });

  it("stores values whose type matches, removes with null, and answers 404 for unknown user or attribute", async () => {
    const user = await createUser(h, "a@example.com");
    const num = (await h.call("POST", "/api/v1/user-attributes/", { name: "level", type: "number" })).body.id;
    const tags = (await h.call("POST", "/api/v1/user-attributes/", { name: "tags", type: "number_array" }))
      .body.id;
    const put = (attributeId: number, value: unknown, userId = user) =>
      h.call("POST", "/api/v1/user-attribute-values/", { userId, attributeId, value });
    expect((await put(num, 3)).body).toEqual({
      userId: user,
      attributeId: num,
      name: "level",
      type: "number",
      value: 3,
    });
    expect((await put(num, "3")).status).toBe(400);
    expect((await put(tags, ["a"])).status).toBe(400);
    expect((await put(tags, [])).status).toBe(200);
    expect((await put(999, 1)).status).toBe(404);
    expect((await put(num, 1, "nobody")).status).toBe(404);
    const values = await h.call("GET", `/api/v1/user-attribute-values/${user}`);
    expect(values.body.items.map((v: { value: unknown }) => v.value)).toEqual([3, []]);
    await put(num, null);
    expect((await h.call("GET", `/api/v1/user-attribute-values/${user}`)).body.items).toHaveLength(1);
    expect((await h.call("GET", "/api/v1/user-attribute-values/nobody")).status).toBe(404);
  });
});
