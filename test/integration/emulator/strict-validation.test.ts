import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { contractOperations, responseProblem } from "../../../src/platform/emulator/contract-operations.js";
import { createUser, type Harness, patch, startHarness } from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

describe("emulator: strict contract checks", () => {
  it("records a body that breaks the schema as a violation and answers a SCIM 400", async () => {
    const res = await h.call("POST", "/api/scim/v2/Users", { userName: "no-schemas@example.com" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "400", scimType: "invalidSyntax" });
    expect(h.emulator.violations()).toEqual([
      expect.objectContaining({
        operation: "createUser",
        method: "POST",
        reason: expect.stringContaining("schemas"),
      }),
    ]);
    expect(h.emulator.count("createUser")).toBe(1);
    expect(h.emulator.state().users).toEqual([]);
  });

  it("refuses PatchOp op names that are not lower case", async () => {
    const id = await createUser(h, "a@example.com");
    const res = await h.call(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch({ op: "Replace", path: "active", value: false }),
    );
    expect(res.status).toBe(400);
    expect(h.emulator.violations()[0]?.operation).toBe("patchUser");
  });

  it("refuses count above 100, unknown query parameters and unsupported filters", async () => {
    expect((await h.call("GET", "/api/scim/v2/Users?count=101")).status).toBe(400);
    expect((await h.call("GET", "/api/scim/v2/Users?sortBy=userName")).status).toBe(400);
    expect(
      (await h.call("GET", `/api/scim/v2/Users?filter=${encodeURIComponent('userName sw "a"')}`)).status,
    ).toBe(400);
    expect((await h.call("GET", "/api/v1/embed-tenants/?first=101")).status).toBe(400);
    expect(h.emulator.violations()).toHaveLength(4);
  });

  it("records unknown paths, a missing trailing slash and a wrong method", async () => {
    expect((await h.call("GET", "/api/v1/nothing-here")).status).toBe(404);
    expect((await h.call("GET", "/api/v1/user-attributes")).status).toBe(404);
    expect((await h.call("DELETE", "/api/v1/users/bulk")).status).toBe(405);
    const reasons = h.emulator.violations().map((v) => v.reason);
    expect(reasons[1]).toContain("with a trailing slash");
    expect(reasons).toHaveLength(3);
    expect(h.emulator.counters().byOperation.unknown?.calls).toBe(3);
  });

  it("refuses a body that is not JSON or has no JSON content type", async () => {
    const bad = await h.call("POST", "/api/v1/user-attributes/", "{not json", {
      contentType: "application/json",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("CONTRACT_VIOLATION");
    const text = await h.call("POST", "/api/v1/user-attributes/", '{"name":"a","type":"string"}', {
      contentType: "text/plain",
    });
    expect(text.status).toBe(400);
    expect((await h.call("POST", "/api/v1/user-attributes/")).status).toBe(400);
    expect(h.emulator.violations()).toHaveLength(3);
  });

  it("refuses an integer query parameter written as a decimal, and a body the operation takes none of", async () => {
    expect((await h.call("GET", "/api/scim/v2/Users?count=100.0")).status).toBe(400);
    expect((await h.call("GET", "/api/scim/v2/Users?startIndex=1.5")).status).toBe(400);
    expect((await h.call("GET", "/api/scim/v2/Users?count=100")).status).toBe(200);
    const id = await createUser(h, "body@example.com");
    expect((await h.call("DELETE", `/api/scim/v2/Users/${id}`, { schemas: [] })).status).toBe(400);
    const reasons = h.emulator.violations().map((v) => v.reason);
    expect(reasons[0]).toContain("must be an integer");
    expect(reasons[2]).toContain("deleteUser takes no request body");
    expect(reasons).toHaveLength(3);
    expect(h.emulator.state().users).toHaveLength(1);
  });

  it("refuses a non-integer attribute id in the path", async () => {
    expect((await h.call("PUT", "/api/v1/user-attributes/abc", { displayName: "x" })).status).toBe(400);
    expect(h.emulator.violations()[0]?.operation).toBe("updateUserAttribute");
  });

  it("does not record a violation for a well-formed call that fails on state", async () => {
    expect((await h.call("GET", "/api/scim/v2/Users/missing")).status).toBe(404);
    expect(h.emulator.violations()).toEqual([]);
  });

  it("refuses a string where active must be a boolean", async () => {
    const id = await createUser(h, "a@example.com");
    const res = await h.call(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch({ op: "replace", path: "active", value: "False" }),
    );
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidValue");
    const created = await h.call("POST", "/api/scim/v2/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "b@example.com",
      active: "true",
    });
    expect(created.status).toBe(400);
    expect(h.emulator.violations().map((v) => v.operation)).toEqual(["patchUser", "createUser"]);
  });

  it("answers count=0 with the total only", async () => {
    await createUser(h, "a@example.com");
    const res = await h.call("GET", "/api/scim/v2/Users?count=0");
    expect(res.body).toMatchObject({ totalResults: 1, itemsPerPage: 0, Resources: [] });
    expect(h.emulator.violations()).toEqual([]);
  });

  it("can tell an answer that breaks the contract's response schema (used by checkResponses)", () => {
    const createUser = contractOperations().find((o) => o.name === "createUser");
    const listTenants = contractOperations().find((o) => o.name === "listEmbedTenants");
    if (!createUser || !listTenants) throw new Error("contract operations missing");
    expect(responseProblem(createUser, 201, { id: "x" })).toContain("schemas");
    expect(responseProblem(createUser, 201, { schemas: [], userName: "a" })).toBeUndefined();
    expect(responseProblem(listTenants, 200, { items: [] })).toContain("pageInfo");
  });
});
