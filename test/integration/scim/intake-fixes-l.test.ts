/**
 * Known intake defects of round l, each decided by the RFC it cites (real Redis):
 * - a PATCH that removes (or nulls) a required attribute (a user's userName, a group's displayName)
 *   is 400 `mutability` (RFC 7644 §3.5.2.2), nothing stored; a PUT without userName stays 400
 *   `invalidValue` (§3.5.1 and §3.12: "A required value was missing");
 * - an empty or whitespace-only externalId is no externalId: not stored, not indexed, on POST, PUT,
 *   PATCH and the signed-events path alike (two users holding "   " are no 409);
 * - removing values from a custom extension's list of strings compares as the attribute's caseExact
 *   says: false, the default for an attribute no schema describes (RFC 7643 §2.2, §2.3.1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scimSourceSuite } from "../../helpers/scim-test-app.js";
import { type HooksTestApp, createHooksTestApp } from "../hooks/hooks-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ACME = "urn:ietf:params:scim:schemas:extension:Acme:2.0:User";

let hooks: HooksTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.l${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const { get, send } = scimSourceSuite("intake-fixes-l", "okta");
beforeAll(async () => {
  hooks = await createHooksTestApp("intake-fixes-l-hooks");
});
afterAll(async () => {
  await hooks.close();
});

type Resource = { id: string; meta: { version: string } } & Record<string, unknown>;
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

async function created(res: { status: number; body: unknown }): Promise<Resource> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}
function scimError(res: { status: number; body: Record<string, unknown> }, status: number, scimType: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.scimType).toBe(scimType);
}

describe("a PATCH that unassigns a required attribute (RFC 7644 §3.5.2.2: scimType mutability)", () => {
  it("remove of userName, or userName set to null: 400 mutability, the user unchanged", async () => {
    const user = await created(await send("post", "/Users", { schemas: [USER], userName: unique("req") }));
    for (const ops of [
      [{ op: "remove", path: "userName" }],
      [{ op: "Remove", path: `${USER}:userName` }],
      [{ op: "replace", path: "userName", value: null }],
      [{ op: "replace", value: { userName: null } }],
      [
        { op: "replace", path: "title", value: "changed" },
        { op: "remove", path: "userName" },
      ],
    ]) {
      scimError(await patch(`/Users/${user.id}`, ops), 400, "mutability");
    }
    const after = await get(`/Users/${user.id}`);
    expect(after.body.userName).toBe(user.userName);
    expect(after.body).not.toHaveProperty("title");
    expect(after.body.meta.version).toBe(user.meta.version);
  });

  it("remove of a group's displayName: 400 mutability, the group unchanged", async () => {
    const group = await created(
      await send("post", "/Groups", { schemas: [GROUP], displayName: `Req ${++n}` }),
    );
    scimError(await patch(`/Groups/${group.id}`, [{ op: "remove", path: "displayName" }]), 400, "mutability");
    const after = await get(`/Groups/${group.id}`);
    expect(after.body.displayName).toBe(group.displayName);
  });

  it("a PUT without userName stays 400 invalidValue (a required value is missing), the user unchanged", async () => {
    const user = await created(await send("post", "/Users", { schemas: [USER], userName: unique("put") }));
    scimError(
      await send("put", `/Users/${user.id}`, { schemas: [USER], displayName: "No Name" }),
      400,
      "invalidValue",
    );
    expect((await get(`/Users/${user.id}`)).body.userName).toBe(user.userName);
  });
});

describe("an empty or whitespace-only externalId is none", () => {
  it("POST: two users with externalId '   ' are both created (no 409), neither holds it", async () => {
    const a = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("ws"), externalId: "   " }),
    );
    const b = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("ws"), externalId: "   " }),
    );
    expect(a.id).not.toBe(b.id);
    expect(a).not.toHaveProperty("externalId");
    expect(b).not.toHaveProperty("externalId");
    const c = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("ws"), externalId: "" }),
    );
    expect(c).not.toHaveProperty("externalId");
  });

  it("PUT and PATCH setting '   ' leave the user without externalId, and free the one it had", async () => {
    const taken = `ext-${++n}`;
    const user = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("wsput"), externalId: taken }),
    );
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: user.userName,
      externalId: "    ",
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).not.toHaveProperty("externalId");
    // The externalId the user had is free again.
    await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("wsput"), externalId: taken }),
    );
    const other = await created(await send("post", "/Users", { schemas: [USER], userName: unique("wsput") }));
    for (const u of [user, other]) {
      const res = await patch(`/Users/${u.id}`, [{ op: "replace", path: "externalId", value: "  " }]);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).not.toHaveProperty("externalId");
    }
    const found = await get(`/Users?filter=${q('externalId eq "  "')}`);
    expect(found.body.totalResults).toBe(0);
  });

  it("groups: '   ' is no externalId either", async () => {
    const a = await created(
      await send("post", "/Groups", { schemas: [GROUP], displayName: `Ws ${++n}`, externalId: " " }),
    );
    await created(
      await send("post", "/Groups", { schemas: [GROUP], displayName: `Ws ${++n}`, externalId: " " }),
    );
    expect(a).not.toHaveProperty("externalId");
  });

  it("signed events: two upserts with externalId '   ' and their own userNames are two users, neither renamed", async () => {
    const first = unique("signed");
    const second = unique("signed");
    const upsert = (userName: string) => ({
      type: "user.upserted",
      data: { schemas: [USER], userName, externalId: "   " },
    });
    const res = await hooks.postEvents({ events: [upsert(first), upsert(second)] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const a = await hooks.user({ userName: first });
    const b = await hooks.user({ userName: second });
    expect(a?.resource.userName).toBe(first);
    expect(b?.resource.userName).toBe(second);
    expect(a?.resource.id).not.toBe(b?.resource.id);
    expect(a?.resource).not.toHaveProperty("externalId");
  });
});

describe("remove from a custom extension's list of strings follows caseExact (false: RFC 7643 §2.2)", () => {
  async function tagged(tags: unknown[]) {
    return created(
      await send("post", "/Users", { schemas: [USER, ACME], userName: unique("tags"), [ACME]: { tags } }),
    );
  }

  it("a value list in another case removes those values", async () => {
    const user = await tagged(["Alpha", "beta", "Gamma"]);
    const res = await patch(`/Users/${user.id}`, [
      { op: "remove", path: `${ACME}:tags`, value: ["ALPHA", "Beta"] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ACME]).toEqual({ tags: ["Gamma"] });
  });

  it("a value filter in another case removes the value", async () => {
    const user = await tagged(["Alpha", "beta"]);
    const res = await patch(`/Users/${user.id}`, [{ op: "remove", path: `${ACME}:tags[value eq "BETA"]` }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ACME]).toEqual({ tags: ["Alpha"] });
  });

  it("a value list of {value} objects removes plain values of another case", async () => {
    const user = await tagged(["Alpha", "beta"]);
    const res = await patch(`/Users/${user.id}`, [
      { op: "remove", path: `${ACME}:tags`, value: [{ value: "alpha" }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ACME]).toEqual({ tags: ["beta"] });
  });
});
