import { describe, expect, it } from "vitest";
import { projectResource } from "../../../src/scim/projection.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const CORE = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

const user: JsonObject = {
  schemas: [CORE, ENT],
  id: "u1",
  userName: "bjensen",
  password: "never-returned",
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "a@x.com", type: "work" },
    { value: "b@x.com", type: "home" },
  ],
  [ENT]: { department: "Ops", employeeNumber: "7" },
  meta: { resourceType: "User", created: "2020-01-01T00:00:00Z", lastModified: "2020-01-01T00:00:00Z" },
};

describe("projectResource (RFC 7644 §3.4.2.5, §3.9)", () => {
  it("returns everything but password by default", () => {
    const out = projectResource(user);
    expect(out).not.toHaveProperty("password");
    expect(out.emails).toEqual(user.emails);
  });

  it("always returns id and schemas with attributes", () => {
    expect(projectResource(user, { attributes: ["userName"] })).toEqual({
      schemas: [CORE, ENT],
      id: "u1",
      userName: "bjensen",
    });
  });

  it("never returns password, even when asked", () => {
    expect(projectResource(user, { attributes: ["password"] })).toEqual({ schemas: [CORE, ENT], id: "u1" });
  });

  it("selects sub-attributes of single and multi-valued attributes", () => {
    expect(projectResource(user, { attributes: ["name.givenName", "emails.value"] })).toEqual({
      schemas: [CORE, ENT],
      id: "u1",
      name: { givenName: "Barbara" },
      emails: [{ value: "a@x.com" }, { value: "b@x.com" }],
    });
    expect(projectResource(user, { attributes: ["emails.value", "emails.type"] }).emails).toEqual(
      user.emails,
    );
  });

  it("selects URN-prefixed names and whole extensions", () => {
    expect(projectResource(user, { attributes: [`${ENT}:department`] })[ENT]).toEqual({ department: "Ops" });
    expect(projectResource(user, { attributes: [ENT] })[ENT]).toEqual(user[ENT]);
    expect(projectResource(user, { attributes: [`${CORE}:userName`] }).userName).toBe("bjensen");
  });

  it("matches names case-insensitively and splits comma-separated lists", () => {
    expect(projectResource(user, { attributes: "USERNAME, Name.GivenName" })).toEqual({
      schemas: [CORE, ENT],
      id: "u1",
      userName: "bjensen",
      name: { givenName: "Barbara" },
    });
  });

  it("excludes attributes, sub-attributes and extension attributes", () => {
    const out = projectResource(user, {
      excludedAttributes: ["emails.type", "name", `${ENT.toUpperCase()}:DEPARTMENT`, "meta"],
    });
    expect(out).toEqual({
      schemas: [CORE, ENT],
      id: "u1",
      userName: "bjensen",
      emails: [{ value: "a@x.com" }, { value: "b@x.com" }],
      [ENT]: { employeeNumber: "7" },
    });
  });

  it("cannot exclude id or schemas", () => {
    const out = projectResource(user, { excludedAttributes: ["id", "schemas"] });
    expect(out.id).toBe("u1");
    expect(out.schemas).toEqual([CORE, ENT]);
  });

  it("excludedAttributes=members drops a group's members", () => {
    const group: JsonObject = { schemas: ["g"], id: "g1", displayName: "A", members: [{ value: "u1" }] };
    expect(projectResource(group, { excludedAttributes: ["members"] })).toEqual({
      schemas: ["g"],
      id: "g1",
      displayName: "A",
    });
  });

  it("leaves out what excluding every sub-attribute or every extension attribute empties", () => {
    const out = projectResource(user, {
      excludedAttributes: [
        "name.givenName",
        "name.familyName",
        "emails.value",
        "emails.type",
        `${ENT}:department`,
        `${ENT}:employeeNumber`,
      ],
    });
    expect(out).not.toHaveProperty("name");
    expect(out).not.toHaveProperty("emails");
    expect(out).not.toHaveProperty(ENT);
    expect(out.userName).toBe("bjensen");
    // Elements that keep something stay, in their order; only emptied ones go.
    const mixed: JsonObject = { ...user, emails: [{ value: "a@x.com", type: "work" }, { type: "home" }] };
    expect(projectResource(mixed, { excludedAttributes: ["emails.type"] }).emails).toEqual([
      { value: "a@x.com" },
    ]);
  });

  it("does not change its input", () => {
    const input = structuredClone(user);
    projectResource(input, { excludedAttributes: ["emails.type", `${ENT}:department`] });
    expect(input).toEqual(user);
  });
});
