import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { applyUserPatch } from "../../../src/scim/patch.js";
import type { JsonObject, PatchOperation } from "../../../src/scim/scim-types.js";
import { loadFixture } from "./load-fixture.js";

const CORE = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const base = (): JsonObject => ({
  schemas: [CORE],
  id: "u1",
  userName: "bjensen@example.com",
  active: true,
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "bjensen@example.com", type: "work", primary: true },
    { value: "babs@jensen.org", type: "home" },
  ],
});

const patch = (ops: PatchOperation[], resource: JsonObject = base()) => applyUserPatch(resource, ops);
const patchFixture = (name: string, resource: JsonObject = base()) =>
  applyUserPatch(resource, normalizePatchRequest(loadFixture(name).body));

function fails(ops: PatchOperation[], scimType: string, resource: JsonObject = base()): void {
  try {
    patch(ops, resource);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).scimType).toBe(scimType);
    return;
  }
  throw new Error(`expected ${scimType}`);
}

describe("applyUserPatch (RFC 7644 §3.5.2)", () => {
  it("quirk: Okta no-path replace {active: false} deactivates", () => {
    const out = patchFixture("okta/deactivate-user");
    expect(out.active).toBe(false);
    expect(out.userName).toBe("bjensen@example.com");
  });

  it('quirk: Entra replace active with the string "False"', () => {
    expect(patchFixture("entra/disable-user-string-boolean").active).toBe(false);
    expect(
      patch([{ op: "replace", path: "active", value: "True" }], { ...base(), active: false }).active,
    ).toBe(true);
  });

  it("quirk: Entra value-filter path replaces the work email and a sub-attribute", () => {
    const out = patchFixture("entra/update-user-multivalued");
    expect(out.emails).toEqual([
      { value: "updatedEmail@microsoft.com", type: "work", primary: true },
      { value: "babs@jensen.org", type: "home" },
    ]);
    expect(out.name).toEqual({ givenName: "Barbara", familyName: "updatedFamilyName" });
  });

  it("quirk: Entra value-filter paths create the missing element and merge later ops into it", () => {
    const out = patchFixture("entra/add-address-filter-creates");
    expect(out.addresses).toEqual([
      { type: "work", streetAddress: "1 Microsoft Way", locality: "Redmond", country: "US" },
    ]);
    expect(out.phoneNumbers).toEqual([{ type: "mobile", value: "+1 555 0100" }]);
  });

  it("quirk: Entra manager as a bare id string", () => {
    expect(patchFixture("entra/update-manager-string")[ENT]).toEqual({
      manager: { value: "2819c223-7f76-453a-919d-ad10a6e7a" },
    });
  });

  it("quirk: Entra manager as an array of one object", () => {
    const out = patchFixture("entra/update-manager-array");
    expect(out[ENT]).toEqual({ manager: { value: "2819c223-7f76-453a-919d-ad10a6e7a" } });
    expect(out.schemas).toEqual([CORE, ENT]);
  });

  it("quirk: no-path replace with dotted and URN-prefixed keys (Entra)", () => {
    const out = patchFixture("entra/no-path-dotted-keys");
    expect(out.active).toBe(false);
    expect(out.name).toEqual({ givenName: "Barbara", familyName: "Jensen" });
    expect(out[ENT]).toEqual({
      department: "Tech Infrastructure",
      manager: { value: "2819c223-7f76-453a-919d-ad10a6e7a" },
    });
  });

  it("quirk: attribute names in paths match case-insensitively", () => {
    const out = patch([
      { op: "replace", path: "NAME.GIVENNAME", value: "Babs" },
      { op: "replace", path: 'EMAILS[TYPE EQ "HOME"].VALUE', value: "b@home.org" },
      { op: "add", path: `${ENT.toLowerCase()}:DEPARTMENT`, value: "Ops" },
    ]);
    expect(out.name).toEqual({ givenName: "Babs", familyName: "Jensen" });
    expect((out.emails as JsonObject[])[1]).toEqual({ value: "b@home.org", type: "home" });
    expect(out[ENT]).toEqual({ department: "Ops" });
  });

  it("add of a single-valued attribute sets it", () => {
    expect(patch([{ op: "add", path: "title", value: "Boss" }]).title).toBe("Boss");
  });

  it("add to a multi-valued attribute appends without duplicates", () => {
    const out = patch([
      {
        op: "add",
        path: "emails",
        value: [
          { value: "BJENSEN@example.com", type: "work" },
          { value: "new@x.com", type: "other" },
        ],
      },
    ]);
    expect(out.emails).toEqual([
      { value: "BJENSEN@example.com", type: "work", primary: true },
      { value: "babs@jensen.org", type: "home" },
      { value: "new@x.com", type: "other" },
    ]);
  });

  it("keeps at most one primary element (RFC 7643 §2.4)", () => {
    const out = patch([
      { op: "add", path: "emails", value: [{ value: "p@x.com", type: "other", primary: true }] },
    ]);
    expect((out.emails as JsonObject[]).filter((e) => e.primary === true)).toEqual([
      { value: "p@x.com", type: "other", primary: true },
    ]);
  });

  it("add of a complex attribute merges its sub-attributes", () => {
    expect(patch([{ op: "add", path: "name", value: { middleName: "J" } }]).name).toEqual({
      givenName: "Barbara",
      familyName: "Jensen",
      middleName: "J",
    });
  });

  it("replace of a complex attribute leaves unspecified sub-attributes (RFC 7644 §3.5.2.3)", () => {
    expect(patch([{ op: "replace", value: { name: { givenName: "Babs" } } }]).name).toEqual({
      givenName: "Babs",
      familyName: "Jensen",
    });
  });

  it("replace of a multi-valued attribute replaces the whole list", () => {
    expect(patch([{ op: "replace", path: "emails", value: [{ value: "only@x.com" }] }]).emails).toEqual([
      { value: "only@x.com" },
    ]);
  });

  it("replace of a filtered element without a sub-attribute replaces that element's sub-attributes given", () => {
    const out = patch([
      { op: "replace", path: 'emails[type eq "home"]', value: { value: "h@x.com", type: "home" } },
    ]);
    expect((out.emails as JsonObject[])[1]).toEqual({ value: "h@x.com", type: "home" });
  });

  it("replace of a filtered element keeps the sub-attributes its value leaves out (RFC 7644 §3.5.2.3)", () => {
    // A complex target: "Sub-attributes that are not specified in the value parameter are left
    // unchanged". Replaced whole, the work email lost its type (the filter no longer found it: the
    // next `emails[type eq "work"].value` added a second email) and the user its primary email.
    const out = patch([{ op: "replace", path: 'emails[type eq "work"]', value: { value: "w2@x.com" } }]);
    expect(out.emails).toEqual([
      { value: "w2@x.com", type: "work", primary: true },
      { value: "babs@jensen.org", type: "home" },
    ]);
    const address = {
      addresses: [{ type: "work", country: "DE", locality: "Bonn", primary: true }],
    };
    expect(
      patch([{ op: "replace", path: 'addresses[type eq "work"]', value: { locality: "Berlin" } }], {
        ...base(),
        ...address,
      }).addresses,
    ).toEqual([{ type: "work", country: "DE", locality: "Berlin", primary: true }]);
    // A sub-attribute named with null is cleared, as a replace of that sub-attribute clears it.
    expect(
      patch([{ op: "replace", path: 'emails[type eq "work"]', value: { value: "w3@x.com", primary: null } }])
        .emails,
    ).toEqual([
      { value: "w3@x.com", type: "work" },
      { value: "babs@jensen.org", type: "home" },
    ]);
  });

  it("leniency: a filtered replace whose value is an array of one element", () => {
    const out = patch([
      { op: "replace", path: 'emails[type eq "home"]', value: [{ value: "h@x.com", type: "home" }] },
    ]);
    expect((out.emails as JsonObject[])[1]).toEqual({ value: "h@x.com", type: "home" });
  });

  it("no-path add of an unknown extension object keeps it under its URN", () => {
    const custom = "urn:okta:acme:1.0:profile:user";
    const out = patch([{ op: "add", value: { [custom]: { badge: "7" } } }]);
    expect(out[custom]).toEqual({ badge: "7" });
    expect(out.schemas).toEqual([CORE, custom]);
  });

  it("remove of an attribute, a sub-attribute and a filtered element", () => {
    const out = patch([
      { op: "remove", path: "name.givenName" },
      { op: "remove", path: 'emails[type eq "home"]' },
      { op: "remove", path: "active" },
    ]);
    expect(out.name).toEqual({ familyName: "Jensen" });
    expect(out.emails).toEqual([{ value: "bjensen@example.com", type: "work", primary: true }]);
    expect(out.active).toBe(true); // RFC 7643 default
  });

  it("remove of a sub-attribute of a filtered element", () => {
    const out = patch([{ op: "remove", path: 'emails[type eq "work"].primary' }]);
    expect((out.emails as JsonObject[])[0]).toEqual({ value: "bjensen@example.com", type: "work" });
  });

  it("remove with a value removes only those elements of a multi-valued attribute", () => {
    const out = patch([{ op: "remove", path: "emails", value: [{ value: "babs@jensen.org" }] }]);
    expect(out.emails).toEqual([{ value: "bjensen@example.com", type: "work", primary: true }]);
  });

  it("leniency: remove of something absent is a no-op", () => {
    const out = patch([
      { op: "remove", path: "nickName" },
      { op: "remove", path: 'addresses[type eq "work"]' },
      { op: "remove", path: 'emails[type eq "other"]' },
      { op: "remove", path: `${ENT}:department` },
    ]);
    expect(out).toEqual({ ...base(), id: undefined, schemas: [CORE] });
  });

  it("removes the whole enterprise extension and its schema", () => {
    const out = patch([{ op: "remove", path: ENT }], { ...base(), [ENT]: { department: "x" } });
    expect(out).not.toHaveProperty(ENT);
    expect(out.schemas).toEqual([CORE]);
  });

  it("accepts password but never keeps it", () => {
    expect(patch([{ op: "replace", path: "password", value: "s3cret" }])).not.toHaveProperty("password");
    expect(patch([{ op: "replace", value: { password: "s3cret" } }])).not.toHaveProperty("password");
  });

  it("applies operations in order", () => {
    const out = patch([
      { op: "replace", path: "title", value: "A" },
      { op: "remove", path: "title" },
      { op: "add", path: "title", value: "B" },
    ]);
    expect(out.title).toBe("B");
  });

  it("a userName set by PATCH is trimmed, with or without a path", () => {
    expect(patch([{ op: "replace", path: "userName", value: " babs@example.com " }]).userName).toBe(
      "babs@example.com",
    );
    expect(patch([{ op: "replace", value: { userName: "  babs@example.com" } }]).userName).toBe(
      "babs@example.com",
    );
  });

  it("invalidValue: a userName or externalId with control characters, set by PATCH", () => {
    fails([{ op: "replace", path: "userName", value: "babs\u0000@example.com" }], "invalidValue");
    fails([{ op: "replace", value: { userName: "babs@example.com\u007f" } }], "invalidValue");
    fails([{ op: "add", path: "externalId", value: "ext\n1" }], "invalidValue");
  });

  it("a PATCH of other attributes keeps a userName stored before the hygiene rules", () => {
    const legacy = { ...base(), userName: " bjensen@example.com ", externalId: "x\u0000" };
    const out = patch([{ op: "replace", path: "active", value: false }], legacy);
    expect(out).toMatchObject({ userName: " bjensen@example.com ", externalId: "x\u0000", active: false });
  });

  it("noTarget: remove without a path", () => {
    fails([{ op: "remove" }], "noTarget");
  });

  it("noTarget: a filter that matches nothing and cannot describe a new element", () => {
    fails([{ op: "replace", path: 'emails[value co "zzz"].type', value: "work" }], "noTarget");
  });

  it("invalidPath: a path that is not an attribute path", () => {
    fails([{ op: "add", path: "emails[type eq", value: "x" }], "invalidPath");
    fails([{ op: "add", path: 'emails[type eq "work"]x', value: "x" }], "invalidPath");
    fails([{ op: "add", path: "na me", value: "x" }], "invalidPath");
    fails([{ op: "add", path: 'name.givenName[type eq "x"]', value: "x" }], "invalidPath");
  });

  it("mutability: a path to a read-only attribute", () => {
    fails([{ op: "replace", path: "id", value: "other" }], "mutability");
    fails([{ op: "replace", path: "meta.created", value: "2020-01-01T00:00:00Z" }], "mutability");
  });

  it("a no-path value that echoes read-only attributes (id, meta, groups) applies the rest", () => {
    // A client that PATCHes with the resource it read back, as a POST or PUT body may carry them.
    const out = patch([
      {
        op: "replace",
        value: {
          id: "other",
          meta: { created: "2020-01-01T00:00:00Z" },
          groups: [{ value: "g1", display: "Admins" }],
          GROUPS: [],
          [`${CORE}:groups`]: [{ value: "g2" }],
          displayName: "Babs",
        },
      },
    ]);
    expect(out.displayName).toBe("Babs");
    expect(out.id).not.toBe("other");
    expect(out).not.toHaveProperty("groups");
    expect(out).not.toHaveProperty("GROUPS");
    expect(out).not.toHaveProperty("meta");
    fails([{ op: "add", path: "groups", value: [{ value: "g1" }] }], "mutability");
  });

  it("invalidValue: a value of the wrong type, naming the attribute", () => {
    fails([{ op: "replace", path: "active", value: "maybe" }], "invalidValue");
    fails([{ op: "replace", path: "userName", value: "  " }], "invalidValue");
  });

  it("mutability: removing the required userName, or setting it to null (RFC 7644 §3.5.2.2)", () => {
    fails([{ op: "remove", path: "userName" }], "mutability");
    fails([{ op: "replace", path: "userName", value: null }], "mutability");
    fails([{ op: "replace", value: { userName: null } }], "mutability");
  });

  it("a remove of userName followed by an add of a new one in the same PATCH renames (the result has one)", () => {
    const out = patch([
      { op: "remove", path: "userName" },
      { op: "add", path: "userName", value: "babs@example.com" },
    ]);
    expect(out.userName).toBe("babs@example.com");
    fails(
      [
        { op: "add", path: "userName", value: "babs@example.com" },
        { op: "remove", path: "userName" },
      ],
      "mutability",
    );
  });

  it("is atomic: a failing op leaves the input untouched and applies nothing", () => {
    const input = base();
    const snapshot = structuredClone(input);
    fails(
      [
        { op: "replace", path: "title", value: "changed" },
        { op: "replace", path: 'emails[type eq "work"].value', value: "x@y.com" },
        { op: "replace", path: "active", value: "maybe" },
      ],
      "invalidValue",
      input,
    );
    expect(input).toEqual(snapshot);
  });

  it("never mutates the input on success", () => {
    const input = base();
    const snapshot = structuredClone(input);
    patch([{ op: "replace", path: 'emails[type eq "work"].value', value: "x@y.com" }], input);
    expect(input).toEqual(snapshot);
  });

  it("drops id from the result and keeps unknown extensions", () => {
    const custom = "urn:example:acme:2.0:User";
    const out = patch([{ op: "add", path: `${custom}:badge`, value: 7 }]);
    expect(out).not.toHaveProperty("id");
    expect(out[custom]).toEqual({ badge: 7 });
    expect(out.schemas).toEqual([CORE, custom]);
  });
});
