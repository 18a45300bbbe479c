import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createUser,
  ENTERPRISE,
  type Harness,
  patch,
  scimUser,
  startHarness,
  USER_SCHEMA,
} from "./emulator-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.emulator.reset());

describe("emulator: SCIM users", () => {
  it("creates a user keeping the attributes the platform stores, and reads it back", async () => {
    const res = await h.call(
      "POST",
      "/api/scim/v2/Users",
      scimUser("Ada@Example.com", {
        schemas: [USER_SCHEMA, ENTERPRISE],
        externalId: "ext-1",
        name: { givenName: "Ada", familyName: "Lovelace", middleName: "dropped" },
        displayName: "Ada Lovelace",
        emails: [{ value: "ada@example.com", type: "work", primary: true }],
        nickName: "dropped",
        [ENTERPRISE]: { department: "R&D", costCenter: "42", manager: { value: "boss-1" } },
      }),
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toContain("application/scim+json");
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await h.call("GET", `/api/scim/v2/Users/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      userName: "Ada@Example.com",
      externalId: "ext-1",
      name: { givenName: "Ada", familyName: "Lovelace" },
      displayName: "Ada Lovelace",
      emails: [{ value: "ada@example.com", type: "work", primary: true }],
      active: true,
      [ENTERPRISE]: { department: "R&D", costCenter: "42", manager: { value: "boss-1" } },
    });
    expect(got.body.nickName).toBeUndefined();
    expect(got.body.name.middleName).toBeUndefined();
  });

  it("answers 409 uniqueness for a userName taken in another case", async () => {
    await createUser(h, "bob@example.com");
    const res = await h.call("POST", "/api/scim/v2/Users", scimUser("BOB@example.com"));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      status: "409",
      scimType: "uniqueness",
    });
  });

  it("filters by userName (any case), externalId, emails.value and displayName", async () => {
    const id = await createUser(h, "carol@example.com", {
      externalId: "C-1",
      displayName: "Carol C",
      emails: [{ value: "Carol@Example.com" }],
    });
    await createUser(h, "dave@example.com", { externalId: "D-1" });
    const filters = [
      'userName eq "CAROL@example.com"',
      'externalId eq "C-1"',
      'emails.value eq "carol@example.com"',
      'displayName eq "carol c"',
    ];
    for (const filter of filters) {
      const res = await h.call("GET", `/api/scim/v2/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.status, filter).toBe(200);
      expect(res.body.totalResults, filter).toBe(1);
      expect(res.body.Resources[0].id, filter).toBe(id);
    }
    const none = await h.call(
      "GET",
      `/api/scim/v2/Users?filter=${encodeURIComponent('externalId eq "c-1"')}`,
    );
    expect(none.body.totalResults).toBe(0);
  });

  it("pages with startIndex and count in creation order", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await createUser(h, `u${i}@example.com`));
    const first = await h.call("GET", "/api/scim/v2/Users?startIndex=1&count=3");
    expect(first.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 7,
      startIndex: 1,
      itemsPerPage: 3,
    });
    expect(first.body.Resources.map((u: { id: string }) => u.id)).toEqual(ids.slice(0, 3));
    await h.call("DELETE", `/api/scim/v2/Users/${ids[1]}`);
    const last = await h.call("GET", "/api/scim/v2/Users?startIndex=4&count=3");
    expect(last.body.totalResults).toBe(6);
    expect(last.body.Resources.map((u: { id: string }) => u.id)).toEqual(ids.slice(4, 7));
  });

  it("replaces a user with PUT (attributes left out are cleared)", async () => {
    const id = await createUser(h, "erin@example.com", { displayName: "Erin", externalId: "E" });
    const res = await h.call(
      "PUT",
      `/api/scim/v2/Users/${id}`,
      scimUser("erin2@example.com", { active: false }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, userName: "erin2@example.com", active: false });
    expect(res.body.displayName).toBeUndefined();
    expect(res.body.externalId).toBeUndefined();
    expect(res.body.meta.version).toBe('W/"2"');
    const byOld = await h.call("GET", `/api/scim/v2/Users?filter=${encodeURIComponent('externalId eq "E"')}`);
    expect(byOld.body.totalResults).toBe(0);
  });

  it("patches active, attribute paths, the enterprise extension and a no-path value", async () => {
    const id = await createUser(h, "finn@example.com");
    const res = await h.call(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch(
        { op: "replace", path: "active", value: false },
        { op: "add", path: "name.givenName", value: "Finn" },
        { op: "replace", path: `${ENTERPRISE}:department`, value: "Ops" },
        { op: "replace", value: { displayName: "Finn F", externalId: "F-9" } },
        { op: "add", path: 'emails[type eq "work"].value', value: "finn@work.example" },
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      active: false,
      name: { givenName: "Finn" },
      displayName: "Finn F",
      externalId: "F-9",
      emails: [{ value: "finn@work.example", type: "work" }],
      [ENTERPRISE]: { department: "Ops" },
    });
    const removed = await h.call(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch({ op: "remove", path: "displayName" }),
    );
    expect(removed.body.displayName).toBeUndefined();
  });

  it("leaves the user unchanged when one operation of a PatchOp fails", async () => {
    const id = await createUser(h, "gus@example.com");
    const res = await h.call(
      "PATCH",
      `/api/scim/v2/Users/${id}`,
      patch({ op: "replace", path: "active", value: false }, { op: "replace", path: "nickName", value: "x" }),
    );
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidPath");
    expect((await h.call("GET", `/api/scim/v2/Users/${id}`)).body.active).toBe(true);
  });

  it("answers 404 for unknown ids and deletes with 204", async () => {
    expect((await h.call("GET", "/api/scim/v2/Users/nope")).status).toBe(404);
    expect((await h.call("PUT", "/api/scim/v2/Users/nope", scimUser("x"))).status).toBe(404);
    expect(
      (
        await h.call(
          "PATCH",
          "/api/scim/v2/Users/nope",
          patch({ op: "replace", path: "active", value: true }),
        )
      ).status,
    ).toBe(404);
    const id = await createUser(h, "hal@example.com");
    expect((await h.call("DELETE", `/api/scim/v2/Users/${id}`)).status).toBe(204);
    const again = await h.call("DELETE", `/api/scim/v2/Users/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.status).toBe("404");
  });

  it("answers 401 with a SCIM error body without or with a wrong token", async () => {
    for (const token of [null, "wrong"]) {
      const res = await h.call("GET", "/api/scim/v2/Users", undefined, { token });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status: "401",
      });
    }
  });
});
