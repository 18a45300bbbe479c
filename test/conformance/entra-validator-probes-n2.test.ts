/**
 * Probes (round n2) of the SCIM intake as Microsoft's SCIM Validator (scimvalidator.microsoft.com)
 * sends its user test cases (intake only, real Redis), for what the header replay
 * (test/fixtures/conformance/headers/entra-scim-validator.json) and the Entra pins of
 * idp-probes-d/g/j and entra-probes-n leave out:
 * - "Create User" with every attribute the validator fills (all multi-valued kinds of RFC 7643
 *   §4.1.2, `roles` with `primary: "True"`, every enterprise attribute), then the value-filter
 *   replaces and removes of its update cases: each touches its own part only;
 * - the enterprise `employeeNumber` (RFC 7643 §4.3) added, replaced and removed by its URN path:
 *   the user's `schemas` names the extension while it holds something, and a filter on it follows;
 * - a no-path operation whose `value` holds URN-qualified enterprise keys, `manager` among them as
 *   a bare id, as `{value}` and as `manager.value` (Microsoft Q&A 1665068: the validator puts
 *   several attributes in one operation's value).
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2-${++n}@romaguera.example`;

const suite = scimSourceSuite("conformance-entra-validator-probes-n2", "entra");
const { send, ids: idsFor } = suite;

type User = { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;

const patch = (id: string, Operations: unknown[]) =>
  send("patch", `/Users/${id}`, { schemas: [PATCH], Operations });
const createUser = (body: Record<string, unknown>) =>
  suite.created<User>("/Users", { schemas: [USER, ENT], ...body });
const stored = (id: string) => suite.stored<User>(id);

describe("the validator's Create User with every attribute, then its update cases", () => {
  it("round-trips every attribute; value-filter replaces and removes touch their own part only", async () => {
    const boss = await createUser({ userName: unique("boss") });
    const userName = unique("dale.mohr");
    const body = {
      userName,
      active: true,
      displayName: "XKWLCONOGMVT",
      title: "Engineer",
      userType: "Employee",
      preferredLanguage: "en-US",
      locale: "en-US",
      timezone: "America/Los_Angeles",
      nickName: "Dale",
      profileUrl: "https://profiles.example/dale",
      externalId: `ext-${n}`,
      name: {
        formatted: "Aric",
        familyName: "Nia",
        givenName: "Sandy",
        middleName: "M",
        honorificPrefix: "Dr",
      },
      emails: [{ type: "work", value: userName, primary: true }],
      phoneNumbers: [
        { type: "work", value: "+1 555 0100" },
        { type: "mobile", value: "+1 555 0101" },
        { type: "fax", value: "+1 555 0102" },
      ],
      addresses: [
        {
          type: "work",
          formatted: "1 Main St",
          streetAddress: "1 Main St",
          locality: "Redmond",
          region: "WA",
          postalCode: "98052",
          country: "US",
          primary: false,
        },
      ],
      roles: [{ primary: "True", display: "Reader", value: "reader", type: "app" }],
      photos: [{ value: "https://photos.example/dale.jpg", type: "photo" }],
      ims: [{ value: "dale.im", type: "skype" }],
      entitlements: [{ value: "e-1" }],
      x509Certificates: [{ value: "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" }],
      [ENT]: {
        employeeNumber: "4711",
        costCenter: "CC-1",
        organization: "Contoso",
        division: "R&D",
        department: "Platform",
        manager: { value: boss.id },
      },
    };
    const user = await createUser(body);
    const { roles, ...rest } = body;
    expect(user).toMatchObject(rest);
    expect(user.roles).toEqual([{ primary: true, display: "Reader", value: "reader", type: "app" }]);

    const replaced = await patch(user.id, [
      { op: "Replace", path: 'addresses[type eq "work"].streetAddress', value: "2 Main St" },
      { op: "Replace", path: 'phoneNumbers[type eq "fax"].value', value: "+1 555 0199" },
      { op: "Replace", path: 'roles[primary eq "True"].display', value: "Writer" },
      { op: "Replace", path: "name.honorificPrefix", value: "Mx" },
      { op: "Replace", path: `${ENT}:costCenter`, value: "CC-2" },
    ]);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    const afterReplace = await stored(user.id);
    expect(afterReplace.addresses).toEqual([{ ...body.addresses[0], streetAddress: "2 Main St" }]);
    expect(afterReplace.phoneNumbers).toEqual([
      body.phoneNumbers[0],
      body.phoneNumbers[1],
      { type: "fax", value: "+1 555 0199" },
    ]);
    expect(afterReplace.roles).toEqual([{ primary: true, display: "Writer", value: "reader", type: "app" }]);
    expect(afterReplace.name).toEqual({ ...body.name, honorificPrefix: "Mx" });
    expect(afterReplace[ENT]).toEqual({ ...body[ENT], costCenter: "CC-2" });

    const removed = await patch(user.id, [
      { op: "Remove", path: 'phoneNumbers[type eq "fax"]' },
      { op: "Remove", path: "nickName" },
      { op: "Remove", path: "name.middleName" },
      { op: "Remove", path: 'addresses[type eq "work"].region' },
      { op: "Remove", path: `${ENT}:organization` },
    ]);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const after = await stored(user.id);
    expect(after.phoneNumbers).toEqual([body.phoneNumbers[0], body.phoneNumbers[1]]);
    expect(after).not.toHaveProperty("nickName");
    expect(after.name).toEqual({
      formatted: "Aric",
      familyName: "Nia",
      givenName: "Sandy",
      honorificPrefix: "Mx",
    });
    expect(after.addresses).toEqual([
      {
        type: "work",
        formatted: "1 Main St",
        streetAddress: "2 Main St",
        locality: "Redmond",
        postalCode: "98052",
        country: "US",
        primary: false,
      },
    ]);
    const { organization: _gone, ...enterprise } = { ...body[ENT], costCenter: "CC-2" };
    expect(after[ENT]).toEqual(enterprise);
    expect(after.title).toBe("Engineer");
  });
});

describe("employeeNumber added, replaced and removed by its URN path", () => {
  it("schemas names the extension while it holds something; a filter on it follows", async () => {
    const user = await createUser({
      userName: unique("emp"),
      name: { familyName: "Nia", formatted: "Aric" },
    });
    expect(user.schemas).toEqual([USER]);
    const path = `${ENT}:employeeNumber`;

    const add = await patch(user.id, [
      { op: "Add", path, value: "E-1" },
      { op: "Add", path: "name.givenName", value: "Sandy" },
    ]);
    expect(add.status, JSON.stringify(add.body)).toBe(200);
    expect(add.body.schemas).toEqual([USER, ENT]);
    expect(add.body[ENT]).toEqual({ employeeNumber: "E-1" });
    expect(add.body.name).toEqual({ familyName: "Nia", formatted: "Aric", givenName: "Sandy" });
    expect(await idsFor(`${path} eq "E-1"`)).toEqual([user.id]);

    const replace = await patch(user.id, [{ op: "Replace", path, value: "E-2" }]);
    expect(replace.status).toBe(200);
    expect(replace.body[ENT]).toEqual({ employeeNumber: "E-2" });
    expect(await idsFor(`${path} eq "E-1"`)).toEqual([]);
    expect(await idsFor(`${path} eq "E-2"`)).toEqual([user.id]);

    const remove = await patch(user.id, [{ op: "Remove", path }]);
    expect(remove.status).toBe(200);
    expect(remove.body.schemas).toEqual([USER]);
    expect(remove.body).not.toHaveProperty(ENT);
    expect(await idsFor(`${path} eq "E-2"`)).toEqual([]);
    expect(await idsFor(`${path} pr`)).not.toContain(user.id);

    // Removing it again is a no-op (RFC 7644 §3.5.2.2 lets a remove of nothing succeed here).
    const version = (await stored(user.id)).meta.version;
    const again = await patch(user.id, [{ op: "Remove", path }]);
    expect(again.status).toBe(200);
    expect((await stored(user.id)).meta.version).toBe(version);
  });
});

describe("a no-path operation whose value holds URN-qualified enterprise keys", () => {
  it("sets the manager from a bare id, from {value} and from `manager.value`, with the other keys beside it", async () => {
    const [first, second, third] = [
      await createUser({ userName: unique("m1") }),
      await createUser({ userName: unique("m2") }),
      await createUser({ userName: unique("m3") }),
    ];
    const user = await createUser({ userName: unique("report") });

    const bare = await patch(user.id, [
      { op: "Add", value: { [`${ENT}:manager`]: first.id, [`${ENT}:employeeNumber`]: "7" } },
    ]);
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
    expect((await stored(user.id))[ENT]).toEqual({ manager: { value: first.id }, employeeNumber: "7" });

    const object = await patch(user.id, [
      { op: "Replace", value: { [`${ENT}:manager`]: { value: second.id }, [`${USER}:title`]: "Lead" } },
    ]);
    expect(object.status, JSON.stringify(object.body)).toBe(200);
    const afterObject = await stored(user.id);
    expect(afterObject[ENT]).toEqual({ manager: { value: second.id }, employeeNumber: "7" });
    expect(afterObject.title).toBe("Lead");

    const dotted = await patch(user.id, [{ op: "Replace", value: { [`${ENT}:manager.value`]: third.id } }]);
    expect(dotted.status, JSON.stringify(dotted.body)).toBe(200);
    expect((await stored(user.id))[ENT]).toEqual({ manager: { value: third.id }, employeeNumber: "7" });
    expect(await idsFor(`${ENT}:manager.value eq "${third.id}"`)).toEqual([user.id]);
    expect(await idsFor(`${ENT}:manager.value eq "${second.id}"`)).toEqual([]);
  });
});
