import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let t: ScimTestApp;
beforeAll(async () => {
  t = await createScimTestApp("users");
});
afterAll(async () => {
  await t.close();
});

const newUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER],
  userName,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ value: `${userName.toLowerCase()}`, type: "work", primary: true }],
  active: true,
  ...extra,
});

describe("POST /Users (RFC 7644 §3.3)", () => {
  it("creates a user: 201, full resource, Location, ETag, and marks it for sync", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send(newUser("Ada.Lovelace@Example.com"));
    expect(res.status).toBe(201);
    expect(res.headers["content-type"]).toMatch(/application\/scim\+json/);
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.userName).toBe("Ada.Lovelace@Example.com");
    expect(res.body.meta.resourceType).toBe("User");
    expect(res.body.meta.version).toMatch(/^W\/"/);
    expect(res.headers.location).toBe(res.body.meta.location);
    expect(res.headers.location).toMatch(new RegExp(`/scim/v2/okta/Users/${res.body.id}$`));
    expect(res.headers.etag).toBe(res.body.meta.version);
    expect(t.notified).toContainEqual({ source: "okta", kind: "user", id: res.body.id });
  });

  it("answers 409 uniqueness for a userName that differs only in case, and stores nothing", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(newUser("ADA.LOVELACE@example.com"));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ schemas: [ERROR], status: "409", scimType: "uniqueness" });
    const list = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName eq "ada.lovelace@example.com"' })
      .set(t.okta);
    expect(list.body.totalResults).toBe(1);
  });

  it("never returns the password", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(newUser("pw@example.com", { password: "hunter2!" }));
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain("hunter2");
    const got = await t.request.get(`/scim/v2/okta/Users/${res.body.id}`).set(t.okta);
    expect(JSON.stringify(got.body)).not.toContain("hunter2");
  });

  it("rejects a user without userName with 400 invalidValue", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send({ schemas: [USER], active: true });
    expect(res.status).toBe(400);
    expect(res.body.schemas).toEqual([ERROR]);
  });

  it("answers malformed JSON with 400 invalidSyntax", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .set("Content-Type", "application/scim+json")
      .send('{"userName": ');
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidSyntax");
  });

  it("answers an oversize body with 413 and a SCIM error", async () => {
    const big = newUser("big@example.com", { displayName: "x".repeat(2 * 1024 * 1024) });
    const res = await t.request.post("/scim/v2/okta/Users").set(t.okta).send(big);
    expect(res.status).toBe(413);
    expect(res.body.schemas).toEqual([ERROR]);
    // The IdP's admin reads it in their provisioning log: it names the limit and how to raise it.
    expect(res.body.detail).toMatch(/limit of 1mb \(its operator can raise server\.bodyLimit\)/);
  });

  it("accepts application/json with a charset", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .set("Content-Type", "application/json; charset=utf-8")
      .send(JSON.stringify(newUser("charset@example.com")));
    expect(res.status).toBe(201);
  });
});

