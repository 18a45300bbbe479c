/**
 * Probes of the intake written the way Okta's and Entra ID's SCIM clients send their requests, and
 * RFC 7644 edge cases around them (real Redis). Each case says what an identity admin expects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

beforeAll(async () => {
  t = await createScimTestApp("idp-probes");
});
afterAll(async () => {
  await t.close();
});

const send = (method: "post" | "put" | "patch", path: string, body: unknown) =>
  t.send(method, `${base}${path}`, body);

async function createUser(extra: Record<string, unknown> = {}) {
  const res = await send("post", "/Users", {
    schemas: [USER],
    userName: unique("user"),
    active: true,
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;
}

async function createGroup(displayName: string, members: string[] = []) {
  const res = await send("post", "/Groups", {
    schemas: [GROUP],
    displayName,
    members: members.map((value) => ({ value })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; meta: { version: string } };
}

const getUser = (id: string) => t.request.get(`${base}/Users/${id}`).set(t.okta);
const findByUserName = async (userName: string) => {
  const res = await t.request.get(`${base}/Users?filter=${q(`userName eq "${userName}"`)}`).set(t.okta);
  expect(res.status).toBe(200);
  return (res.body.Resources as { id: string; userName: string }[]).map((r) => r.id);
};
const expectScimError = (res: { status: number; body: Record<string, unknown> }, status: number) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
};

describe("userNames that differ only in Unicode normalisation are one user (RFC 7643 §4.1.1, caseExact false)", () => {
  const composed = "Jos\u00e9.Garc\u00eda@example.com"; // NFC: é and í as one code point each
  const decomposed = composed.normalize("NFD"); // e + U+0301, i + U+0301

  it("a create in the other form is 409 uniqueness; the stored one keeps its bytes", async () => {
    expect(decomposed).not.toBe(composed);
    const user = await createUser({ userName: composed });
    const dup = await send("post", "/Users", { schemas: [USER], userName: decomposed });
    expectScimError(dup, 409);
    expect(dup.body.scimType).toBe("uniqueness");
    expect((await getUser(user.id)).body.userName).toBe(composed);
  });

  it("`userName eq` in either form, any case, finds it (look up before create), also narrowed by `and`", async () => {
    const name = "Ren\u00e9e.M\u00fcller@example.com".normalize("NFD");
    const user = await createUser({ userName: name });
    expect(user.userName).toBe(name); // kept as sent, byte for byte
    expect(await findByUserName(name.normalize("NFC"))).toEqual([user.id]);
    expect(await findByUserName(name.normalize("NFC").toUpperCase())).toEqual([user.id]);
    const narrowed = await t.request
      .get(`${base}/Users?filter=${q(`userName eq "${name.normalize("NFC")}" and active eq true`)}`)
      .set(t.okta);
    expect(narrowed.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
    const sw = await t.request
      .get(`${base}/Users?filter=${q(`userName sw "${"Ren\u00e9e.M".normalize("NFC")}"`)}`)
      .set(t.okta);
    expect(sw.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
  });

  it("a rename onto another user's name in the other form is 409, and changes nothing", async () => {
    const taken = await createUser({ userName: "Zo\u00eb.one@example.com" });
    const other = await createUser({ userName: "plain.zoe@example.com" });
    const res = await send("patch", `/Users/${other.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "userName", value: "ZO\u00cb.ONE@example.com".normalize("NFD") }],
    });
    expectScimError(res, 409);
    expect((await getUser(other.id)).body.userName).toBe("plain.zoe@example.com");
    expect(await findByUserName("zo\u00eb.one@example.com")).toEqual([taken.id]);
  });

  it("group displayNames too: the other form is 409 and `displayName eq` finds it", async () => {
    const group = await createGroup("\u00c9quipe Produit");
    const dup = await send("post", "/Groups", {
      schemas: [GROUP],
      displayName: "\u00c9quipe Produit".normalize("NFD"),
    });
    expectScimError(dup, 409);
    const found = await t.request
      .get(`${base}/Groups?filter=${q(`displayName eq "${"\u00e9quipe produit".normalize("NFD")}"`)}`)
      .set(t.okta);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([group.id]);
  });
});

describe("conditional requests (RFC 7644 §3.14, RFC 7232)", () => {
  it("If-Match: * applies a PATCH to an existing user", async () => {
    const user = await createUser({ displayName: "Before" });
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "After" }],
    }).set("If-Match", "*");
    expect(res.status).toBe(200);
    expect(res.body.displayName).toBe("After");
  });

  it("GET with If-Match naming another version is 412; with the current one (or *) 200 (RFC 7232 §3.1)", async () => {
    const user = await createUser();
    expectScimError(await getUser(user.id).set("If-Match", 'W/"999"'), 412);
    expect((await getUser(user.id).set("If-Match", user.meta.version)).status).toBe(200);
    expect((await getUser(user.id).set("If-Match", "*")).status).toBe(200);
    const group = await createGroup("probe get if-match");
    const stale = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta).set("If-Match", 'W/"999"');
    expectScimError(stale, 412);
  });

  it("If-None-Match: * on GET of an existing user is 304", async () => {
    const user = await createUser();
    const res = await getUser(user.id).set("If-None-Match", "*");
    expect(res.status).toBe(304);
  });

  it("If-None-Match naming the current version on PATCH or PUT is 412 and changes nothing (RFC 7232 §3.2)", async () => {
    const user = await createUser({ displayName: "Kept" });
    const patch = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "Changed" }],
    }).set("If-None-Match", user.meta.version);
    expectScimError(patch, 412);
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: user.userName,
      displayName: "Changed",
    }).set("If-None-Match", "*");
    expectScimError(put, 412);
    const after = await getUser(user.id);
    expect(after.body.displayName).toBe("Kept");
    expect(after.body.meta.version).toBe(user.meta.version);
    // A version that is not the current one lets the write through.
    const ok = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "Changed" }],
    }).set("If-None-Match", 'W/"999"');
    expect(ok.status).toBe(200);
    expect(ok.body.displayName).toBe("Changed");
  });
});

describe("If-None-Match on a group's writes and on DELETE (RFC 7232 §3.2)", () => {
  it("PUT with members, PATCH and DELETE naming the current version (or *) are 412; nothing changes", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const group = await createGroup("probe none-match", [a.id]);
    const put = await send("put", `/Groups/${group.id}`, {
      schemas: [GROUP],
      displayName: "probe none-match renamed",
      members: [{ value: b.id }],
    }).set("If-None-Match", group.meta.version);
    expectScimError(put, 412);
    const patch = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: b.id }] }],
    }).set("If-None-Match", "*");
    expectScimError(patch, 412);
    expectScimError(
      await t.request.delete(`${base}/Groups/${group.id}`).set(t.okta).set("If-None-Match", "*"),
      412,
    );
    expectScimError(
      await t.request.delete(`${base}/Users/${a.id}`).set(t.okta).set("If-None-Match", a.meta.version),
      412,
    );
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.displayName).toBe("probe none-match");
    expect(got.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
    expect(got.body.meta.version).toBe(group.meta.version);
    // Another version lets a DELETE through.
    expect(
      (await t.request.delete(`${base}/Groups/${group.id}`).set(t.okta).set("If-None-Match", 'W/"999"'))
        .status,
    ).toBe(204);
  });
});

describe("POST /.search bodies (RFC 7644 §3.4.3)", () => {
  let user: { id: string; userName: string };
  beforeAll(async () => {
    user = await createUser({ displayName: "Searched" });
  });

  it("startIndex and count as strings, attributes as an array or a comma string", async () => {
    const asArray = await send("post", "/Users/.search", {
      schemas: [SEARCH],
      filter: `userName eq "${user.userName}"`,
      startIndex: "1",
      count: "10",
      attributes: ["userName", "displayName"],
    });
    expect(asArray.status).toBe(200);
    expect(asArray.body.Resources).toEqual([
      { schemas: [USER], id: user.id, userName: user.userName, displayName: "Searched" },
    ]);
    const asString = await send("post", "/Users/.search", {
      schemas: [SEARCH],
      filter: `userName eq "${user.userName}"`,
      attributes: "userName,displayName",
    });
    expect(asString.body.Resources).toEqual(asArray.body.Resources);
  });

  it("a body whose schemas names another message is 400 invalidSyntax, at every .search; a missing one is tolerated", async () => {
    for (const path of ["/Users/.search", "/Groups/.search", "/.search"]) {
      for (const schemas of [[USER], [PATCH], "not a list"]) {
        const wrong = await send("post", path, { schemas, filter: `userName eq "${user.userName}"` });
        expectScimError(wrong, 400);
        expect(wrong.body.scimType).toBe("invalidSyntax");
      }
    }
    // As with PatchOp (dialects.ts), a client that leaves `schemas` out is still answered.
    const missing = await send("post", "/Users/.search", { filter: `userName eq "${user.userName}"` });
    expect(missing.status).toBe(200);
    expect(missing.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
    const lower = await send("post", "/.search", {
      schemas: [SEARCH.toLowerCase()],
      filter: `userName eq "${user.userName}"`,
    });
    expect(lower.status).toBe(200);
    expect(lower.body.totalResults).toBe(1);
  });

  it("startIndex or count that is not a number is 400 invalidValue", async () => {
    const res = await send("post", "/Users/.search", { schemas: [SEARCH], count: "ten" });
    expectScimError(res, 400);
  });
});

describe("Okta login swaps (A takes B's userName while B takes a new one)", () => {
  it("the first rename is 409 and changes nothing; after the other lands, its retry succeeds", async () => {
    const a = await createUser({ userName: "swap.a@example.com", displayName: "A" });
    const b = await createUser({ userName: "swap.b@example.com", displayName: "B" });
    // Okta sends A's full PUT with B's old userName first.
    const first = await send("put", `/Users/${a.id}`, {
      schemas: [USER],
      id: a.id,
      userName: "swap.b@example.com",
      displayName: "A renamed",
      active: true,
    });
    expectScimError(first, 409);
    expect(first.body.scimType).toBe("uniqueness");
    const aNow = await getUser(a.id);
    expect(aNow.body.userName).toBe("swap.a@example.com");
    expect(aNow.body.displayName).toBe("A");
    expect(aNow.body.meta.version).toBe(a.meta.version);
    // Then B moves away, and Okta retries A.
    const bMoved = await send("patch", `/Users/${b.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "userName", value: "swap.b2@example.com" }],
    });
    expect(bMoved.status).toBe(200);
    const retry = await send("put", `/Users/${a.id}`, {
      schemas: [USER],
      id: a.id,
      userName: "swap.b@example.com",
      displayName: "A renamed",
      active: true,
    });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(await findByUserName("swap.b@example.com")).toEqual([a.id]);
    expect(await findByUserName("swap.b2@example.com")).toEqual([b.id]);
    expect(await findByUserName("swap.a@example.com")).toEqual([]);
    // The old name is free again.
    await createUser({ userName: "swap.a@example.com" });
  });

  it("a swap of the two names through a third name: every step answers, and the end state is exact", async () => {
    const a = await createUser({ userName: "rot.a@example.com" });
    const b = await createUser({ userName: "rot.b@example.com" });
    const rename = (id: string, userName: string) =>
      send("patch", `/Users/${id}`, {
        schemas: [PATCH],
        Operations: [{ op: "replace", value: { userName } }],
      });
    expect((await rename(a.id, "rot.b@example.com")).status).toBe(409);
    expect((await rename(b.id, "rot.tmp@example.com")).status).toBe(200);
    expect((await rename(a.id, "ROT.B@example.com")).status).toBe(200);
    expect((await rename(b.id, "rot.a@example.com")).status).toBe(200);
    expect(await findByUserName("rot.a@example.com")).toEqual([b.id]);
    expect(await findByUserName("rot.b@example.com")).toEqual([a.id]);
    expect(await findByUserName("rot.tmp@example.com")).toEqual([]);
    expect((await getUser(a.id)).body.userName).toBe("ROT.B@example.com");
  });
});

describe("PATCH shapes Entra and Okta send", () => {
  it('replace `emails[type eq "work"].value` on a user without emails creates the work email (Entra)', async () => {
    const user = await createUser();
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Replace", path: 'emails[type eq "work"].value', value: "new.work@example.com" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ type: "work", value: "new.work@example.com" }]);
    const found = await t.request
      .get(`${base}/Users?filter=${q('emails.value eq "NEW.WORK@example.com"')}`)
      .set(t.okta);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([user.id]);
  });

  it('`"active": "False"` (Entra) deactivates, as a path op and as a no-path value', async () => {
    const user = await createUser();
    const withPath = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Replace", path: "active", value: "False" }],
    });
    expect(withPath.body.active).toBe(false);
    const back = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Replace", value: { active: "True" } }],
    });
    expect(back.body.active).toBe(true);
  });

  it("`op: Add` with a one-object array for a single-valued complex attribute (name)", async () => {
    const user = await createUser();
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Add", path: "name", value: [{ givenName: "Ada", familyName: "Lovelace" }] }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "Ada", familyName: "Lovelace" });
    const title = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Add", path: "title", value: ["CTO"] }],
    });
    expect(title.body.title).toBe("CTO");
  });

  it("a value of the wrong type for a single-valued string (an array) is 400 invalidValue and changes nothing", async () => {
    const user = await createUser({ displayName: "Kept" });
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Add", path: "displayName", value: ["One", "Two"] }],
    });
    expectScimError(res, 400);
    expect((await getUser(user.id)).body.displayName).toBe("Kept");
  });

  it("PUT without `id` in the body replaces the user named by the URL", async () => {
    const user = await createUser({ displayName: "Old" });
    const res = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: user.userName,
      displayName: "New",
    });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(user.id);
    expect(res.body.displayName).toBe("New");
  });

  it("PUT with another resource's `id` in the body still replaces the user of the URL only", async () => {
    const user = await createUser({ displayName: "Old" });
    const other = await createUser({ displayName: "Other" });
    const res = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      id: other.id,
      userName: user.userName,
      displayName: "New",
    });
    expect([200, 400]).toContain(res.status);
    expect((await getUser(other.id)).body.displayName).toBe("Other");
  });

  it("a body nested thousands deep is 400 invalidSyntax, not a 500, and stores or changes nothing", async () => {
    const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const raw = (method: "post" | "patch", path: string, text: string) =>
      t.request[method](`${base}${path}`).set(t.okta).set("Content-Type", "application/scim+json").send(text);
    const userName = unique("deep");
    for (const depth of [40, 5000]) {
      const res = await raw(
        "post",
        "/Users",
        `{"schemas":["${USER}"],"userName":"${userName}","name":${deep(depth)}}`,
      );
      expectScimError(res, 400);
      expect(res.body.scimType).toBe("invalidSyntax");
    }
    expect(await findByUserName(userName)).toEqual([]);
    const user = await createUser({ displayName: "Kept" });
    const patch = await raw(
      "patch",
      `/Users/${user.id}`,
      `{"schemas":["${PATCH}"],"Operations":[{"op":"add","value":{"displayName":"Changed","x":${deep(5000)}}}]}`,
    );
    expectScimError(patch, 400);
    const after = await getUser(user.id);
    expect(after.body.displayName).toBe("Kept");
    expect(after.body.meta.version).toBe(user.meta.version);
  });

  it("a 64 KiB displayName is stored and returned whole (no silent truncation)", async () => {
    const long = "x".repeat(64 * 1024);
    const user = await createUser({ displayName: long });
    expect((await getUser(user.id)).body.displayName).toBe(long);
  });
});

describe("more Okta and Entra shapes", () => {
  it("a user renamed to its own name in another case or Unicode form keeps its id; the new form is returned", async () => {
    const user = await createUser({ userName: "jos\u00e9.self@example.com" });
    for (const userName of ["JOS\u00c9.Self@example.com", "jos\u00e9.self@example.com".normalize("NFD")]) {
      const res = await send("patch", `/Users/${user.id}`, {
        schemas: [PATCH],
        Operations: [{ op: "replace", value: { userName } }],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.userName).toBe(userName);
    }
    expect(await findByUserName("jos\u00e9.self@example.com")).toEqual([user.id]);
  });

  it("Okta's no-path replace carrying `id` (and meta) changes only what it should", async () => {
    const user = await createUser();
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", value: { id: user.id, active: false, meta: { version: 'W/"77"' } } }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(user.id);
    expect(res.body.active).toBe(false);
    expect(res.body.meta.version).not.toBe('W/"77"');
  });

  it("Entra removes the manager by its URN path", async () => {
    const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
    const manager = await createUser();
    const user = await createUser({
      schemas: [USER, ENTERPRISE],
      [ENTERPRISE]: { manager: { value: manager.id }, department: "R&D" },
    });
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Remove", path: `${ENTERPRISE}:manager` }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENTERPRISE]).toEqual({ department: "R&D" });
  });

  it("remove `members` without a value empties the group (RFC 7644 §3.5.2.2)", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const group = await createGroup("probe remove all", [a.id, b.id]);
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "remove", path: "members" }],
    });
    expect([200, 204]).toContain(res.status);
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.members ?? []).toEqual([]);
    expect((await getUser(a.id)).body.groups ?? []).toEqual([]);
  });

  it("a group renamed onto another group's name in another case is 409 and changes nothing", async () => {
    await createGroup("Probe Taken");
    const group = await createGroup("probe free");
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "displayName", value: "PROBE TAKEN" }],
    });
    expectScimError(res, 409);
    expect(res.body.scimType).toBe("uniqueness");
    expect((await t.request.get(`${base}/Groups/${group.id}`).set(t.okta)).body.displayName).toBe(
      "probe free",
    );
  });

  it("startIndex past the end: 200, totalResults, no resources", async () => {
    const res = await t.request.get(`${base}/Users?startIndex=100000&count=10`).set(t.okta);
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBeGreaterThan(0);
    expect(res.body.Resources ?? []).toEqual([]);
    expect(res.body.itemsPerPage).toBe(0);
  });

  it("a userName of only spaces is 400 invalidValue", async () => {
    expectScimError(await send("post", "/Users", { schemas: [USER], userName: "   " }), 400);
  });
});

describe("group membership PATCHes", () => {
  it('remove `members[value eq "x"]` removes only x, in both directions', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const group = await createGroup("probe remove one", [a.id, b.id]);
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "remove", path: `members[value eq "${a.id}"]` }],
    });
    expect([200, 204]).toContain(res.status);
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
    const aGroups = await getUser(a.id);
    expect(aGroups.body.groups ?? []).toEqual([]);
  });

  it("duplicate members in one add are one member", async () => {
    const a = await createUser();
    const group = await createGroup("probe duplicates");
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: a.id }, { value: a.id }] }],
    });
    expect([200, 204]).toContain(res.status);
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
  });

  it("a member of `type: Group` (nested group) is refused with 400, and nothing changes", async () => {
    const a = await createUser();
    const inner = await createGroup("probe inner");
    const outer = await createGroup("probe outer", [a.id]);
    const res = await send("patch", `/Groups/${outer.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: inner.id, type: "Group" }] }],
    });
    expectScimError(res, 400);
    const got = await t.request.get(`${base}/Groups/${outer.id}`).set(t.okta);
    expect(got.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
    expect(got.body.meta.version).toBe(outer.meta.version);
  });

  it("Entra's remove naming a user the bridge no longer holds removes the others and is no error", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const group = await createGroup("probe remove deleted", [a.id, b.id]);
    expect((await t.request.delete(`${base}/Users/${b.id}`).set(t.okta)).status).toBe(204);
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "Remove", path: "members", value: [{ value: a.id }, { value: b.id }] }],
    });
    expect([200, 204]).toContain(res.status);
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.members ?? []).toEqual([]);
  });

  it("an add naming an unknown user id among known ones is 400 and adds none of them", async () => {
    const a = await createUser();
    const group = await createGroup("probe unknown member");
    const res = await send("patch", `/Groups/${group.id}`, {
      schemas: [PATCH],
      Operations: [
        {
          op: "add",
          path: "members",
          value: [{ value: a.id }, { value: "00000000-0000-4000-8000-000000000000" }],
        },
      ],
    });
    expectScimError(res, 400);
    const got = await t.request.get(`${base}/Groups/${group.id}`).set(t.okta);
    expect(got.body.members ?? []).toEqual([]);
  });
});

describe("lists: paging and filter precedence (RFC 7644 §3.4.2)", () => {
  let users: { id: string; userName: string }[];
  beforeAll(async () => {
    users = [
      await createUser({ userName: "prec.a@example.com", title: "x", active: true }),
      await createUser({ userName: "prec.b@example.com", title: "y", active: false }),
      await createUser({ userName: "prec.c@example.com", title: "x", active: false }),
    ];
  });
  const ids = async (filter: string) => {
    const res = await t.request.get(`${base}/Users?filter=${q(filter)}`).set(t.okta);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.Resources as { id: string }[]).map((r) => r.id).sort();
  };

  it("`and` binds tighter than `or`; parentheses override", async () => {
    const [a, b, c] = users.map((u) => u.id) as [string, string, string];
    expect(await ids('userName sw "prec." and title eq "y" or userName eq "prec.a@example.com"')).toEqual(
      [a, b].sort(),
    );
    expect(await ids('userName eq "prec.a@example.com" or title eq "x" and active eq false')).toEqual(
      [a, c].sort(),
    );
    expect(await ids('(userName eq "prec.a@example.com" or title eq "x") and active eq false')).toEqual([c]);
    expect(await ids('not (title eq "x") and userName sw "prec."')).toEqual([b]);
  });

  it("a negative startIndex counts as 1, a negative count as 0", async () => {
    const all = await t.request
      .get(`${base}/Users?filter=${q('userName sw "prec."')}&startIndex=-5`)
      .set(t.okta);
    expect(all.status).toBe(200);
    expect(all.body.startIndex).toBe(1);
    expect(all.body.Resources).toHaveLength(3);
    const none = await t.request.get(`${base}/Users?filter=${q('userName sw "prec."')}&count=-1`).set(t.okta);
    expect(none.status).toBe(200);
    expect(none.body.totalResults).toBe(3);
    expect(none.body.Resources ?? []).toHaveLength(0);
  });

  it("sortBy: ServiceProviderConfig says sort is not supported, and a sortBy is ignored, not an error", async () => {
    const config = await t.request.get(`${base}/ServiceProviderConfig`).set(t.okta);
    expect(config.body.sort.supported).toBe(false);
    const res = await t.request
      .get(`${base}/Users?filter=${q('userName sw "prec."')}&sortBy=userName&sortOrder=descending`)
      .set(t.okta);
    expect(res.status).toBe(200);
    expect(res.body.totalResults).toBe(3);
  });
});

describe("deletes", () => {
  it("DELETE twice: 204 then 404 SCIM error; GET, PUT and PATCH of the deleted user are 404", async () => {
    const user = await createUser();
    expect((await t.request.delete(`${base}/Users/${user.id}`).set(t.okta)).status).toBe(204);
    expectScimError(await t.request.delete(`${base}/Users/${user.id}`).set(t.okta), 404);
    expectScimError(await getUser(user.id), 404);
    expectScimError(
      await send("patch", `/Users/${user.id}`, {
        schemas: [PATCH],
        Operations: [{ op: "replace", value: { active: false } }],
      }),
      404,
    );
    expectScimError(
      await send("put", `/Users/${user.id}`, { schemas: [USER], userName: user.userName }),
      404,
    );
    expect(await findByUserName(user.userName)).toEqual([]);
  });
});

describe("externalId: unique per source, case-exact (RFC 7643 §3.1)", () => {
  it("the same externalId is 409 uniqueness; one differing in case is another user", async () => {
    await createUser({ externalId: "00uAbC123" });
    const dup = await send("post", "/Users", {
      schemas: [USER],
      userName: unique("ext"),
      externalId: "00uAbC123",
    });
    expectScimError(dup, 409);
    expect(dup.body.scimType).toBe("uniqueness");
    const other = await createUser({ externalId: "00UABC123" });
    const found = await t.request.get(`${base}/Users?filter=${q('externalId eq "00UABC123"')}`).set(t.okta);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([other.id]);
  });
});
