/**
 * Acceptance probes (round i) of the SCIM intake with the traffic of the identity providers tested
 * least, as their clients put it on the wire (intake only, real Redis):
 * - Keycloak's SCIM plugins: keycloak-scim2-storage (suvera) pastes filter values into
 *   `filter=userName+eq+%22<value>%22` unencoded (its HTTP client, OkHttp, then percent-encodes a
 *   space as %20 and leaves `+` and `@`), and writes PATCH paths as `emails[type eq work].value`
 *   (the type unquoted; `type eq null` for an email without one);
 * - AWS IAM Identity Center-style clients (awslabs/ssosync, Go's url.Values): form-encoded filters
 *   such as `id eq "<group>" and members eq "<user>"`;
 * - GitHub's SCIM documentation of Entra ID's requests: `emails[type eq 'work'].value`;
 * - Okta's SCIM 1.1 client (`text/json`), PowerShell and Java HTTP clients that label a JSON body
 *   as a form, text or octet-stream, and none at all.
 * Earlier rounds: idp-probes-a/d/e/g, idp-intake-edges, scim-edges.
 */
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const base = "/scim/v2/okta";

let t: ScimTestApp;
let n = 0;
const unique = (stem: string) => `${stem}.i${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);
/** What Go's url.Values{"filter": ...}.Encode() writes (form encoding: `+` for spaces). */
const goForm = (filter: string) => new URLSearchParams({ filter }).toString();

beforeAll(async () => {
  t = await createScimTestApp("acceptance-idp-probes-i");
});
afterAll(async () => {
  await t.close();
});

const send = (
  method: "post" | "put" | "patch",
  path: string,
  body: unknown,
  type = "application/scim+json",
) => t.request[method](`${base}${path}`).set(t.okta).set("Content-Type", type).send(JSON.stringify(body));
const get = (path: string) => t.request.get(`${base}${path}`).set(t.okta);
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

async function createUser(extra: Record<string, unknown> = {}) {
  const res = await send("post", "/Users", { schemas: [USER], userName: unique("user"), ...extra });
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
  return res.body as { id: string; displayName: string };
}

const ids = (res: { body: { Resources?: { id: string }[] } }) => (res.body.Resources ?? []).map((r) => r.id);

/** A request as a bare HTTP client sends it: exactly these headers, nothing added. */
async function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const server = t.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      });
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    server.close();
  }
}

describe("request bodies of a media type that is not JSON: 415 (RFC 9110 §15.5.16)", () => {
  const OTHER_TYPES = [
    "text/plain; charset=utf-8", // Java's StringEntity(json) without a content type, curl scripts
    "application/xml",
    "application/x-www-form-urlencoded", // PowerShell's Invoke-RestMethod -Body without -ContentType
    "application/octet-stream",
  ];

  it("every route that reads a body answers 415 with a SCIM error naming the accepted types; nothing is written", async () => {
    const user = await createUser({ displayName: "Before" });
    const group = await createGroup(`Media Group ${++n}`);
    const newName = unique("never");
    for (const type of OTHER_TYPES) {
      const writes = [
        ["post", "/Users", { schemas: [USER], userName: newName }],
        ["put", `/Users/${user.id}`, { schemas: [USER], userName: user.userName, displayName: "After" }],
        [
          "patch",
          `/Users/${user.id}`,
          { schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "After" }] },
        ],
        ["post", "/Groups", { schemas: [GROUP], displayName: `Never ${newName}` }],
        [
          "patch",
          `/Groups/${group.id}`,
          { schemas: [PATCH], Operations: [{ op: "replace", path: "displayName", value: "After" }] },
        ],
        ["post", "/Users/.search", { schemas: [SEARCH], filter: `userName eq "${user.userName}"` }],
        ["post", "/.search", { schemas: [SEARCH] }],
      ] as const;
      for (const [method, path, body] of writes) {
        const res = await send(method, path, body, type);
        expect(res.status, `${method} ${path} as ${type}: ${JSON.stringify(res.body)}`).toBe(415);
        expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
        expect(res.body).toMatchObject({ schemas: [ERROR], status: "415" });
        expect(res.body.detail).toContain(type);
        expect(res.headers.accept).toBe("application/scim+json, application/json");
        // RFC 5789 §2.2: a PATCH's 415 names the patch document types it takes.
        if (method === "patch")
          expect(res.headers["accept-patch"]).toBe("application/scim+json, application/json");
        else expect(res.headers["accept-patch"]).toBeUndefined();
      }
    }
    const after = await get(`/Users/${user.id}`);
    expect(after.body).toMatchObject({ displayName: "Before", meta: { version: user.meta.version } });
    expect((await get(`/Users?filter=${q(`userName eq "${newName}"`)}`)).body.totalResults).toBe(0);
    expect((await get(`/Groups/${group.id}`)).body.displayName).toBe(group.displayName);
  });

  it("a 415 is answered before the resource is looked up, as a 400 for the body would be", async () => {
    const res = await send("put", "/Users/no-such-user", { userName: "x" }, "application/xml");
    expect(res.status).toBe(415);
  });

  it("JSON media types are read in any case and with any UTF-8 charset: Okta's SCIM 1.1 `text/json`, `application/json`", async () => {
    for (const type of [
      "text/json;charset=UTF-8",
      "application/json; charset=utf-8",
      "APPLICATION/SCIM+JSON",
      'application/scim+json;charset="UTF-8"',
    ]) {
      const res = await send("post", "/Users", { schemas: [USER], userName: unique("typed") }, type);
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });

  it("a body without Content-Type, or with the header sent empty, is read as JSON", async () => {
    const userName = unique("untyped");
    const body = JSON.stringify({ schemas: [USER], userName });
    const none = await rawRequest(
      "POST",
      `${base}/Users`,
      { Authorization: t.okta.Authorization, "Content-Length": String(Buffer.byteLength(body)) },
      body,
    );
    expect(none.status, JSON.stringify(none.body)).toBe(201);
    expect(none.body.userName).toBe(userName);

    const id = none.body.id as string;
    const ops = JSON.stringify({ Operations: [{ op: "replace", path: "title", value: "Engineer" }] });
    const empty = await rawRequest(
      "PATCH",
      `${base}/Users/${id}`,
      {
        Authorization: t.okta.Authorization,
        "Content-Type": "",
        "Content-Length": String(Buffer.byteLength(ops)),
      },
      ops,
    );
    expect(empty.status, JSON.stringify(empty.body)).toBe(200);
    expect(empty.body.title).toBe("Engineer");
  });

  it("requests that read no body are not refused for their Content-Type (a DELETE or GET labelled text/plain)", async () => {
    const user = await createUser();
    const read = await t.request
      .get(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "text/plain");
    expect(read.status).toBe(200);
    const gone = await t.request
      .delete(`${base}/Users/${user.id}`)
      .set(t.okta)
      .set("Content-Type", "text/plain");
    expect(gone.status).toBe(204);
  });
});

describe("filter query strings as clients build them (RFC 7644 §3.4.2.2)", () => {
  it("Keycloak keycloak-scim2-storage: `+` between the tokens and a value pasted in as it is (`%20` for its space, a raw `+` and `@`)", async () => {
    const group = await createGroup(`Sales EMEA ${++n}`);
    const byName = await get(`/Groups?filter=displayName+eq+%22${group.displayName.replace(/ /g, "%20")}%22`);
    expect(byName.status, JSON.stringify(byName.body)).toBe(200);
    expect(ids(byName)).toEqual([group.id]);

    const plus = await createGroup(`R+D Lab ${++n}`);
    const byPlusName = await get(
      `/Groups?filter=displayName+eq+%22${plus.displayName.replace(/ /g, "%20")}%22`,
    );
    expect(ids(byPlusName)).toEqual([plus.id]);

    // The look-up before a create: missing it made the create that follows a 409 on every run.
    const user = await createUser({ userName: `first+tag.${++n}@example.com` });
    const byUserName = await get(`/Users?filter=userName+eq+%22${user.userName}%22`);
    expect(byUserName.status, JSON.stringify(byUserName.body)).toBe(200);
    expect(ids(byUserName)).toEqual([user.id]);
  });

  it("form encoding still reads `+` as a space and `%2B` as a plus (PingFederate, Go's url.Values)", async () => {
    const group = await createGroup(`Ann Lee Team ${++n}`);
    const spaced = await get(`/Groups?${goForm(`displayName eq "${group.displayName}"`)}`);
    expect(spaced.status, JSON.stringify(spaced.body)).toBe(200);
    expect(ids(spaced)).toEqual([group.id]);
    const user = await createUser({ userName: `second+tag.${++n}@example.com` });
    const query = goForm(`userName eq "${user.userName}"`);
    expect(query).toContain("%2Btag"); // the + of the address, form-encoded
    const encoded = await get(`/Users?${query}`);
    expect(ids(encoded)).toEqual([user.id]);
  });

  it('ssosync (AWS IAM Identity Center-style): `id eq "<group>" and members eq "<user>"` says whether the user is a member', async () => {
    const member = await createUser();
    const other = await createUser();
    const group = await createGroup(`AWS Admins ${++n}`, [member.id]);
    const isIn = await get(`/Groups?${goForm(`id eq "${group.id}" and members eq "${member.id}"`)}`);
    expect(isIn.status, JSON.stringify(isIn.body)).toBe(200);
    expect(isIn.body.totalResults).toBe(1);
    const notIn = await get(`/Groups?${goForm(`id eq "${group.id}" and members eq "${other.id}"`)}`);
    expect(notIn.body.totalResults).toBe(0);
  });

  it("a filter with a `+` that is not valid percent-encoding is read as the query parser reads it, not refused", async () => {
    const res = await get("/Users?filter=userName+eq+%22a%ZZb%22");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.totalResults).toBe(0);
  });
});

describe("PATCH value filters as Keycloak and Entra ID's documented requests write them", () => {
  it("Keycloak keycloak-scim2-storage: `emails[type eq work].value` (unquoted) replaces the work email; phone numbers added and removed the same way", async () => {
    const user = await createUser({
      emails: [
        { type: "work", primary: true, value: "kc.old@example.com" },
        { type: "home", value: "kc.home@example.com" },
      ],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails[type eq work].value", value: "kc.new@example.com" },
      { op: "add", path: "phoneNumbers[type eq mobile].value", value: "+47 555 0100" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { type: "work", primary: true, value: "kc.new@example.com" },
      { type: "home", value: "kc.home@example.com" },
    ]);
    expect(res.body.phoneNumbers).toEqual([{ type: "mobile", value: "+47 555 0100" }]);
    // Its remove carries an empty value, which its serializer drops.
    const removed = await patch(`/Users/${user.id}`, [
      { op: "remove", path: "phoneNumbers[type eq mobile].value" },
    ]);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.phoneNumbers).toBeUndefined();
  });

  it("Keycloak keycloak-scim2-storage: `emails[type eq null].value` adds an email without a type, then replaces it (`eq null` matches a missing type)", async () => {
    const user = await createUser();
    const added = await patch(`/Users/${user.id}`, [
      { op: "add", path: "emails[type eq null].value", value: "typeless@example.com" },
    ]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.emails).toEqual([{ value: "typeless@example.com" }]);
    const replaced = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails[type eq null].value", value: "typeless2@example.com" },
    ]);
    expect(replaced.body.emails).toEqual([{ value: "typeless2@example.com" }]);
  });

  it("GitHub's documented Entra ID request: `emails[type eq 'work'].value` in single quotes", async () => {
    const user = await createUser({ emails: [{ type: "work", primary: true, value: "gh.old@example.com" }] });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails[type eq 'work'].value", value: "updatedEmail@example.com" },
      { op: "replace", path: "name.familyName", value: "updatedFamilyName" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ type: "work", primary: true, value: "updatedEmail@example.com" }]);
    expect(res.body.name).toEqual({ familyName: "updatedFamilyName" });
  });

  it("a members value filter with an unquoted id removes that member (Keycloak)", async () => {
    const a = await createUser();
    const b = await createUser();
    const group = await createGroup(`KC Members ${++n}`, [a.id, b.id]);
    const res = await patch(`/Groups/${group.id}`, [{ op: "remove", path: `members[value eq ${a.id}]` }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    const read = await get(`/Groups/${group.id}`);
    expect(read.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
  });

  it("query filters stay as RFC 7644 writes them: a single-quoted or unquoted literal there is 400 invalidFilter", async () => {
    for (const filter of ["userName eq 'someone@example.com'", "userName eq someone"]) {
      const res = await get(`/Users?filter=${q(filter)}`);
      expect(res.status, filter).toBe(400);
      expect(res.body).toMatchObject({ schemas: [ERROR], scimType: "invalidFilter" });
    }
    const user = await createUser();
    const unterminated = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails[type eq 'work].value", value: "x@example.com" },
    ]);
    expect(unterminated.status).toBe(400);
    expect(unterminated.body.scimType).toBe("invalidFilter");
  });
});

describe("`emails.value` without a filter (RFC 7644 §3.5.2.3, §3.5.2.2)", () => {
  it("replace sets the value of the user's email, keeping its type and primary (a client that holds one email per user)", async () => {
    const user = await createUser({
      emails: [{ value: "only.old@example.com", type: "work", primary: true }],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails.value", value: "only.new@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "only.new@example.com", type: "work", primary: true }]);
  });

  it("replace on a user without emails adds one (§3.5.2.3: a target that does not exist is treated as add)", async () => {
    const user = await createUser();
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails.value", value: "first@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ value: "first@example.com" }]);
    const noPath = await patch(`/Users/${user.id}`, [
      { op: "replace", value: { "emails.value": "second@example.com" } },
    ]);
    expect(noPath.body.emails).toEqual([{ value: "second@example.com" }]);
  });

  it("replace with several emails sets the value of each (no filter selects every element; §3.5.2.3 names a filter to pick one)", async () => {
    const user = await createUser({
      emails: [
        { value: "w@example.com", type: "work", primary: true },
        { value: "h@example.com", type: "home" },
      ],
    });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", path: "emails.value", value: "all@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { value: "all@example.com", type: "work", primary: true },
      { value: "all@example.com", type: "home" },
    ]);
    const one = await patch(`/Users/${user.id}`, [
      { op: "replace", path: 'emails[type eq "home"].value', value: "home@example.com" },
    ]);
    expect(one.body.emails).toEqual([
      { value: "all@example.com", type: "work", primary: true },
      { value: "home@example.com", type: "home" },
    ]);
  });

  it("remove of `emails.value` removes every email: an email without its value is none (RFC 7643 §2.4)", async () => {
    const user = await createUser({ emails: [{ value: "gone@example.com", type: "work", primary: true }] });
    const res = await patch(`/Users/${user.id}`, [{ op: "remove", path: "emails.value" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toBeUndefined();
    const found = await get(`/Users?filter=${q('emails.value eq "gone@example.com"')}`);
    expect(found.body.totalResults).toBe(0);
  });
});

describe("PATCH values as SCIM-SDK (the library of Keycloak's scim-for-keycloak) carries them", () => {
  it("members added and removed as a list of JSON strings, one per member (PatchRequestOperation `values`)", async () => {
    const a = await createUser();
    const b = await createUser();
    const c = await createUser();
    const group = await createGroup(`SDK Members ${++n}`, [a.id]);
    const add = await patch(`/Groups/${group.id}`, [
      {
        op: "add",
        path: "members",
        value: [JSON.stringify({ value: b.id }), JSON.stringify({ value: c.id })],
      },
    ]);
    expect(add.status, JSON.stringify(add.body)).toBe(204);
    const remove = await patch(`/Groups/${group.id}`, [
      {
        op: "remove",
        path: "members",
        value: [JSON.stringify({ value: a.id }), JSON.stringify({ value: c.id })],
      },
    ]);
    expect(remove.status, JSON.stringify(remove.body)).toBe(204);
    const read = await get(`/Groups/${group.id}`);
    expect(read.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
  });

  it("an operation without path whose value is a list of its one object (setValueNode wraps every value in an array)", async () => {
    const user = await createUser({ displayName: "Before" });
    const res = await patch(`/Users/${user.id}`, [
      { op: "replace", value: [{ active: false, displayName: "After" }] },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ active: false, displayName: "After" });
    const two = await patch(`/Users/${user.id}`, [
      { op: "replace", value: [{ title: "a" }, { title: "b" }] },
    ]);
    expect(two.status).toBe(400);
    expect(two.body.scimType).toBe("invalidSyntax");
  });

  it("scim-for-keycloak's group reconcile: a no-path replace whose value is a JSON string, with a members add beside it", async () => {
    const a = await createUser();
    const group = await createGroup(`example/developers ${++n}`);
    const res = await send("patch", `/Groups/${group.id}?attributes=displayName,externalId,members`, {
      schemas: [PATCH],
      Operations: [
        {
          op: "replace",
          value: JSON.stringify({ schemas: [GROUP], externalId: "kc-grp-1", displayName: group.displayName }),
        },
        { op: "add", path: "members", value: [{ value: a.id }] },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ externalId: "kc-grp-1", displayName: group.displayName });
    expect(res.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
  });
});
