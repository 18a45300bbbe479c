import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import {
  checkOpaqueId,
  cleanName,
  statesAttribute,
  toCanonicalGroup,
  toCanonicalUser,
} from "../../../src/scim/canonical-resource.js";
import { loadFixture } from "./load-fixture.js";

const CORE = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

function rejects(fn: () => unknown, scimType: string, mention: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).scimType).toBe(scimType);
    expect((err as BadRequestError).message).toMatch(mention);
    return;
  }
  throw new Error("expected a BadRequestError");
}

describe("toCanonicalUser (RFC 7643 §4.1)", () => {
  it("keeps an Okta create as canonical SCIM, without password and groups", () => {
    const user = toCanonicalUser(loadFixture("okta/create-user").body);
    expect(user).toEqual({
      schemas: [CORE],
      userName: "test.user@okta.local",
      active: true,
      name: { givenName: "Test", familyName: "User" },
      emails: [{ primary: true, value: "test.user@okta.local", type: "work" }],
      displayName: "Test User",
      locale: "en-US",
      externalId: "00ujl29u0le5T6Aj10h7",
    });
  });

  it("ignores id and meta in a PUT body (Okta PUT)", () => {
    const user = toCanonicalUser(loadFixture("okta/replace-user-put").body);
    expect(user).not.toHaveProperty("id");
    expect(user).not.toHaveProperty("meta");
    expect(user.name).toEqual({ givenName: "Another", middleName: "", familyName: "User" });
  });

  it("keeps an Entra create and drops the empty roles", () => {
    const user = toCanonicalUser(loadFixture("entra/create-user").body);
    expect(user.schemas).toEqual([CORE]);
    expect(user.userName).toBe("Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1");
    expect(user).not.toHaveProperty("roles");
    expect(user).not.toHaveProperty("meta");
  });

  it("quirk: booleans as strings and manager as a bare id in a body (Entra)", () => {
    const user = toCanonicalUser(loadFixture("entra/create-user-string-booleans").body);
    expect(user.active).toBe(true);
    expect(user.emails).toEqual([{ primary: true, type: "work", value: "Barbara@contoso.com" }]);
    expect(user[ENT]).toEqual({
      department: "Finance",
      manager: { value: "a5ea0d3b-3f1c-4c6c-8d0f-6ab8cc8de4a1" },
    });
    expect(user.schemas).toEqual([CORE, ENT]);
  });

  it("defaults active to true", () => {
    expect(toCanonicalUser({ userName: "a" }).active).toBe(true);
    expect(toCanonicalUser({ userName: "a", active: false }).active).toBe(false);
  });

  it("matches attribute names case-insensitively and canonicalises their case", () => {
    const user = toCanonicalUser({
      USERNAME: "a",
      Name: { GIVENNAME: "B" },
      EMAILS: [{ VALUE: "a@x.com", Primary: "true" }],
      [ENT.toUpperCase()]: { DEPARTMENT: "Sales" },
    });
    expect(user).toEqual({
      schemas: [CORE, ENT],
      userName: "a",
      active: true,
      name: { givenName: "B" },
      emails: [{ value: "a@x.com", primary: true }],
      [ENT]: { department: "Sales" },
    });
  });

  it("includes the enterprise URN only when enterprise data is present", () => {
    expect(toCanonicalUser({ schemas: [CORE, ENT], userName: "a" }).schemas).toEqual([CORE]);
    expect(toCanonicalUser({ userName: "a", [ENT]: { employeeNumber: "7" } }).schemas).toEqual([CORE, ENT]);
  });

  it("keeps unknown extensions under their URN and lists them in schemas", () => {
    const custom = "urn:example:params:scim:schemas:extension:acme:2.0:User";
    const user = toCanonicalUser({ schemas: [CORE, custom], userName: "a", [custom]: { badge: 42 } });
    expect(user[custom]).toEqual({ badge: 42 });
    expect(user.schemas).toEqual([CORE, custom]);
  });

  it("accepts URN-prefixed attribute keys in a body", () => {
    const user = toCanonicalUser({ userName: "a", [`${ENT}:department`]: "Ops", [`${CORE}:title`]: "Boss" });
    expect(user[ENT]).toEqual({ department: "Ops" });
    expect(user.title).toBe("Boss");
  });

  it("accepts the manager as an object or an array", () => {
    expect(toCanonicalUser({ userName: "a", [ENT]: { manager: { value: "m1" } } })[ENT]).toEqual({
      manager: { value: "m1" },
    });
    expect(
      toCanonicalUser({ userName: "a", [ENT]: { manager: [{ value: "m2", $ref: null }] } })[ENT],
    ).toEqual({
      manager: { value: "m2" },
    });
    expect(toCanonicalUser({ userName: "a", [ENT]: { manager: "" } })).not.toHaveProperty(ENT);
  });

  it("treats null as unassigned (RFC 7643 §2.5)", () => {
    const user = toCanonicalUser({ userName: "a", title: null, name: { givenName: null } });
    expect(user).not.toHaveProperty("title");
    expect(user).not.toHaveProperty("name");
  });

  it("keeps unknown core attributes", () => {
    expect(toCanonicalUser({ userName: "a", favouriteColour: "blue" }).favouriteColour).toBe("blue");
  });

  it("rejects a missing or empty userName naming the attribute", () => {
    rejects(() => toCanonicalUser({ displayName: "x" }), "invalidValue", /userName/);
    rejects(() => toCanonicalUser({ userName: "  " }), "invalidValue", /userName/);
    rejects(() => toCanonicalUser({ userName: 5 }), "invalidValue", /userName/);
  });

  it("rejects values of the wrong type naming the attribute", () => {
    rejects(
      () => toCanonicalUser({ userName: "a", active: "yes" }),
      "invalidValue",
      /"active" must be a boolean/,
    );
    rejects(
      () => toCanonicalUser({ userName: "a", name: "Bob" }),
      "invalidValue",
      /"name" must be an object/,
    );
    rejects(() => toCanonicalUser({ userName: "a", title: ["x", "y"] }), "invalidValue", /"title"/);
    rejects(
      () => toCanonicalUser({ userName: "a", emails: [{ value: 5 }] }),
      "invalidValue",
      /"emails.value" must be a string/,
    );
    rejects(
      () => toCanonicalUser({ userName: "a", [ENT]: { department: 5 } }),
      "invalidValue",
      /enterprise:2.0:User:department/,
    );
  });

  it("leaves out elements of multi-valued attributes without their value (RFC 7643 §2.4, §2.5)", () => {
    const user = toCanonicalUser({
      userName: "a",
      emails: [
        { type: "work", primary: true, value: null },
        { type: "home", value: "h@example.com" },
      ],
      phoneNumbers: [{ type: "mobile", display: "no number" }],
      addresses: [
        { type: "work", primary: true },
        { type: "home", locality: "Springfield" },
      ],
      roles: [{ value: "admin" }],
    });
    expect(user.emails).toEqual([{ type: "home", value: "h@example.com" }]);
    expect(user).not.toHaveProperty("phoneNumbers");
    expect(user.addresses).toEqual([{ type: "home", locality: "Springfield" }]);
    expect(user.roles).toEqual([{ value: "admin" }]);
  });

  it("rejects a body that is not an object with invalidSyntax", () => {
    rejects(() => toCanonicalUser([]), "invalidSyntax", /JSON object/);
    rejects(() => toCanonicalUser("x"), "invalidSyntax", /JSON object/);
    rejects(() => toCanonicalUser({ userName: "a", schemas: "x" }), "invalidSyntax", /schemas/);
  });
});

