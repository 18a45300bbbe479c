/**
 * Acceptance probes (round l) of the SCIM intake, as the identity providers tested least put
 * requests on the wire, written from their public documentation (intake only, real Redis):
 * - PingOne / PingFederate SCIM provisioners: the admin-written "User Filter Expression" with `%s`
 *   for the identifier (PingOne's documented examples: `username Eq "%s"`), Active Directory DNs
 *   as externalId and as group names (commas, `=`, and the `\,` escape of RFC 4514), disabled
 *   users provisioned as such;
 * - Google Workspace auto-provisioning (custom SAML app): the connection probe `/Users?count=1`,
 *   users with `emails` of type work and primary, suspension and restore;
 * - JumpCloud: the test user and group of "Test Connection", group members removed by a value list;
 * - OneLogin: group membership PATCHes carrying `display`;
 * - Keycloak SCIM plugins: filters and projections with URN-qualified core attribute names;
 *   keycloak-scim-outbound (Termindiego25), whose create writes "" for what the Keycloak user lacks
 *   (`name`, the one work email) and whose every update is the same PatchOp (an `add` of externalId,
 *   `replace` of `name.givenName`, `name.familyName`, `emails[primary eq true].value`, `active`).
 * Earlier rounds: idp-probes-a/d/e/g/i/j/k, idp-intake-edges, scim-edges, test/conformance.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

let n = 0;
const unique = (stem: string) => `${stem}.l${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const { get, send } = scimSourceSuite("acceptance-idp-probes-l", "okta");
const patch = (path: string, Operations: unknown[]) => send("patch", path, { schemas: [PATCH], Operations });

type Resource = { id: string; meta: { version: string }; schemas: string[] } & Record<string, unknown>;

async function created(res: { status: number; body: unknown }): Promise<Resource> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Resource;
}
async function ids(path: string): Promise<string[]> {
  const res = await get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.Resources as { id: string }[]).map((r) => r.id);
}

describe("PingOne / PingFederate SCIM provisioners", () => {
  it('PingOne\'s documented filter expression `username Eq "%s"`: names and operators in any case (RFC 7644 §3.4.2.2)', async () => {
    const user = await created(await send("post", "/Users", { schemas: [USER], userName: unique("ping") }));
    const userName = String(user.userName);
    expect(await ids(`/Users?filter=${q(`username Eq "${userName}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`USERNAME EQ "${userName.toUpperCase()}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`Emails.Value Co "${userName.split("@")[0]}"`)}`)).toEqual([]);
  });

  it("an Active Directory DN as externalId, with RFC 4514's `\\,` escape, is stored as sent and found by `externalId eq` (JSON-escaped in the filter)", async () => {
    const dn = `CN=Doe\\, Jane ${++n},OU=Staff,DC=example,DC=com`;
    const user = await created(
      await send("post", "/Users", { schemas: [USER, ENTERPRISE], userName: unique("dn"), externalId: dn }),
    );
    expect(user.externalId).toBe(dn);
    const literal = JSON.stringify(dn); // the filter's string literal is JSON (RFC 7644 §3.4.2.2)
    expect(await ids(`/Users?filter=${q(`externalId eq ${literal}`)}`)).toEqual([user.id]);
  });

  it("a group named by its DN (PingFederate's group name source) is created, found by displayName, and renamed", async () => {
    const dn = `CN=Sales ${++n},OU=Groups,DC=example,DC=com`;
    const group = await created(await send("post", "/Groups", { schemas: [GROUP], displayName: dn }));
    expect(await ids(`/Groups?filter=${q(`displayName eq ${JSON.stringify(dn.toLowerCase())}`)}`)).toEqual([
      group.id,
    ]);
    const renamed = await patch(`/Groups/${group.id}`, [
      { op: "replace", path: "displayName", value: `${dn},O=Acme` },
    ]);
    expect([200, 204], JSON.stringify(renamed.body)).toContain(renamed.status);
    expect((await get(`/Groups/${group.id}`)).body.displayName).toBe(`${dn},O=Acme`);
  });

  it('"provision disabled users": a create with `active: false` stays inactive, and a PUT that re-enables it activates it', async () => {
    const user = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("disabled"), active: false }),
    );
    expect(user.active).toBe(false);
    const put = await send("put", `/Users/${user.id}`, {
      schemas: [USER],
      userName: user.userName,
      active: true,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.active).toBe(true);
  });
});

describe("Google Workspace auto-provisioning", () => {
  it("the connection probe `GET /Users?count=1` answers a ListResponse", async () => {
    const res = await get("/Users?count=1");
    expect(res.status).toBe(200);
    expect(res.body.schemas).toEqual([LIST]);
    expect(res.body.Resources.length).toBeLessThanOrEqual(1);
  });

  it("a user with a primary work email, suspended and restored by a replace of `active`", async () => {
    const userName = unique("google");
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER],
        userName,
        name: { givenName: "Gail", familyName: "Oogle" },
        emails: [{ value: userName, type: "work", primary: true }],
        active: true,
      }),
    );
    for (const active of [false, true]) {
      const res = await patch(`/Users/${user.id}`, [{ op: "replace", path: "active", value: active }]);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.active).toBe(active);
    }
    expect(
      await ids(`/Users?filter=${q(`emails[type eq "work" and value eq "${userName.toUpperCase()}"]`)}`),
    ).toEqual([user.id]);
  });
});

describe("JumpCloud and OneLogin group membership", () => {
  it("OneLogin: members added with `display`, removed by a value list, the group lists the one left", async () => {
    const [a, b] = [
      await created(await send("post", "/Users", { schemas: [USER], userName: unique("ol") })),
      await created(await send("post", "/Users", { schemas: [USER], userName: unique("ol") })),
    ];
    const group = await created(
      await send("post", "/Groups", { schemas: [GROUP], displayName: `OL ${++n}` }),
    );
    const added = await patch(`/Groups/${group.id}`, [
      {
        op: "add",
        path: "members",
        value: [
          { value: a.id, display: a.userName },
          { value: b.id, display: b.userName },
        ],
      },
    ]);
    expect([200, 204], JSON.stringify(added.body)).toContain(added.status);
    const removed = await patch(`/Groups/${group.id}`, [
      { op: "remove", path: "members", value: [{ value: a.id, display: a.userName }] },
    ]);
    expect([200, 204], JSON.stringify(removed.body)).toContain(removed.status);
    const after = await get(`/Groups/${group.id}`);
    expect((after.body.members as { value: string }[]).map((m) => m.value)).toEqual([b.id]);
  });
});

describe("Keycloak SCIM plugins: URN-qualified core attribute names", () => {
  it("a filter and `attributes` naming core attributes by their full URN", async () => {
    const user = await created(
      await send("post", "/Users", { schemas: [USER], userName: unique("kc"), displayName: "KC" }),
    );
    expect(await ids(`/Users?filter=${q(`${USER}:userName eq "${user.userName}"`)}`)).toEqual([user.id]);
    const res = await get(`/Users/${user.id}?attributes=${q(`${USER}:displayName`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.displayName).toBe("KC");
    expect(res.body).not.toHaveProperty("userName");
  });
});

describe("Keycloak keycloak-scim-outbound: blanks on create, one PatchOp for every update", () => {
  const update = (externalId: string, email: string) => [
    { op: "add", path: "externalId", value: externalId },
    { op: "replace", path: "name.givenName", value: "Kay" },
    { op: "replace", path: "name.familyName", value: "" },
    { op: "replace", path: "emails[primary eq true].value", value: email },
    { op: "replace", path: "active", value: true },
  ];

  it("a user created with a blank email gets the address the next update sets, as its one primary email", async () => {
    const externalId = `kc-${++n}`;
    const user = await created(
      await send("post", "/Users", {
        schemas: [USER],
        externalId,
        userName: `kcuser${n}`,
        name: { givenName: "", familyName: "" },
        emails: [{ value: "", type: "work", primary: true }],
        active: true,
      }),
    );
    const res = await patch(`/Users/${user.id}`, update(externalId, `kay${n}@example.com`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.externalId).toBe(externalId);
    expect(res.body.name.givenName).toBe("Kay");
    expect(res.body.emails).toEqual([{ type: "work", primary: true, value: `kay${n}@example.com` }]);
    expect(await ids(`/Users?filter=${q(`emails.value eq "KAY${n}@example.com"`)}`)).toEqual([user.id]);
  });

  it("a user created without emails gets one from `emails[primary eq true].value` (RFC 7644 §3.5.2.3: a missing target is added)", async () => {
    const externalId = `kc-${++n}`;
    const user = await created(
      await send("post", "/Users", { schemas: [USER], externalId, userName: `kcuser${n}`, active: true }),
    );
    const res = await patch(`/Users/${user.id}`, update(externalId, `dee${n}@example.com`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([{ primary: true, value: `dee${n}@example.com` }]);
  });
});