describe("GET, PUT, PATCH, DELETE /Users/:id", () => {
  it("gets by id, 404 with a SCIM error for an unknown id", async () => {
    const created = await t.request.post("/scim/v2/okta/Users").set(t.okta).send(newUser("get@example.com"));
    const got = await t.request.get(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta);
    expect(got.status).toBe(200);
    expect(got.body.userName).toBe("get@example.com");
    const missing = await t.request
      .get("/scim/v2/okta/Users/00000000-0000-0000-0000-000000000000")
      .set(t.okta);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ schemas: [ERROR], status: "404" });
  });

  it("PUT replaces the whole user and changes the version", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(newUser("put@example.com", { title: "Engineer" }));
    const res = await t.request
      .put(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .send({ schemas: [USER], userName: "put@example.com", active: false, name: { givenName: "Put" } });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(false);
    expect(res.body.title).toBeUndefined();
    expect(res.body.meta.version).not.toBe(created.body.meta.version);
  });

  it("If-Match with a stale version answers 412 and changes nothing", async () => {
    const created = await t.request.post("/scim/v2/okta/Users").set(t.okta).send(newUser("etag@example.com"));
    const stale = created.body.meta.version;
    await t.request
      .patch(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "title", value: "A" }] });
    const res = await t.request
      .patch(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .set("If-Match", stale)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "title", value: "B" }] });
    expect(res.status).toBe(412);
    const got = await t.request.get(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta);
    expect(got.body.title).toBe("A");
    const ok = await t.request
      .patch(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .set("If-Match", got.body.meta.version)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "title", value: "C" }] });
    expect(ok.status).toBe(200);
    expect(ok.body.title).toBe("C");
  });

  it("PATCH answers 200 with the resource; Okta's no-path deactivate works", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(newUser("deact@example.com"));
    const res = await t.request
      .patch(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(false);
  });

  it("a PATCH that cannot apply answers 400 and leaves the user untouched", async () => {
    const created = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(newUser("atomic@example.com"));
    const res = await t.request
      .patch(`/scim/v2/okta/Users/${created.body.id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [
          { op: "replace", path: "title", value: "T" },
          { op: "explode", path: "title" },
        ],
      });
    expect(res.status).toBe(400);
    const got = await t.request.get(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta);
    expect(got.body.title).toBeUndefined();
    expect(got.body.meta.version).toBe(created.body.meta.version);
  });

  it("DELETE answers 204, then the user is gone (404)", async () => {
    const created = await t.request.post("/scim/v2/okta/Users").set(t.okta).send(newUser("del@example.com"));
    const res = await t.request.delete(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta);
    expect(res.status).toBe(204);
    expect((await t.request.get(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta)).status).toBe(404);
    expect((await t.request.delete(`/scim/v2/okta/Users/${created.body.id}`).set(t.okta)).status).toBe(404);
    // the userName is free again
    expect(
      (await t.request.post("/scim/v2/okta/Users").set(t.okta).send(newUser("del@example.com"))).status,
    ).toBe(201);
  });

  it("keeps enterprise extension data and a bare-string manager from Entra", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users")
      .set(t.okta)
      .send(
        newUser("ent@example.com", {
          schemas: [USER, ENTERPRISE],
          [ENTERPRISE]: { department: "R&D", manager: "boss-1" },
        }),
      );
    expect(res.status).toBe(201);
    expect(res.body[ENTERPRISE].department).toBe("R&D");
    expect(res.body[ENTERPRISE].manager.value).toBe("boss-1");
  });
});

describe("GET /Users lists (RFC 7644 §3.4.2)", () => {
  it("filters case-insensitively on userName and emails, and an unmatched filter is 200 with no results", async () => {
    await t.request.post("/scim/v2/okta/Users").set(t.okta).send(newUser("Filter.Me@Example.com"));
    const byName = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName eq "filter.me@example.com"' })
      .set(t.okta);
    expect(byName.status).toBe(200);
    expect(byName.body.totalResults).toBe(1);
    expect(byName.body.Resources[0].userName).toBe("Filter.Me@Example.com");
    const byEmail = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'emails.value eq "FILTER.ME@EXAMPLE.COM"' })
      .set(t.okta);
    expect(byEmail.body.totalResults).toBe(1);
    const none = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName eq "nobody@example.com"' })
      .set(t.okta);
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });
  });

  it('filters active eq "true" (Entra sends booleans as strings) like active eq true', async () => {
    const ids: Record<string, string> = {};
    for (const [name, active] of [
      ["on1@active.test", true],
      ["on2@active.test", "True"],
      ["off@active.test", "False"],
    ] as const) {
      const res = await t.request.post("/scim/v2/entra/Users").set(t.entra).send(newUser(name, { active }));
      expect(res.status).toBe(201);
      ids[name] = res.body.id;
    }
    const list = async (filter: string) => {
      const res = await t.request.get("/scim/v2/entra/Users").query({ filter, count: 1000 }).set(t.entra);
      expect(res.status).toBe(200);
      return (res.body.Resources as Array<{ id: string; active: boolean }>).map((r) => r.id).sort();
    };
    const active = await list("active eq true");
    expect(active).toEqual(expect.arrayContaining([ids["on1@active.test"], ids["on2@active.test"]]));
    expect(active).not.toContain(ids["off@active.test"]);
    expect(await list('active eq "true"')).toEqual(active);
    expect(await list('active eq "True"')).toEqual(active);
    expect(await list('active ne "false"')).toEqual(active);
    expect(await list('active eq "False"')).toEqual(await list("active eq false"));
    expect(await list('active eq "False"')).toContain(ids["off@active.test"]);
    // A literal that is no boolean matches no user; it is not an error.
    expect(await list('active eq "maybe"')).toEqual([]);
  });

  it("answers an unparseable filter with 400 invalidFilter", async () => {
    const res = await t.request.get("/scim/v2/okta/Users").query({ filter: 'userName eq "x' }).set(t.okta);
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe("invalidFilter");
  });

  it("pages with startIndex and count in a stable order", async () => {
    for (let i = 0; i < 5; i++)
      await t.request
        .post("/scim/v2/okta/Users")
        .set(t.okta)
        .send(newUser(`page${i}@paging.test`));
    const all = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName ew "@paging.test"', count: 100 })
      .set(t.okta);
    expect(all.body.totalResults).toBe(5);
    const p1 = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName ew "@paging.test"', startIndex: 1, count: 2 })
      .set(t.okta);
    const p2 = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName ew "@paging.test"', startIndex: 3, count: 2 })
      .set(t.okta);
    expect(p1.body.itemsPerPage).toBe(2);
    expect(p1.body.totalResults).toBe(5);
    const names = [...p1.body.Resources, ...p2.body.Resources].map((r: { userName: string }) => r.userName);
    expect(names).toEqual(all.body.Resources.slice(0, 4).map((r: { userName: string }) => r.userName));
  });

  it("supports attributes and excludedAttributes", async () => {
    const res = await t.request
      .get("/scim/v2/okta/Users")
      .query({ filter: 'userName eq "get@example.com"', attributes: "userName" })
      .set(t.okta);
    expect(res.body.Resources[0]).toHaveProperty("id");
    expect(res.body.Resources[0]).toHaveProperty("userName");
    expect(res.body.Resources[0]).not.toHaveProperty("emails");
  });

  it("POST /Users/.search takes the query in the body", async () => {
    const res = await t.request
      .post("/scim/v2/okta/Users/.search")
      .set(t.okta)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        filter: 'userName eq "get@example.com"',
      });
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(1);
  });
});

describe("userName hygiene at intake (surrounding whitespace trimmed, control characters refused)", () => {
  const post = (body: object) => t.request.post("/scim/v2/okta/Users").set(t.okta).send(body);
  const find = async (filter: string) =>
    (await t.request.get("/scim/v2/okta/Users").query({ filter }).set(t.okta)).body.totalResults as number;

  it("POST: a userName with surrounding whitespace is the same user: 409 against the stored one", async () => {
    const first = await post(newUser("trim.me@example.com"));
    expect(first.status).toBe(201);
    const again = await post(newUser("  trim.me@example.com "));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ schemas: [ERROR], status: "409", scimType: "uniqueness" });
    expect(await find('userName sw "trim.me@"')).toBe(1);
    const fresh = await post(newUser(" trimmed.new@example.com\u00a0"));
    expect(fresh.status).toBe(201);
    expect(fresh.body.userName).toBe("trimmed.new@example.com");
    expect(await find('userName eq "trimmed.new@example.com"')).toBe(1);
  });

  it("POST: a userName with NUL (or another control character) is 400 invalidValue, nothing stored", async () => {
    const before = await t.directory.countEntities("okta", "user");
    for (const userName of ["nul\u0000user@example.com", "bell\u0007@example.com", "del@example.com\u007f"]) {
      const res = await post(newUser(userName));
      expect(res.status).toBe(400);
      expect(res.headers["content-type"]).toMatch(/application\/scim\+json/);
      expect(res.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
      expect(res.body.detail).toMatch(/userName/);
    }
    const ext = await post(newUser("ext.ctl@example.com", { externalId: "ext\u00001" }));
    expect(ext.status).toBe(400);
    expect(ext.body.detail).toMatch(/externalId/);
    expect(await t.directory.countEntities("okta", "user")).toBe(before);
    expect(await find('userName sw "nul"')).toBe(0);
    expect(await find('userName eq "ext.ctl@example.com"')).toBe(0);
  });

  it("POST: externalId is opaque: kept as sent, spaces included", async () => {
    const res = await post(newUser("ext.spaces@example.com", { externalId: " E-1 " }));
    expect(res.status).toBe(201);
    expect(res.body.externalId).toBe(" E-1 ");
  });

  it("PUT and PATCH that set userName trim it; control characters are refused and change nothing", async () => {
    const created = await post(newUser("rename.me@example.com"));
    const url = `/scim/v2/okta/Users/${created.body.id}`;
    const put = await t.request.put(url).set(t.okta).send(newUser(" renamed.put@example.com "));
    expect(put.status).toBe(200);
    expect(put.body.userName).toBe("renamed.put@example.com");
    const patch = await t.request
      .patch(url)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "replace", path: "userName", value: " renamed@example.com " }],
      });
    expect(patch.status).toBe(200);
    expect(patch.body.userName).toBe("renamed@example.com");
    const bad = await t.request
      .patch(url)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [
          { op: "replace", path: "active", value: false },
          { op: "replace", value: { userName: "renamed\u0000@example.com" } },
        ],
      });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
    expect(bad.body.detail).toMatch(/userName/);
    const after = await t.request.get(url).set(t.okta);
    expect(after.body).toMatchObject({ userName: "renamed@example.com", active: true });
    expect(after.body.meta.version).toBe(patch.body.meta.version);
  });

  it("PATCH: a trimmed rename onto another user's userName is 409", async () => {
    await post(newUser("taken.name@example.com"));
    const other = await post(newUser("other.name@example.com"));
    const res = await t.request
      .patch(`/scim/v2/okta/Users/${other.body.id}`)
      .set(t.okta)
      .send({
        schemas: [PATCH],
        Operations: [{ op: "replace", path: "userName", value: " taken.name@example.com" }],
      });
    expect(res.status).toBe(409);
    expect(res.body.scimType).toBe("uniqueness");
  });

  it("PATCH of other attributes leaves a userName stored before these rules alone", async () => {
    // Written straight to the store, as an older version of the intake would have kept it.
    const legacy = await t.directory.createUser("okta", {
      schemas: [USER],
      userName: " legacy@example.com ",
      active: true,
    });
    const res = await t.request
      .patch(`/scim/v2/okta/Users/${legacy.resource.id}`)
      .set(t.okta)
      .send({ schemas: [PATCH], Operations: [{ op: "replace", path: "active", value: false }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ userName: " legacy@example.com ", active: false });
  });

  it("a filter on userName with surrounding spaces finds the trimmed user (look up before create)", async () => {
    // Okta and Entra GET userName eq "x" and POST when totalResults is 0: with a spaced name the
    // lookup must find the user stored trimmed, or the create is a 409 the client cannot get past.
    const created = await post(newUser("ada@example.com"));
    expect(created.status).toBe(201);
    const spaced = 'userName eq " ada@example.com "';
    const get = await t.request.get("/scim/v2/okta/Users").query({ filter: spaced }).set(t.okta);
    expect(get.status).toBe(200);
    expect(get.body.totalResults).toBe(1);
    expect(get.body.Resources[0]).toMatchObject({ id: created.body.id, userName: "ada@example.com" });
    const search = await t.request
      .post("/scim/v2/okta/Users/.search")
      .set(t.okta)
      .send({ schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], filter: spaced });
    expect(search.status).toBe(200);
    expect(search.body.totalResults).toBe(1);
    expect(search.body.Resources[0].id).toBe(created.body.id);
    // The same through the scan (not the index), and for the other operators.
    expect(await find('userName eq " ADA@example.com " and active eq true')).toBe(1);
    // Only eq/ne compare the whole name and trim; sw/ew compare the literal as sent, and no
    // stored name starts or ends with a space.
    expect(await find('userName sw " ada@example."')).toBe(0);
    expect(await find('userName ew "ada@example.com "')).toBe(0);
    expect(await find('userName sw "ada@example."')).toBe(1);
    expect(await find('userName ne " ada@example.com " and userName sw "ada@"')).toBe(0);
    // externalId is opaque: its literal is compared as sent.
    await post(newUser("ext.trim@example.com", { externalId: "E-2" }));
    expect(await find('externalId eq " E-2 "')).toBe(0);
    expect(await find('externalId eq "E-2"')).toBe(1);
  });

  it("a User's displayName is stored as sent, so its filter literal keeps its spaces", async () => {
    // Only a User's userName is stored trimmed; trimming a User displayName literal would miss it.
    await post(newUser("spaced.display@example.com", { displayName: " Ada L " }));
    expect(await find('displayName eq " Ada L "')).toBe(1);
    expect(await find('displayName eq "Ada L"')).toBe(0);
  });
});