describe("toCanonicalGroup (RFC 7643 §4.2)", () => {
  it("returns the member ids apart from the document", () => {
    const { resource, members } = toCanonicalGroup({
      schemas: [GROUP],
      displayName: "Admins",
      members: [
        { value: "u1", display: "Bob", $ref: "https://x/Users/u1", type: "User" },
        { value: "u2" },
        { value: "u1" },
      ],
    });
    expect(resource).toEqual({ schemas: [GROUP], displayName: "Admins" });
    expect(members).toEqual(["u1", "u2"]);
  });

  it("accepts an Okta create with no members", () => {
    expect(toCanonicalGroup(loadFixture("okta/create-group").body)).toEqual({
      resource: { schemas: [GROUP], displayName: "Test SCIMv2" },
      members: [],
    });
  });

  it("accepts an Entra create, ignoring meta and its non-URN schema", () => {
    const { resource } = toCanonicalGroup(loadFixture("entra/create-group").body);
    expect(resource).toEqual({
      schemas: [GROUP],
      externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
      displayName: "displayName",
    });
  });

  it("requires displayName", () => {
    rejects(() => toCanonicalGroup({ members: [] }), "invalidValue", /displayName/);
  });

  it("requires a value on each member", () => {
    rejects(
      () => toCanonicalGroup({ displayName: "x", members: [{ display: "Bob" }] }),
      "invalidValue",
      /members/,
    );
  });
});

/** NUL, the other C0 controls (tab and line breaks included) and DEL, at the edges and inside. */
const CONTROLS = ["\u0000", "\u0001", "\t", "\n", "\r", "\u001b", "\u001f", "\u007f"];
const withControl = (c: string) => [`ada${c}@example.com`, `${c}ada@example.com`, `ada@example.com${c}`];

describe("statesAttribute (a PUT without members or active keeps them)", () => {
  const G = "urn:ietf:params:scim:schemas:core:2.0:Group";
  it.each([
    [{ displayName: "A", members: [] }, true],
    [{ displayName: "A", Members: [{ value: "u" }] }, true],
    [{ displayName: "A", [`${G}:members`]: [] }, true],
    [{ [G]: { displayName: "A", MEMBERS: [] } }, true],
    [{ displayName: "A" }, false],
    [{ displayName: "A", members: null }, false],
    [{ [G]: { displayName: "A" } }, false],
    [{ displayName: "A", memberz: [] }, false],
  ] as const)("%j -> %s", (body, stated) => {
    expect(statesAttribute(body, "members", "Group")).toBe(stated);
  });

  const U = "urn:ietf:params:scim:schemas:core:2.0:User";
  it.each([
    [{ userName: "a", active: false }, true],
    [{ userName: "a", Active: "False" }, true],
    [{ userName: "a", [`${U}:active`]: true }, true],
    [{ [U]: { userName: "a", ACTIVE: false } }, true],
    [{ userName: "a" }, false],
    [{ userName: "a", active: null }, false],
    [{ [`${U.replace("User", "Group")}`]: { active: false } }, false],
  ] as const)("active in %j -> %s", (body, stated) => {
    expect(statesAttribute(body, "active", "User")).toBe(stated);
  });
});

describe("name hygiene (userName, group displayName) and externalId", () => {
  it("cleanName returns a clean name as it is (the same string: nothing allocated)", () => {
    const name = "ada@example.com";
    expect(cleanName(name, "userName")).toBe(name);
    expect(cleanName("Ada Lovelace", "userName")).toBe("Ada Lovelace");
    expect(cleanName("Zoë · Ω", "userName")).toBe("Zoë · Ω");
  });

  it("cleanName trims surrounding whitespace", () => {
    expect(cleanName(" ada@example.com ", "userName")).toBe("ada@example.com");
    expect(cleanName("\u00a0ada@example.com\u2003", "userName")).toBe("ada@example.com");
  });

  it.each(CONTROLS)("cleanName refuses control character %j anywhere, naming the attribute", (c) => {
    for (const name of withControl(c)) {
      rejects(() => cleanName(name, "userName"), "invalidValue", /"userName".*control characters/);
    }
  });

  it("checkOpaqueId refuses control characters but keeps whitespace (externalId is opaque)", () => {
    expect(() => checkOpaqueId(" ext 1 ", "externalId")).not.toThrow();
    for (const c of CONTROLS) {
      rejects(() => checkOpaqueId(`ext${c}1`, "externalId"), "invalidValue", /"externalId"/);
    }
  });

  it("toCanonicalUser trims userName and refuses control characters in it", () => {
    expect(toCanonicalUser({ userName: "  ada@example.com " }).userName).toBe("ada@example.com");
    rejects(() => toCanonicalUser({ userName: "ada\u0000@example.com" }), "invalidValue", /"userName"/);
    rejects(() => toCanonicalUser({ userName: "ada@example.com\u007f" }), "invalidValue", /"userName"/);
    rejects(() => toCanonicalUser({ userName: "   " }), "invalidValue", /userName/);
  });

  it("toCanonicalUser keeps externalId as sent but refuses control characters in it", () => {
    expect(toCanonicalUser({ userName: "a", externalId: " 00u1 " }).externalId).toBe(" 00u1 ");
    rejects(
      () => toCanonicalUser({ userName: "a", externalId: "00u\u00001" }),
      "invalidValue",
      /"externalId"/,
    );
  });

  it("toCanonicalGroup trims displayName and refuses control characters in it and in externalId", () => {
    expect(toCanonicalGroup({ displayName: " Ops " }).resource.displayName).toBe("Ops");
    rejects(() => toCanonicalGroup({ displayName: "Ops\u0000" }), "invalidValue", /"displayName"/);
    rejects(() => toCanonicalGroup({ displayName: "Ops\nTeam" }), "invalidValue", /"displayName"/);
    expect(toCanonicalGroup({ displayName: "Ops", externalId: " g 1 " }).resource.externalId).toBe(" g 1 ");
    rejects(
      () => toCanonicalGroup({ displayName: "Ops", externalId: "g\u001f" }),
      "invalidValue",
      /"externalId"/,
    );
  });

  it("a user's display name and other attributes are left alone", () => {
    const user = toCanonicalUser({ userName: "a", displayName: " Ada ", title: "x\ty" });
    expect(user.displayName).toBe(" Ada ");
    expect(user.title).toBe("x\ty");
  });

  it("a value the stored resource already holds is kept as it is (changes to other attributes)", () => {
    const stored = { userName: " legacy\u0001 ", externalId: "e\u0000" };
    expect(toCanonicalUser({ ...stored, active: false }, stored)).toMatchObject(stored);
    expect(toCanonicalUser({ ...stored, userName: " new " }, stored).userName).toBe("new");
    rejects(() => toCanonicalUser({ userName: "n\u0000" }, stored), "invalidValue", /"userName"/);
    const group = { displayName: " Old ", externalId: "g" };
    expect(toCanonicalGroup({ ...group }, group).resource.displayName).toBe(" Old ");
  });
});
